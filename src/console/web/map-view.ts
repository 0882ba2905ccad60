// The store map's zoom, pan and clustering as plain arithmetic (no DOM), so that unit specs can
// run it in Node. Stores are projected once, at the base scale that fits the map to the canvas;
// a view then places them on screen as `screen = base * k + (tx, ty)`, so zooming and panning
// never project anything again.

/** Scale `k` and offset `(tx, ty)` in CSS pixels: screen = base * k + (tx, ty). */
export interface View {
  k: number;
  tx: number;
  ty: number;
}

export const MIN_ZOOM = 1;
/** Deep enough that the stores of one Manhattan block come apart (a base pixel is about 3 miles). */
export const MAX_ZOOM = 512;
/** Stores whose screen positions fall in one cell of this many CSS pixels are drawn as one cluster. */
export const CLUSTER_CELL = 16;

export const HOME: View = { k: 1, tx: 0, ty: 0 };
const NEIGHBOURS_AFTER = [
  [1, 0],
  [-1, 1],
  [0, 1],
  [1, 1],
] as const;

/**
 * The view kept inside the map: the zoom between the limits, and the offset such that the map
 * (width x height at k = 1) always covers the canvas, so that one cannot pan the country away.
 */
export function clampView(view: View, width: number, height: number): View {
  const k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, view.k));
  const tx = Math.min(0, Math.max(width * (1 - k), view.tx));
  const ty = Math.min(0, Math.max(height * (1 - k), view.ty));
  return { k, tx, ty };
}

/** Zoom by `factor` keeping the point under (px, py) where it is (the cursor, a pinch's centre). */
export function zoomAbout(view: View, factor: number, px: number, py: number, width: number, height: number): View {
  const k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, view.k * factor));
  const ratio = k / view.k;
  return clampView({ k, tx: px - (px - view.tx) * ratio, ty: py - (py - view.ty) * ratio }, width, height);
}

/** The view that shows the base-pixel box [x0, x1] x [y0, y1] centred, at `k` (clamped). */
export function centreOn(x0: number, y0: number, x1: number, y1: number, k: number, width: number, height: number): View {
  const zoom = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));
  return clampView({ k: zoom, tx: width / 2 - ((x0 + x1) / 2) * zoom, ty: height / 2 - ((y0 + y1) / 2) * zoom }, width, height);
}

/**
 * The zoom that brings a cluster's members apart: their box fitted into half the canvas, and at
 * least twice the zoom of now (members on one point have no box to fit).
 */
export function clusterZoom(x0: number, y0: number, x1: number, y1: number, k: number, width: number, height: number): number {
  const fit = Math.min(width / Math.max(x1 - x0, 1e-9), height / Math.max(y1 - y0, 1e-9)) / 2;
  return Math.min(MAX_ZOOM, Math.max(k * 2, fit));
}

/** A cluster's count as drawn on it: 2 … 999, then 1k … 100k. */
export function clusterLabel(count: number): string {
  return count < 1000 ? String(count) : `${Math.round(count / 1000)}k`;
}

/**
 * A cluster's radius in CSS pixels: larger with more stores, up to half a cell, so that the
 * circles of neighbouring cells overlap little and their counts stay readable.
 */
export function clusterRadius(count: number): number {
  return Math.min(CLUSTER_CELL / 2, 5 + 0.75 * Math.log2(count));
}

/** The radius a mark takes on screen: a dot's half-width, or a cluster's circle. */
const markRadius = (count: number) => (count === 1 ? 2 : clusterRadius(count));

/**
 * The marks of one frame: the stores in view sorted into a screen grid of CLUSTER_CELL pixels,
 * anchored to the map (cell = floor(base * k / CLUSTER_CELL)), not to the canvas, so that a pan
 * moves the clusters with the map instead of regrouping them. A cell holding one store draws that
 * store; a cell holding more draws one cluster at their mean position. A grid cuts through a
 * town, though: two cells side by side whose marks would overlap are then merged into one (once,
 * into the earlier cell in reading order, its "owner"). Only cells that touch the canvas are
 * counted. The arrays are reused from frame to frame (no allocation per store).
 */
export class ClusterGrid {
  columns = 0;
  rows = 0;
  /** Map-anchored index of the grid's first column and row. */
  column0 = 0;
  row0 = 0;
  k = 1;
  /** Per cell: how many stores, the first of them, the sum of their screen positions. */
  count = new Int32Array(0);
  first = new Int32Array(0);
  /** The cell whose mark holds this cell's stores: itself, or the neighbour it was merged into. */
  owner = new Int32Array(0);
  sumX = new Float64Array(0);
  sumY = new Float64Array(0);
  /** Cells with two or more stores, and how many stores are drawn on their own. */
  clusters = 0;
  singles = 0;
  /** False at the deepest zoom: every store then gets its own dot, whatever its neighbours. */
  clustered = true;

