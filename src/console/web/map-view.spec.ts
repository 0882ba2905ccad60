import { centreOn, CLUSTER_CELL, ClusterGrid, clampView, clusterLabel, clusterZoom, HOME, MAX_ZOOM, zoomAbout } from './map-view.js';

// The store map's zoom, pan and clustering, without a canvas: screen = base * k + (tx, ty).
describe('console: the store map’s view', () => {
  const W = 800;
  const H = 500;

  it('zooms about a point, which stays where it was on screen', () => {
    const view = zoomAbout(HOME, 4, 600, 150, W, H);
    expect(view.k).toBe(4);
    // The base point under (600, 150) at k = 1 is (600, 150); after the zoom it is still there.
    expect(600 * view.k + view.tx).toBeCloseTo(600);
    expect(150 * view.k + view.ty).toBeCloseTo(150);
    expect(zoomAbout(view, 0.25, 10, 10, W, H)).toEqual(HOME);
  });

  it('keeps the zoom within its limits and the map over the whole canvas', () => {
    expect(zoomAbout(HOME, 0.5, 400, 250, W, H)).toEqual(HOME);
    expect(zoomAbout(HOME, 1e6, 400, 250, W, H).k).toBe(MAX_ZOOM);
    // No panning the country away: at k = 1 nothing moves; deeper, up to the map's edges.
    expect(clampView({ k: 1, tx: 50, ty: -50 }, W, H)).toEqual(HOME);
    expect(clampView({ k: 2, tx: 50, ty: -900 }, W, H)).toEqual({ k: 2, tx: 0, ty: -500 });
  });

  it('centres a box, and zooms into a cluster at least twice as deep', () => {
    const view = centreOn(100, 100, 110, 104, 8, W, H);
    expect(105 * view.k + view.tx).toBeCloseTo(W / 2);
    expect(102 * view.k + view.ty).toBeCloseTo(H / 2);
    expect(clusterZoom(100, 100, 110, 104, 1, W, H)).toBeCloseTo(40);
    expect(clusterZoom(100, 100, 100, 100, 3, W, H)).toBe(MAX_ZOOM);
    expect(clusterZoom(0, 0, 800, 500, 3, W, H)).toBe(6);
  });

  it('labels clusters in digits, then thousands', () => {
    expect([2, 999, 1000, 12_345, 100_000].map(clusterLabel)).toEqual(['2', '999', '1k', '12k', '100k']);
  });

  it('groups stores that share a grid cell on screen, and splits them as the zoom grows', () => {
    // Three stores a base pixel apart, one far away, one off the map.
    const x = Float32Array.from([100, 101, 100.5, 600, NaN]);
    const y = Float32Array.from([100, 100.5, 101, 300, NaN]);
    const grid = new ClusterGrid();
    grid.build(x, y, HOME, W, H);
    expect({ clusters: grid.clusters, singles: grid.singles }).toEqual({ clusters: 1, singles: 1 });
    const cell = grid.cellOf(100, 100);
    expect(grid.count[cell]).toBe(3);
    expect(grid.sumX[cell] / 3).toBeCloseTo(100.5);
    expect(grid.isSingle(600, 300)).toBe(true);
    expect(grid.isSingle(100, 100)).toBe(false);

    // At k = 64 around them the three are 32 or more pixels apart, and the far one out of view.
    grid.build(x, y, centreOn(100, 100, 101, 101, 64, W, H), W, H);
    expect({ clusters: grid.clusters, singles: grid.singles }).toEqual({ clusters: 0, singles: 3 });
    expect(grid.cellOf(600, 300)).toBe(-1);
  });

  it('merges the marks of two cells side by side that would overlap (a town the grid cuts through)', () => {
    // Two stores 0.2 pixels apart across a cell border, two far apart in cells side by side.
    const x = Float32Array.from([CLUSTER_CELL - 0.1, CLUSTER_CELL + 0.1, 100, 100 + CLUSTER_CELL * 1.9]);
    const y = Float32Array.from([40, 40, 200, 200]);
    const grid = new ClusterGrid();
    grid.build(x, y, HOME, W, H);
    expect({ clusters: grid.clusters, singles: grid.singles }).toEqual({ clusters: 1, singles: 2 });
    expect(grid.markOf(x[0], y[0])).toBe(grid.markOf(x[1], y[1]));
    expect(grid.count[grid.markOf(x[1], y[1])]).toBe(2);
    expect([grid.isSingle(x[1], y[1]), grid.isSingle(x[2], y[2]), grid.isSingle(x[3], y[3])]).toEqual([false, true, true]);
  });

  it('anchors the grid to the map: a pan moves clusters, it does not regroup them', () => {
    const x = Float32Array.from({ length: 200 }, (_, n) => 300 + (n % 20) * 0.37);
    const y = Float32Array.from({ length: 200 }, (_, n) => 200 + Math.floor(n / 20) * 0.41);
    const grid = new ClusterGrid();
    const counts = (tx: number, ty: number) => {
      grid.build(x, y, { k: 8, tx, ty }, W, H);
      return Array.from(x, (_, n) => grid.count[grid.cellOf(x[n], y[n])]);
    };
    expect(counts(-2000, -1400)).toEqual(counts(-2000 - CLUSTER_CELL * 0.3, -1400 + 7));
  });

  it('draws every store on its own at the deepest zoom', () => {
    const grid = new ClusterGrid();
    grid.build(Float32Array.from([100, 100]), Float32Array.from([100, 100]), centreOn(100, 100, 100, 100, MAX_ZOOM, W, H), W, H);
    expect({ clustered: grid.clustered, singles: grid.singles, clusters: grid.clusters }).toEqual({ clustered: false, singles: 2, clusters: 0 });
  });
});
