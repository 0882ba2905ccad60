// npm run bench:index-bytes — what each store costs the search's index (its snapshot), at 1,000,
// 10,000 and 100,000 synthetic stores (scripts/make-synthetic-stores.mjs, with their time zones),
// built in this process by the built service's buildSnapshot (dist/, or BENCH_ROOT's: another
// build's checkout, e.g. a `git worktree` of the commit before, built, to compare in one run).
//
// Two figures per size: the bytes the snapshot's buffers and typed arrays hold, counted exactly
// by walking it (every ArrayBuffer once: the stores' JSON, the weeks of hours, the names and codes,
// the k-d trees, the points, the orders, the region groups), and the JavaScript heap it keeps
// (the heap in use after a full collection with the snapshot, less that after dropping it: the schedules, the
// region maps, the typed arrays' own objects); and the array buffers in use when the build returns,
// before any collection: the snapshot and what the build made and let go of on the way (its
// transient, held beside the snapshot still serving while an index loads again). Bytes only, no timings: the same for the same
// build and stores on any machine. Run with `node --expose-gc`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { ROOT, fmt } from './lib.mjs';

const gc = globalThis.gc;
if (typeof gc !== 'function') throw new Error('run with node --expose-gc (npm run bench:index-bytes does)');
const BUILD = process.env.BENCH_ROOT ? `${process.env.BENCH_ROOT.replace(/\/$/, '')}/` : ROOT;
const SIZES = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const { buildSnapshot } = await import(`${BUILD}dist/locations/store-snapshot.js`);
const { zoneOf } = await import(`${BUILD}dist/geo/time-zones.js`);

/** Every ArrayBuffer reachable from `value` through objects, arrays, maps and typed arrays, each counted once. */
function bufferBytes(value, seen = new Set()) {
  if (value === null || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  if (ArrayBuffer.isView(value)) {
    if (seen.has(value.buffer)) return 0;
    seen.add(value.buffer);
    return value.buffer.byteLength;
  }
  if (value instanceof ArrayBuffer) return value.byteLength;
  let bytes = 0;
  const children = value instanceof Map ? [...value.keys(), ...value.values()] : Object.values(value);
  for (const child of children) bytes += bufferBytes(child, seen);
  return bytes;
}

const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const dir = mkdtempSync(join(tmpdir(), 'plant-store-index-bytes-'));
const rows = [];
try {
  for (const size of SIZES) {
    const file = join(dir, `stores-${size}.csv`);
    execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(size), file], { stdio: 'ignore' });
    const stores = parse(readFileSync(file, 'utf8'), { columns: true }).map((row) => ({
      ...row,
      lat: Number(row.lat),
      lng: Number(row.lng),
      time_zone: zoneOf({ lat: Number(row.lat), lng: Number(row.lng) }),
      special_hours: '',
      temporarily_closed: '',
    }));
    const pages = [];
    for (let i = 0; i < stores.length; i += 2000) pages.push(stores.slice(i, i + 2000));
    heapUsed();
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    let snapshot = await buildSnapshot(1, pages, []);
    // What the build left in array buffers before any collection: the snapshot, and what it let go of but is not freed yet.
    const transient = process.memoryUsage().arrayBuffers - arrayBuffersBefore;
    const buffers = bufferBytes(snapshot);
    const withIt = heapUsed();
    snapshot = undefined;
    rows.push({ size, buffers, heap: withIt - heapUsed(), transient });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\nthe search index's snapshot, build ${BUILD}\n`);
console.log(
  '| stores | buffers and typed arrays | bytes a store | JavaScript heap kept | bytes a store | both, bytes a store | array buffers at the end of the build, before a collection |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const { size, buffers, heap, transient } of rows)
  console.log(
    `| ${fmt(size)} | ${fmt(buffers / 1024 / 1024, 2)} MiB | ${fmt(buffers / size)} | ${fmt(heap / 1024 / 1024, 2)} MiB | ${fmt(heap / size)} | ${fmt((buffers + heap) / size)} | ${fmt(transient / 1024 / 1024, 2)} MiB |`,
  );