  /** Sorts the stores at (x, y) (base pixels, NaN off the map) into the grid of `view`. */
  build(x: Float32Array, y: Float32Array, view: View, width: number, height: number): void {
    const { k, tx, ty } = view;
    this.k = k;
    this.clustered = k < MAX_ZOOM;
    this.column0 = Math.floor(-tx / CLUSTER_CELL);
    this.row0 = Math.floor(-ty / CLUSTER_CELL);
    this.columns = Math.floor((width - tx) / CLUSTER_CELL) - this.column0 + 1;
    this.rows = Math.floor((height - ty) / CLUSTER_CELL) - this.row0 + 1;
    const cells = this.columns * this.rows;
    if (this.count.length < cells) {
      this.count = new Int32Array(cells);
      this.first = new Int32Array(cells);
      this.owner = new Int32Array(cells);
      this.sumX = new Float64Array(cells);
      this.sumY = new Float64Array(cells);
    } else {
      this.count.fill(0, 0, cells);
    }
    const { count, first, sumX, sumY, columns, rows, column0, row0 } = this;
    for (let n = 0; n < x.length; n++) {
      const sx = x[n] * k;
      const sy = y[n] * k;
      // NaN (a store off the map) fails both comparisons below and is left out.
      const column = Math.floor(sx / CLUSTER_CELL) - column0;
      const row = Math.floor(sy / CLUSTER_CELL) - row0;
      if (!(column >= 0 && column < columns && row >= 0 && row < rows)) continue;
      const cell = row * columns + column;
      if (count[cell]++ === 0) {
        first[cell] = n;
        sumX[cell] = sx;
        sumY[cell] = sy;
      } else {
        sumX[cell] += sx;
        sumY[cell] += sy;
      }
    }
    const { owner } = this;
    for (let cell = 0; cell < cells; cell++) owner[cell] = cell;
    if (this.clustered) {
      for (let row = 0; row < rows; row++) {
        for (let column = 0; column < columns; column++) {
          const cell = row * columns + column;
          if (count[cell] === 0 || owner[cell] !== cell) continue;
          // The neighbours after this cell in reading order: right, and the three below.
          for (const [dc, dr] of NEIGHBOURS_AFTER) {
            const c = column + dc;
            const r = row + dr;
            if (c < 0 || c >= columns || r >= rows) continue;
            const other = r * columns + c;
            if (count[other] === 0 || owner[other] !== other) continue;
            const reach = markRadius(count[cell]) + markRadius(count[other]);
            const dx = sumX[cell] / count[cell] - sumX[other] / count[other];
            const dy = sumY[cell] / count[cell] - sumY[other] / count[other];
            if (dx * dx + dy * dy >= reach * reach) continue;
            count[cell] += count[other];
            sumX[cell] += sumX[other];
            sumY[cell] += sumY[other];
            count[other] = 0;
            owner[other] = cell;
          }
        }
      }
    }
    let clusters = 0;
    let singles = 0;
    for (let cell = 0; cell < cells; cell++) {
      if (count[cell] === 1 || (!this.clustered && count[cell] > 0)) singles += count[cell];
      else if (count[cell] > 1) clusters++;
    }
    this.clusters = clusters;
    this.singles = singles;
  }

  /** The grid cell of a store at base (x, y), or -1 outside the grid. */
  cellOf(x: number, y: number): number {
    const column = Math.floor((x * this.k) / CLUSTER_CELL) - this.column0;
    const row = Math.floor((y * this.k) / CLUSTER_CELL) - this.row0;
    return column >= 0 && column < this.columns && row >= 0 && row < this.rows ? row * this.columns + column : -1;
  }

  /** The cell whose mark holds a store at base (x, y) (its cluster, after merging), or -1. */
  markOf(x: number, y: number): number {
    const cell = this.cellOf(x, y);
    return cell < 0 ? -1 : this.owner[cell];
  }

  /** Whether a store at base (x, y) is drawn as its own dot in this frame. */
  isSingle(x: number, y: number): boolean {
    const mark = this.markOf(x, y);
    return mark >= 0 && (!this.clustered || this.count[mark] === 1);
  }
}
