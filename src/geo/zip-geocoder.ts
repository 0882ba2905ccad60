import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import type { Point } from '../shared/great-circle.js';

/**
 * Offline ZIP → point look-up from `assets/zip-points.csv`, packaged with the service:
 * Census ZCTA points first, then USPS points for ZIPs without a ZCTA (PO-box and
 * single-company ZIPs). No request ever leaves the machine (contract §4).
 */
export const ZIP_POINTS_FILE = new URL('../../assets/zip-points.csv', import.meta.url);

/** `12345`, `12345-6789` or `123456789`, ASCII digits only (after trimming). */
export const ZIP_PATTERN = /^[0-9]{5}(?:-?[0-9]{4})?$/;

/**
 * The points sit in one typed array indexed by the ZIP's number (latitude at 2n, longitude
 * at 2n + 1, NaN for a ZIP no source knows): 1.6 MB outside the garbage collector's reach
 * instead of some 42,000 map entries and objects it would walk on every full collection.
 */
@Injectable()
export class ZipGeocoder {
  private readonly points = new Float64Array(2 * 100_000).fill(NaN);

  constructor() {
    const lines = readFileSync(ZIP_POINTS_FILE, 'utf8').split('\n');
    for (const line of lines.slice(1)) {
      if (!line) continue;
      const [zip, lat, lng] = line.split(',');
      this.points[2 * Number(zip)] = Number(lat);
      this.points[2 * Number(zip) + 1] = Number(lng);
    }
  }

  /** The point of a five-digit ZIP, or undefined. */
  lookup(zip5: string): Point | undefined {
    if (!/^[0-9]{5}$/.test(zip5)) return undefined;
    const n = Number(zip5);
    const lat = this.points[2 * n];
    return Number.isNaN(lat) ? undefined : { lat, lng: this.points[2 * n + 1] };
  }
}
