import { readFileSync } from 'node:fs';
import { Injectable } from '@nestjs/common';
import type { Point } from './geo.js';

/**
 * Offline ZIP → point look-up from `assets/zip-points.csv`, packaged with the service:
 * Census ZCTA points first, then USPS points for ZIPs without a ZCTA (PO-box and
 * single-company ZIPs). No request ever leaves the machine (contract §4).
 */
export const ZIP_POINTS_FILE = new URL('../../assets/zip-points.csv', import.meta.url);

/** `12345`, `12345-6789` or `123456789`, ASCII digits only (after trimming). */
export const ZIP_PATTERN = /^[0-9]{5}(?:-?[0-9]{4})?$/;

@Injectable()
export class ZipGeocoder {
  private readonly points = new Map<string, Point>();

  constructor() {
    const lines = readFileSync(ZIP_POINTS_FILE, 'utf8').split('\n');
    for (const line of lines.slice(1)) {
      if (!line) continue;
      const [zip, lat, lng] = line.split(',');
      this.points.set(zip, { lat: Number(lat), lng: Number(lng) });
    }
  }

  get size(): number {
    return this.points.size;
  }

  /** The five-digit ZIP of a well-formed ZIP (or ZIP+4), or null. */
  static normalize(zip: string): string | null {
    const trimmed = zip.trim();
    return ZIP_PATTERN.test(trimmed) ? trimmed.slice(0, 5) : null;
  }

  lookup(zip5: string): Point | undefined {
    return this.points.get(zip5);
  }
}
