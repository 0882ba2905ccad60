import { geoAlbersUsaTerritories } from 'd3-composite-projections';
import { geoCircle, geoPath, type GeoProjection } from 'd3-geo';
import type { Feature } from 'geojson';
import { feature, mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import statesTopology from 'us-atlas/states-10m.json';
import { EARTH_RADIUS_MILES } from '../../shared/great-circle.js';
import { centreOn, CLUSTER_CELL, ClusterGrid, clusterLabel, clusterRadius, clusterZoom, clampView, HOME, type View, zoomAbout } from './map-view.js';

// State outlines of us-atlas, projected in the browser with Albers USA plus the territories
// (Alaska, Hawaii, Puerto Rico, the Virgin Islands, Guam, the Northern Marianas, American Samoa
// in insets), so that every store of every US state or territory has a place. Nothing is
// fetched: the outlines are in the bundle.
const topology = statesTopology as unknown as Topology<{ states: GeometryCollection; nation: GeometryCollection }>;
const STATES = feature(topology, topology.objects.states);
const BORDERS = mesh(topology, topology.objects.states, (a, b) => a !== b);
/** Hover and click find the nearest dot within this many CSS pixels. */
const PICK_RADIUS = 6;
/** The hover grid's cells, in base pixels (at k = 1; PICK_RADIUS / k is never more). */
const CELL = 8;
/** A press that moves less than this many CSS pixels is a click, not a drag. */
const DRAG_SLOP = 4;
/** One step of the keyboard and the zoom buttons; arrow keys pan by this part of the canvas. */
const ZOOM_STEP = 2;
const PAN_STEP = 0.15;
const DOT = '#1f6f43';
const CLUSTER = '#24507a';

/**
 * The view outlives the map: the Stores view (and with it this map) is unmounted when another
 * tab of the console is shown, and a map created again starts where the last one was. Kept as
 * a zoom and a centre in parts of the canvas, so that a canvas of another size keeps the place.
 */
let lastView: { k: number; cx: number; cy: number } | undefined;

export interface StorePoints {
  codes: string[];
  lat: Float64Array;
  lng: Float64Array;
}

export interface Circle {
  lat: number;
  lng: number;
  miles: number;
}

/** A cluster under the pointer: its grid cell and how many stores it holds. */
export interface ClusterMark {
  cell: number;
  count: number;
}

/**
 * Every store on a canvas that zooms and pans (wheel, drag, pinch, keyboard): a store alone in
 * its 16-pixel cell of the screen is a dot, several are one numbered circle that comes apart as
 * the map zooms in (a click on it zooms in on its stores). Stores are projected once at the base
 * scale; each frame only scales and shifts them, and draws at most once per animation frame.
 * A second canvas on top holds what changes often (the search circle, the highlighted stores,
 * the hovered one). The base canvas carries, for tests and the status line, the number of stores
 * placed on the map in `data-drawn` (those without a place in `data-off-map`), the zoom in
 * `data-zoom`, and the clusters and lone dots of the last frame in `data-clusters` and
 * `data-singles`, and the view (k, tx, ty) in `data-view`.
 */
export class StoreMap {
  private projection: GeoProjection = geoAlbersUsaTerritories();
  private stores: StorePoints = { codes: [], lat: new Float64Array(0), lng: new Float64Array(0) };
  /** Projected CSS-pixel positions at the base scale (k = 1), NaN for a store off the map. */
  private x = new Float32Array(0);
  private y = new Float32Array(0);
  private cells = new Int32Array(0);
  private cellStart = new Int32Array(1);
  private columns = 0;
  private rows = 0;
  private width = 0;
  private height = 0;
  private view: View = HOME;
  private readonly grid = new ClusterGrid();
  /** The view the grid was built for (rebuilt before a pick when the view moved since). */
  private gridView?: View;
  /** The outlines at the base scale, drawn at any zoom through the canvas transform. */
  private statesPath = new Path2D();
  private bordersPath = new Path2D();
  private circle?: Circle;
  private positions?: { customer: { lat: number; lng: number }; zip: { lat: number; lng: number } };
  private highlighted: ReadonlyArray<{ lat: string | number; lng: string | number }> = [];
  private hovered = -1;
  private frame = 0;
  private framesMeasured = 0;
  private readonly observer: ResizeObserver;
  private readonly pointers = new Map<number, { x: number; y: number }>();
  private pressedAt?: { x: number; y: number };
  private dragged = false;
  /** Called when the view moves (the tooltip of a hovered store no longer sits on its dot). */
  onViewChange?: () => void;

  constructor(
    private readonly base: HTMLCanvasElement,
    private readonly overlay: HTMLCanvasElement,
  ) {
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(base.parentElement ?? base);
    this.resize();
    base.addEventListener('wheel', this.wheel, { passive: false });
    base.addEventListener('pointerdown', this.pointerDown);
    base.addEventListener('pointermove', this.pointerMove);
    base.addEventListener('pointerup', this.pointerUp);
    base.addEventListener('pointercancel', this.pointerUp);
    base.addEventListener('click', this.click);
    base.addEventListener('keydown', this.key);
  }

  destroy(): void {
    this.observer.disconnect();
    cancelAnimationFrame(this.frame);
    this.base.removeEventListener('wheel', this.wheel);
    this.base.removeEventListener('pointerdown', this.pointerDown);
    this.base.removeEventListener('pointermove', this.pointerMove);
    this.base.removeEventListener('pointerup', this.pointerUp);
    this.base.removeEventListener('pointercancel', this.pointerUp);
    this.base.removeEventListener('click', this.click);
    this.base.removeEventListener('keydown', this.key);
  }

  setStores(stores: StorePoints): void {
    this.stores = stores;
    this.highlighted = [];
    this.hovered = -1;
    this.layout();
    this.draw();
    performance.mark('console:map-drawn');
  }

  /** The search circle, or none. */
  setCircle(circle: Circle | undefined): void {
    this.circle = circle;
    this.drawOverlay();
  }

  /**
   * The two points of a search: where it measured from (the customer, a filled diamond) and the
   * ZIP code's point (a hollow square), which differ when the street address was geocoded. Their
   * coordinates are also on the canvas (`data-customer`, `data-zip-point`) for tests.
   */
  setPositions(positions: { customer: { lat: number; lng: number }; zip: { lat: number; lng: number } } | undefined): void {
    this.positions = positions;
    if (positions) {
      this.base.dataset.customer = `${positions.customer.lat},${positions.customer.lng}`;
      this.base.dataset.zipPoint = `${positions.zip.lat},${positions.zip.lng}`;
    } else {
      delete this.base.dataset.customer;
      delete this.base.dataset.zipPoint;
    }
    this.drawOverlay();
  }

  /** Points drawn larger (the search's answer: its locations carry no code, only their place). */
  setHighlighted(points: ReadonlyArray<{ lat: string | number; lng: string | number }>): void {
    this.highlighted = points;
    this.drawOverlay();
  }

  setHovered(store: number): void {
    if (store === this.hovered) return;
    this.hovered = store;
    this.drawOverlay();
  }

  /** The store drawn as its own dot under a CSS-pixel position of the canvas, or -1. */
  storeAt(px: number, py: number): number {
    if (this.columns === 0) return -1;
    const grid = this.currentGrid();
    const { k, tx, ty } = this.view;
    // The hover grid is in base pixels: look around the point the pointer is over at k = 1.
    const bx = (px - tx) / k;
    const by = (py - ty) / k;
    let best = -1;
    let bestDistance = PICK_RADIUS * PICK_RADIUS;
    const cx = Math.floor(bx / CELL);
    const cy = Math.floor(by / CELL);
    for (let row = Math.max(0, cy - 1); row <= Math.min(this.rows - 1, cy + 1); row++) {
      for (let column = Math.max(0, cx - 1); column <= Math.min(this.columns - 1, cx + 1); column++) {
        const cell = row * this.columns + column;
        for (let i = this.cellStart[cell]; i < this.cellStart[cell + 1]; i++) {
          const n = this.cells[i];
          const distance = ((this.x[n] - bx) * k) ** 2 + ((this.y[n] - by) * k) ** 2;
          if (distance <= bestDistance && grid.isSingle(this.x[n], this.y[n])) {
            best = n;
            bestDistance = distance;
          }
        }
      }
    }
    return best;
  }

  /** The cluster drawn under a CSS-pixel position of the canvas, if any. */
  clusterAt(px: number, py: number): ClusterMark | undefined {
    const grid = this.currentGrid();
    if (!grid.clustered) return undefined;
    const { tx, ty } = this.view;
    // A cluster is drawn at its members' mean, inside its cell or the neighbour merged into it:
    // the cells two around the pointer's hold every cluster whose circle can reach it.
    const column = Math.floor((px - tx) / CLUSTER_CELL) - grid.column0;
    const row = Math.floor((py - ty) / CLUSTER_CELL) - grid.row0;
    let found: ClusterMark | undefined;
    let bestDistance = Infinity;
    for (let r = Math.max(0, row - 2); r <= Math.min(grid.rows - 1, row + 2); r++) {
      for (let c = Math.max(0, column - 2); c <= Math.min(grid.columns - 1, column + 2); c++) {
        const cell = r * grid.columns + c;
        const count = grid.count[cell];
        if (count < 2) continue;
        const distance = (grid.sumX[cell] / count + tx - px) ** 2 + (grid.sumY[cell] / count + ty - py) ** 2;
        if (distance <= clusterRadius(count) ** 2 && distance < bestDistance) {
          found = { cell, count };
          bestDistance = distance;
        }
      }
    }
    return found;
  }

  /** Zooms in on a cluster's stores: their box fitted into the canvas, at least twice as deep. */
  zoomToCluster(cluster: ClusterMark): void {
    const grid = this.currentGrid();
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    for (let n = 0; n < this.x.length; n++) {
      if (grid.markOf(this.x[n], this.y[n]) !== cluster.cell) continue;
      x0 = Math.min(x0, this.x[n]);
      y0 = Math.min(y0, this.y[n]);
      x1 = Math.max(x1, this.x[n]);
      y1 = Math.max(y1, this.y[n]);
    }
    if (x0 > x1) return;
    this.setView(centreOn(x0, y0, x1, y1, clusterZoom(x0, y0, x1, y1, this.view.k, this.width, this.height), this.width, this.height));
  }

  /** Zoom by a factor about the canvas's centre (the buttons and the keyboard). */
  zoomBy(factor: number): void {
    this.setView(zoomAbout(this.view, factor, this.width / 2, this.height / 2, this.width, this.height));
  }

  /** Back to the whole country. */
  reset(): void {
    this.setView(HOME);
  }

  code(store: number): string {
    return this.stores.codes[store];
  }

  private setView(view: View): void {
    const next = clampView(view, this.width, this.height);
    if (next.k === this.view.k && next.tx === this.view.tx && next.ty === this.view.ty) return;
    this.view = next;
    lastView = { k: next.k, cx: (this.width / 2 - next.tx) / next.k / this.width, cy: (this.height / 2 - next.ty) / next.k / this.height };
    this.onViewChange?.();
    this.requestDraw();
  }

  /** At most one draw per animation frame, however many wheel or pointer events came in it. */
  private requestDraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private currentGrid(): ClusterGrid {
    if (this.gridView !== this.view) {
      this.grid.build(this.x, this.y, this.view, this.width, this.height);
      this.gridView = this.view;
    }
    return this.grid;
  }

  /** The pointer's position in CSS pixels of the canvas. */
  private at(event: { clientX: number; clientY: number }): { x: number; y: number } {
    const box = this.base.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  private readonly wheel = (event: WheelEvent): void => {
    event.preventDefault();
    const { x, y } = this.at(event);
    // Lines and pages to pixels; a trackpad's pinch comes as a wheel with ctrlKey and small deltas.
    const delta = event.deltaY * (event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? this.height : 1);
    this.setView(zoomAbout(this.view, Math.exp(-delta * (event.ctrlKey ? 0.01 : 0.002)), x, y, this.width, this.height));
  };

  private readonly pointerDown = (event: PointerEvent): void => {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    this.base.setPointerCapture(event.pointerId);
    this.pointers.set(event.pointerId, this.at(event));
    if (this.pointers.size === 1) {
      this.pressedAt = this.at(event);
      this.dragged = false;
    }
  };

  private readonly pointerMove = (event: PointerEvent): void => {
    const last = this.pointers.get(event.pointerId);
    const now = this.at(event);
    if (!last) {
      this.base.style.cursor = this.clusterAt(now.x, now.y) ? 'pointer' : 'grab';
      return;
    }
    if (this.pressedAt && Math.hypot(now.x - this.pressedAt.x, now.y - this.pressedAt.y) > DRAG_SLOP) this.dragged = true;
    if (this.pointers.size === 2) {
      // A pinch: zoom by the change of the two fingers' distance about their middle, and pan
      // with the middle.
      const [other] = [...this.pointers].filter(([id]) => id !== event.pointerId).map(([, p]) => p);
      const before = Math.hypot(last.x - other.x, last.y - other.y);
      const after = Math.hypot(now.x - other.x, now.y - other.y);
      const middle = { x: (now.x + other.x) / 2, y: (now.y + other.y) / 2 };
      const moved = { k: this.view.k, tx: this.view.tx + (now.x - last.x) / 2, ty: this.view.ty + (now.y - last.y) / 2 };
      this.setView(before > 0 ? zoomAbout(moved, after / before, middle.x, middle.y, this.width, this.height) : moved);
    } else if (this.dragged) {
      this.base.style.cursor = 'grabbing';
      this.setView({ k: this.view.k, tx: this.view.tx + now.x - last.x, ty: this.view.ty + now.y - last.y });
    }
    this.pointers.set(event.pointerId, now);
  };

  private readonly pointerUp = (event: PointerEvent): void => {
    this.pointers.delete(event.pointerId);
    if (this.pointers.size === 0) this.base.style.cursor = 'grab';
  };

  /** A click after a drag is not a click; a click on a cluster zooms in on it (and goes no further). */
  private readonly click = (event: MouseEvent): void => {
    if (this.dragged) {
      this.dragged = false;
      event.stopPropagation();
      return;
    }
    const { x, y } = this.at(event);
    const cluster = this.clusterAt(x, y);
    if (!cluster) return;
    event.stopPropagation();
    this.zoomToCluster(cluster);
  };

  private readonly key = (event: KeyboardEvent): void => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const pan = (dx: number, dy: number) =>
      this.setView({ k: this.view.k, tx: this.view.tx + dx * this.width * PAN_STEP, ty: this.view.ty + dy * this.height * PAN_STEP });
    switch (event.key) {
      case '+':
      case '=':
        this.zoomBy(ZOOM_STEP);
        break;
      case '-':
      case '_':
        this.zoomBy(1 / ZOOM_STEP);
        break;
      case '0':
      case 'Home':
        this.reset();
        break;
      case 'ArrowLeft':
        pan(1, 0);
        break;
      case 'ArrowRight':
        pan(-1, 0);
        break;
      case 'ArrowUp':
        pan(0, 1);
        break;
      case 'ArrowDown':
        pan(0, -1);
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  private resize(): void {
    const width = Math.max(320, Math.round(this.base.parentElement?.clientWidth ?? 960));
    const height = Math.round((width * 610) / 975);
    if (width === this.width && height === this.height) return;
    this.width = width;
    this.height = height;
    const ratio = window.devicePixelRatio || 1;
    for (const canvas of [this.base, this.overlay]) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
    }
    this.projection = geoAlbersUsaTerritories().fitExtent(
      [
        [4, 4],
        [width - 4, height - 4],
      ],
      STATES,
    );
    // The outlines as paths at the base scale, once: each frame only transforms them.
    this.statesPath = this.pathOf(STATES);
    this.bordersPath = this.pathOf(BORDERS);
    const kept = lastView;
    this.view = kept ? clampView({ k: kept.k, tx: width / 2 - kept.cx * width * kept.k, ty: height / 2 - kept.cy * height * kept.k }, width, height) : HOME;
    this.layout();
    this.draw();
  }

  /** A GeoJSON object projected at the base scale into a Path2D (which lacks only beginPath to be d3's context). */
  private pathOf(object: Parameters<ReturnType<typeof geoPath>>[0]): Path2D {
    const path = new Path2D();
    geoPath(this.projection, Object.assign(path, { beginPath() {} }))(object);
    return path;
  }

  /** Projects every store and sorts them into grid cells (a counting sort: no object per store). */
  private layout(): void {
    const { lat, lng } = this.stores;
    const count = lat.length;
    this.x = new Float32Array(count);
    this.y = new Float32Array(count);
    this.columns = Math.ceil(this.width / CELL);
    this.rows = Math.ceil(this.height / CELL);
    const cellOf = new Int32Array(count);
    const counts = new Int32Array(this.columns * this.rows + 1);
    let offMap = 0;
    for (let n = 0; n < count; n++) {
      const point = this.projection([lng[n], lat[n]]);
      if (!point || point[0] < 0 || point[1] < 0 || point[0] >= this.width || point[1] >= this.height) {
        this.x[n] = this.y[n] = NaN;
        cellOf[n] = -1;
        offMap++;
        continue;
      }
      this.x[n] = point[0];
      this.y[n] = point[1];
      cellOf[n] = Math.floor(point[1] / CELL) * this.columns + Math.floor(point[0] / CELL);
      counts[cellOf[n] + 1]++;
    }
    for (let cell = 1; cell < counts.length; cell++) counts[cell] += counts[cell - 1];
    this.cellStart = counts.slice();
    this.cells = new Int32Array(count - offMap);
    for (let n = 0; n < count; n++) if (cellOf[n] >= 0) this.cells[counts[cellOf[n]]++] = n;
    this.gridView = undefined;
    this.base.dataset.drawn = String(count - offMap);
    this.base.dataset.offMap = String(offMap);
  }

  private draw(): void {
    const started = performance.now();
    const ratio = window.devicePixelRatio || 1;
    const { k, tx, ty } = this.view;
    const context = this.base.getContext('2d')!;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, this.width, this.height);
    // The outlines through the canvas transform; line widths divided by k stay the same on screen.
    context.setTransform(ratio * k, 0, 0, ratio * k, ratio * tx, ratio * ty);
    context.fillStyle = '#f3f1ea';
    context.fill(this.statesPath);
    context.strokeStyle = '#b5b0a1';
    context.lineWidth = 0.6 / k;
    context.stroke(this.bordersPath);
    context.setTransform(ratio, 0, 0, ratio, 0, 0);

    const grid = this.currentGrid();
    const { count, first, sumX, sumY } = grid;
    const cells = grid.columns * grid.rows;
    // Clusters first, then the lone dots on top, so that a cluster's circle never hides a store.
    if (grid.clustered && grid.clusters > 0) {
      context.beginPath();
      for (let cell = 0; cell < cells; cell++) {
        const n = count[cell];
        if (n < 2) continue;
        const cx = sumX[cell] / n + tx;
        const cy = sumY[cell] / n + ty;
        const radius = clusterRadius(n);
        context.moveTo(cx + radius, cy);
        context.arc(cx, cy, radius, 0, 2 * Math.PI);
      }
      context.fillStyle = CLUSTER;
      context.fill();
      context.strokeStyle = '#fff';
      context.lineWidth = 1;
      context.stroke();
      context.fillStyle = '#fff';
      context.font = 'bold 9px system-ui, sans-serif';
      context.textAlign = 'center';
      context.textBaseline = 'middle';
      for (let cell = 0; cell < cells; cell++) {
        const n = count[cell];
        if (n >= 2) context.fillText(clusterLabel(n), sumX[cell] / n + tx, sumY[cell] / n + ty + 0.5);
      }
    }
    // 2-pixel squares for the whole country, a little larger once few are in view.
    const size = k < 4 ? 2 : k < 16 ? 3 : 4;
    const half = size / 2;
    context.beginPath();
    if (grid.clustered) {
      for (let cell = 0; cell < cells; cell++) {
        if (count[cell] !== 1) continue;
        const n = first[cell];
        context.rect(this.x[n] * k + tx - half, this.y[n] * k + ty - half, size, size);
      }
    } else {
      for (let n = 0; n < this.x.length; n++)
        if (grid.cellOf(this.x[n], this.y[n]) >= 0) context.rect(this.x[n] * k + tx - half, this.y[n] * k + ty - half, size, size);
    }
    context.fillStyle = DOT;
    context.fill();
    this.base.dataset.zoom = String(Math.round(k * 1000) / 1000);
    this.base.dataset.view = `${k} ${tx} ${ty}`;
    this.base.dataset.clusters = String(grid.clustered ? grid.clusters : 0);
    this.base.dataset.singles = String(grid.singles);
    this.drawOverlay();
    // For `npm run bench:console` (a PerformanceObserver): what one frame of the map costs in
    // script and canvas calls. Cleared now and then so that a long session keeps no pile of them.
    performance.measure('console:map-frame', { start: started });
    if (++this.framesMeasured % 500 === 0) performance.clearMeasures('console:map-frame');
  }

  private drawOverlay(): void {
    const ratio = window.devicePixelRatio || 1;
    const { k, tx, ty } = this.view;
    const context = this.overlay.getContext('2d')!;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, this.width, this.height);
    if (this.circle) {
      const { lat, lng, miles } = this.circle;
      const ring: Feature = {
        type: 'Feature',
        properties: {},
        geometry: geoCircle()
          .center([lng, lat])
          .radius(((miles / EARTH_RADIUS_MILES) * 180) / Math.PI)(),
      };
      context.setTransform(ratio * k, 0, 0, ratio * k, ratio * tx, ratio * ty);
      context.beginPath();
      geoPath(this.projection, context)(ring);
      context.fillStyle = 'rgba(180, 83, 9, 0.12)';
      context.fill();
      context.strokeStyle = '#b45309';
      context.lineWidth = 1.5 / k;
      context.stroke();
      context.setTransform(ratio, 0, 0, ratio, 0, 0);
    }
    context.fillStyle = '#b45309';
    for (const { lat, lng } of this.highlighted) {
      const point = this.projection([Number(lng), Number(lat)]);
      if (!point) continue;
      context.beginPath();
      context.arc(point[0] * k + tx, point[1] * k + ty, 3.5, 0, 2 * Math.PI);
      context.fill();
    }
    if (this.positions) {
      const zip = this.projection([this.positions.zip.lng, this.positions.zip.lat]);
      const customer = this.projection([this.positions.customer.lng, this.positions.customer.lat]);
      context.lineWidth = 2;
      context.strokeStyle = '#1a56db';
      if (zip) context.strokeRect(zip[0] * k + tx - 4, zip[1] * k + ty - 4, 8, 8);
      if (customer) {
        const [x, y] = [customer[0] * k + tx, customer[1] * k + ty];
        context.beginPath();
        context.moveTo(x, y - 6);
        context.lineTo(x + 6, y);
        context.lineTo(x, y + 6);
        context.lineTo(x - 6, y);
        context.closePath();
        context.fillStyle = '#1a56db';
        context.fill();
      }
    }
    if (this.hovered >= 0 && this.x[this.hovered] === this.x[this.hovered]) {
      context.beginPath();
      context.arc(this.x[this.hovered] * k + tx, this.y[this.hovered] * k + ty, 6, 0, 2 * Math.PI);
      context.strokeStyle = '#111';
      context.lineWidth = 2;
      context.stroke();
    }
  }
}
