// Opening hours and time zones, in process: how many stores a second each part handles.
//
//   npm run bench:hours            (builds first; STORES=100000 ROUNDS=21 by default)
//
// Makes STORES synthetic stores spread like the population (scripts/make-synthetic-stores.mjs),
// then times, on the built code:
// - zoneOf for every store, in the file's order (metro by metro), cold and again, then shuffled,
//   and the heap it keeps afterwards;
// - weeklyHours (parsing the seven day strings once per store);
// - openingState for 10,000 of them at instants that matter (a weekday noon, a night, the two
//   daylight-saving Sundays of 2026 in the US), ROUNDS times each: the work of a search with
//   `open_at` over 10,000 stores in range.
// Numbers only; nothing asserts on them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';

const ROOT = new URL('..', import.meta.url).pathname;
const STORES = Number(process.env.STORES ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 21);
const { zoneOf } = await import(`${ROOT}dist/geo/time-zones.js`);
const { openingState, weeklyHours } = await import(`${ROOT}dist/shared/opening-hours.js`);

const file = `/tmp/plant-store-hours-bench-${STORES}.csv`;
execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), file], { stdio: 'ignore' });
const stores = parse(readFileSync(file), { columns: true });
const perSecond = (count, ms) => Math.round((count / ms) * 1000).toLocaleString('en-US');
const heapMb = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1e6;
};

const heapBefore = heapMb();
let started = performance.now();
const zones = stores.map((store) => zoneOf({ lat: Number(store.lat), lng: Number(store.lng) }));
const cold = performance.now() - started;
started = performance.now();
for (const store of stores) zoneOf({ lat: Number(store.lat), lng: Number(store.lng) });
const warm = performance.now() - started;
// The same points shuffled: an import in no particular order makes the most cells of the map be read again.
let seed = 1;
const shuffled = [...stores];
for (let i = shuffled.length - 1; i > 0; i--) {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  const j = seed % (i + 1);
  [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
}
started = performance.now();
for (const store of shuffled) zoneOf({ lat: Number(store.lat), lng: Number(store.lng) });
const mixed = performance.now() - started;
const kept = heapMb() - heapBefore;
const byZone = new Map();
for (const zone of zones) byZone.set(zone, (byZone.get(zone) ?? 0) + 1);
console.log(
  `zoneOf, ${STORES.toLocaleString('en-US')} stores: ${cold.toFixed(0)} ms first (${perSecond(STORES, cold)}/s, geo-tz loaded on the way), ${warm.toFixed(0)} ms again (${perSecond(STORES, warm)}/s), ${mixed.toFixed(0)} ms shuffled (${perSecond(STORES, mixed)}/s); heap kept ${globalThis.gc ? `${kept.toFixed(1)} MB` : '(run with --expose-gc)'}; ${byZone.size} zones`,
);

started = performance.now();
const weeks = stores.map((store) => weeklyHours(store));
const parsing = performance.now() - started;
console.log(`weeklyHours, ${STORES.toLocaleString('en-US')} stores: ${parsing.toFixed(0)} ms (${perSecond(STORES, parsing)}/s)`);

const sample = Math.min(10_000, STORES);
const instants = {
  'Wednesday 2026-06-17 noon Eastern': Date.parse('2026-06-17T16:00:00Z'),
  'Wednesday 2026-06-17 11 PM Eastern': Date.parse('2026-06-18T03:00:00Z'),
  'Sunday 2026-03-08 3 AM Eastern (spring forward)': Date.parse('2026-03-08T07:00:00Z'),
  'Sunday 2026-11-01 1:30 AM EST (fall back)': Date.parse('2026-11-01T06:30:00Z'),
};
for (const [name, at] of Object.entries(instants)) {
  const times = [];
  let open = 0;
  for (let round = 0; round < ROUNDS; round++) {
    started = performance.now();
    open = 0;
    for (let i = 0; i < sample; i++) if (openingState(weeks[i], zones[i], at).open) open++;
    times.push(performance.now() - started);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(
    `openingState, ${sample.toLocaleString('en-US')} stores, ${name}: median ${median.toFixed(1)} ms (${perSecond(sample, median)} stores/s; first round ${times[0].toFixed(1)} ms); ${open} open`,
  );
}
