// npm run bench:drive-times: the search with `travel_mode` routed by pgRouting, against the plain
// search, in one run. The road network is a generated grid (bench/road-grid.mjs, 224 streets a side:
// 99,904 ways, 50,176 vertices, about 112 km square) loaded by scripts/load-roads.sh into the
// machine's PostgreSQL (PGHOST etc., default 127.0.0.1:5432 as postgres); STORES stores (default
// 10,000) lie at random on it, in a MySQL database of their own (BENCH_DATABASE_URL, as npm run
// bench). Two processes of the built service route on it (ROUTER=pgrouting):
//
//   - `first search`: ROUTER_CACHE_SECONDS=0, so every search asks the engine, as a search from a new
//     place does;
//   - `repeated search` and `plain search`: with the cache, from the same four places (every
//     search after the warm-up a cache hit), and the same searches without travel_mode.
//
// Each scenario runs DURATION seconds (default 10) with CONNECTIONS connections (default 32; the
// first search 4, its engine's pool), ROUNDS times (default 2), alternating. The engine's outcomes
// are read from each process's metrics (plant_store_router_requests_total), so that a run that fell
// back to the straight line says so. ROUTER_TIMEOUT_MS is the default 800.
//
// DRIVE_COMPARE=<commit> builds that commit in a git worktree and runs its two drive-time scenarios
// too, on the same roads and stores, in the same alternation: a change on the drive-time path
// measured against the one before it, as `this / commit` req/s per round.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ROOT, checkoutCommit, cli, fmt, freePort, freshDatabase, load, startProcess } from './lib.mjs';

const STORES = Number(process.env.STORES ?? 10_000);
const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const GRID = 224;
const STEP = 0.005;
const PG = { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), user: process.env.PGUSER ?? 'postgres' };
const ROADS_DB = 'plantstore_bench_roads';

/** A deterministic pseudo-random sequence, so that every run has the same stores and places. */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0) / 2 ** 32;
}
const inGrid = (next) => ({ lat: 39 + 0.05 + next() * (GRID - 1 - 20) * STEP, lng: -100 + 0.05 + next() * (GRID - 1 - 20) * STEP });

async function roadsDatabase() {
  const admin = new pg.Client({ ...PG, database: 'postgres' });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${ROADS_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${ROADS_DB}`);
  await admin.end();
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-roads-'));
  const osm = join(dir, 'grid.osm');
  execFileSync(process.execPath, [`${ROOT}bench/road-grid.mjs`, String(GRID), osm]);
  const url = `postgres://${PG.user}@${PG.host}:${PG.port}/${ROADS_DB}`;
  const started = Date.now();
  const out = execFileSync(`${ROOT}scripts/load-roads.sh`, [osm, url], { encoding: 'utf8' });
  return { url, loaded: out.trim().split('\n').at(-1), loadSeconds: (Date.now() - started) / 1000 };
}

async function storesDatabase(env) {
  const url = await freshDatabase('drive');
  const next = random(42);
  const header = 'code,name,address,city,state,zip,lat,lng,monday,tuesday,wednesday,thursday,friday,saturday,sunday';
  const week = Array(7).fill('9:00 AM - 8:00 PM').join(',');
  const rows = Array.from({ length: STORES }, (_, i) => {
    const { lat, lng } = inGrid(next);
    return `D${i},Grid Store ${i},${i} Grid Street,McCook,NE,69001,${lat.toFixed(6)},${lng.toFixed(6)},${week}`;
  });
  const file = join(mkdtempSync(join(tmpdir(), 'plant-store-drive-')), 'stores.csv');
  writeFileSync(file, [header, ...rows].join('\n') + '\n');
  await cli({ ...env, DATABASE_URL: url }, 'locations', 'import', file);
  const token = await cli({ ...env, DATABASE_URL: url }, 'tokens', 'create', '--team', 'bench');
  return { url, token };
}

/** The router's outcomes so far, from the process's metrics. */
async function outcomes(metricsUrl) {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const counts = {};
  for (const [, outcome, value] of text.matchAll(/^plant_store_router_requests_total\{[^}]*outcome="(\w+)"[^}]*\} (\d+)/gm)) counts[outcome] = Number(value);
  return counts;
}
const minus = (after, before) => Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));

