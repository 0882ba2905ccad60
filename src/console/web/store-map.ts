import { geoAlbersUsaTerritories } from 'd3-composite-projections';
import { geoCircle, geoPath, type GeoProjection } from 'd3-geo';
import type { Feature } from 'geojson';
import { feature, mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import statesTopology from 'us-atlas/states-10m.json';

// State outlines of us-atlas, projected in the browser with Albers USA plus the territories
// (Alaska, Hawaii, Puerto Rico, the Virgin Islands, Guam, the Northern Marianas, American Samoa
// in insets), so that every store of every US state or territory has a place. Nothing is
// fetched: the outlines are in the bundle.
const topology = statesTopology as unknown as Topology<{ states: GeometryCollection; nation: GeometryCollection }>;
const STATES = feature(topology, topology.objects.states);
const BORDERS = mesh(topology, topology.objects.states, (a, b) => a !== b);
const EARTH_RADIUS_MILES = 3958.8;
/** Hover and click find the nearest dot within this many CSS pixels. */
const PICK_RADIUS = 6;
const CELL = 8;

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

/**
 * Every store as a dot on a canvas: one path of 2-pixel squares, so that 100,000 stores draw in
 * tens of milliseconds, and a grid of projected points for hover and click. A second canvas on
 * top holds what changes often (the search circle, the highlighted stores, the hovered one).
 * The base canvas carries the number of stores drawn in `data-drawn` (and those without a
 * place on the map in `data-off-map`), for tests and for the status line.
 */
export class StoreMap {
  private projection: GeoProjection = geoAlbersUsaTerritories();
  private stores: StorePoints = { codes: [], lat: new Float64Array(0), lng: new Float64Array(0) };
  /** Projected CSS-pixel positions, NaN for a store off the map. */
  private x = new Float32Array(0);
  private y = new Float32Array(0);
  private cells = new Int32Array(0);
  private cellStart = new Int32Array(1);
  private columns = 0;
  private rows = 0;
  private width = 0;
  private height = 0;
  private circle?: Circle;
  private highlighted: ReadonlyArray<{ lat: string | number; lng: string | number }> = [];
  private hovered = -1;
  private readonly observer: ResizeObserver;

  constructor(
    private readonly base: HTMLCanvasElement,
    private readonly overlay: HTMLCanvasElement,
  ) {
    this.observer = new ResizeObserver(() => this.resize());
    this.observer.observe(base.parentElement ?? base);
    this.resize();
  }

  destroy(): void {
    this.observer.disconnect();
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

  /** The store under a CSS-pixel position of the canvas, or -1. */
  storeAt(px: number, py: number): number {
    if (this.columns === 0) return -1;
    let best = -1;
    let bestDistance = PICK_RADIUS * PICK_RADIUS;
    const cx = Math.floor(px / CELL);
    const cy = Math.floor(py / CELL);
    for (let row = Math.max(0, cy - 1); row <= Math.min(this.rows - 1, cy + 1); row++) {
      for (let column = Math.max(0, cx - 1); column <= Math.min(this.columns - 1, cx + 1); column++) {
        const cell = row * this.columns + column;
        for (let i = this.cellStart[cell]; i < this.cellStart[cell + 1]; i++) {
          const n = this.cells[i];
          const distance = (this.x[n] - px) ** 2 + (this.y[n] - py) ** 2;
          if (distance <= bestDistance) {
            best = n;
            bestDistance = distance;
          }
        }
      }
    }
    return best;
  }

  code(store: number): string {
    return this.stores.codes[store];
  }

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
      canvas.getContext('2d')!.setTransform(ratio, 0, 0, ratio, 0, 0);
    }
    this.projection = geoAlbersUsaTerritories().fitExtent(
      [
        [4, 4],
        [width - 4, height - 4],
      ],
      STATES,
    );
    this.layout();
    this.draw();
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
    this.base.dataset.drawn = String(count - offMap);
    this.base.dataset.offMap = String(offMap);
  }

  private draw(): void {
    const context = this.base.getContext('2d')!;
    context.clearRect(0, 0, this.width, this.height);
    const path = geoPath(this.projection, context);
    context.beginPath();
    path(STATES);
    context.fillStyle = '#f3f1ea';
    context.fill();
    context.beginPath();
    path(BORDERS);
    context.strokeStyle = '#b5b0a1';
    context.lineWidth = 0.6;
    context.stroke();
    context.beginPath();
    for (let n = 0; n < this.x.length; n++) if (this.x[n] === this.x[n]) context.rect(this.x[n] - 1, this.y[n] - 1, 2, 2);
    context.fillStyle = '#1f6f43';
    context.fill();
    this.drawOverlay();
  }

  private drawOverlay(): void {
    const context = this.overlay.getContext('2d')!;
    context.clearRect(0, 0, this.width, this.height);
    if (this.circle) {
      const { lat, lng, miles } = this.circle;
      const ring: Feature = { type: 'Feature', properties: {}, geometry: geoCircle().center([lng, lat]).radius(((miles / EARTH_RADIUS_MILES) * 180) / Math.PI)() };
      context.beginPath();
      geoPath(this.projection, context)(ring);
      context.fillStyle = 'rgba(180, 83, 9, 0.12)';
      context.fill();
      context.strokeStyle = '#b45309';
      context.lineWidth = 1.5;
      context.stroke();
    }
    context.fillStyle = '#b45309';
    for (const { lat, lng } of this.highlighted) {
      const point = this.projection([Number(lng), Number(lat)]);
      if (!point) continue;
      context.beginPath();
      context.arc(point[0], point[1], 3.5, 0, 2 * Math.PI);
      context.fill();
    }
    if (this.hovered >= 0 && this.x[this.hovered] === this.x[this.hovered]) {
      context.beginPath();
      context.arc(this.x[this.hovered], this.y[this.hovered], 6, 0, 2 * Math.PI);
      context.strokeStyle = '#111';
      context.lineWidth = 2;
      context.stroke();
    }
  }
}