const roads = await roadsDatabase();
const env = {
  NODE_ENV: 'production',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  ROUTER: 'pgrouting',
  ROUTER_DATABASE_URL: roads.url,
};
const stores = await storesDatabase(env);
const headers = { authorization: `Bearer ${stores.token}`, 'content-type': 'application/json' };
const logDir = mkdtempSync(join(tmpdir(), 'plant-store-drive-logs-'));
const start = async (root, extra, name) => {
  const metricsPort = await freePort();
  const service = await startProcess(
    `${root}dist/main.js`,
    { ...env, ...extra, DATABASE_URL: stores.url, METRICS_PORT: String(metricsPort) },
    { logFile: join(logDir, `${name}.log`) },
  );
  return { ...service, metricsUrl: `http://127.0.0.1:${metricsPort}` };
};
const services = { uncached: await start(ROOT, { ROUTER_CACHE_SECONDS: '0' }, 'uncached'), cached: await start(ROOT, {}, 'cached') };
let commit;
if (process.env.DRIVE_COMPARE) {
  commit = execFileSync('git', ['rev-parse', '--verify', `${process.env.DRIVE_COMPARE}^{commit}`], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .slice(0, 7);
  const dir = checkoutCommit(commit);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  services.uncachedBefore = await start(`${dir}/`, { ROUTER_CACHE_SECONDS: '0' }, 'uncached-before');
  services.cachedBefore = await start(`${dir}/`, {}, 'cached-before');
}

const places = random(7);
const body = (point, travel) => JSON.stringify({ customer_address: { zip: '69001', ...point }, max_distance: 5, ...(travel && { travel_mode: 'driving' }) });
/** Many places for the first searches (each asks the engine anyway), four for the repeated ones. */
const many = Array.from({ length: 500 }, () => inGrid(places));
const four = many.slice(0, 4);
const scenarios = [
  { name: 'first search (travel_mode, no cache)', service: 'uncached', connections: Math.min(4, CONNECTIONS), points: many, travel: true },
  { name: 'repeated search (travel_mode, cached)', service: 'cached', connections: CONNECTIONS, points: four, travel: true },
  { name: 'plain search (same places, no travel_mode)', service: 'cached', connections: CONNECTIONS, points: four, travel: false },
];
if (commit)
  scenarios.push(
    { ...scenarios[0], name: `first search, ${commit}`, service: 'uncachedBefore', before: 0 },
    { ...scenarios[1], name: `repeated search, ${commit}`, service: 'cachedBefore', before: 1 },
  );
// One of each first: the cache holds the four places' legs, and the header says the engine answered.
for (const service of [services.cached, services.cachedBefore].filter(Boolean))
  for (const point of four) {
    const res = await fetch(`${service.url}/locations/nearest`, { method: 'POST', headers, body: body(point, true) });
    const answer = await res.json();
    console.log(
      `warm-up: ${res.status} Travel-Source ${res.headers.get('travel-source')}, ${answer.locations.length} stores, first ${answer.locations[0]?.travel_time} min`,
    );
  }

const results = Object.fromEntries(scenarios.map((s) => [s.name, []]));
const engine = Object.fromEntries(scenarios.map((s) => [s.name, {}]));
for (let round = 0; round < ROUNDS; round++) {
  for (const scenario of round % 2 === 0 ? scenarios : [...scenarios].reverse()) {
    const service = services[scenario.service];
    const before = await outcomes(service.metricsUrl);
    const requests = scenario.points.map((point) => ({ method: 'POST', path: '/locations/nearest', headers, body: body(point, scenario.travel) }));
    results[scenario.name].push(await load({ url: service.url, connections: scenario.connections, duration: DURATION, requests }));
    const used = minus(await outcomes(service.metricsUrl), before);
    for (const [k, v] of Object.entries(used)) engine[scenario.name][k] = (engine[scenario.name][k] ?? 0) + v;
  }
}
for (const service of Object.values(services)) await service.stop();

const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
console.log(`\nDrive times: ${roads.loaded} (${fmt(roads.loadSeconds, 1)} s), ${STORES} stores on it; 5 mi searches, ${DURATION} s × ${ROUNDS} rounds.\n`);
console.log('| search | connections | req/s | p50 ms | p99 ms | errors | engine requests by outcome |');
console.log('|---|---:|---:|---:|---:|---:|---|');
for (const { name, connections } of scenarios) {
  const list = results[name];
  const errors = list.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
  const used = Object.entries(engine[name])
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `| ${name} | ${connections} | ${fmt(mean(list, 'rps'))} | ${fmt(mean(list, 'p50'), 1)} | ${Math.max(...list.map((r) => r.p99))} | ${errors} | ${used || 'none'} |`,
  );
}
const ratio = (a, b) =>
  `${fmt(mean(results[a], 'rps') / mean(results[b], 'rps'), 2)} (rounds: ${results[a].map((r, i) => fmt(r.rps / results[b][i].rps, 2)).join(', ')})`;
console.log(`\nrepeated / plain: ${ratio(scenarios[1].name, scenarios[2].name)}`);
for (const { name, before } of scenarios.filter((s) => s.before !== undefined))
  console.log(`${scenarios[before].name}, this / ${commit}: ${ratio(scenarios[before].name, name)}`);
