// npm run bench:floor: how close can any server built on the service's stack get to the
// baseline? Drives GET /plants?limit=20 (32 connections, DURATION s, ROUNDS rounds, servers
// alternating) against the baseline (node:http + mysql2: token look-up and page query), the
// floors of bench/floor-servers.mjs and the service itself. The floors answer the same body
// with nothing but their layer: from memory, or (the -db ones) with one query on a plain
// mysql2 pool. A floor's ratio bounds the service from above: whatever the service does on
// top of that layer only lowers it. The Fastify rows show what Nest's other adapter would allow.
//
// The service also answers its two searches (5 and 50 mi around ZIP 10001, as npm run bench)
// on STORES synthetic stores (default 100,000), right after its list in each round: a search
// reads no database, so the goal set for it is the floor's list itself (the last column: each
// row against nest-passport-db, the NestJS + passport + one query floor), measured in the
// same minutes as the floor.
//
// FLOOR_SERVERS (comma list of names, e.g. `nest-passport-db`) runs only those floors (the
// baseline always runs: the ratios need it). SERVICE_VARIANTS runs the service in several node
// flag set-ups side by side, `name=flags` separated by `;` (default `service=--max-old-space-size=256`,
// as npm start and the image run it), e.g. `256=--max-old-space-size=256;none=`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOOR_TOKEN, PRODUCTION_HEAP_FLAGS, ROOT, fmt, freshDatabase, load, seedStoresAndPlants, startProcess } from './lib.mjs';

const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const STORES = Number(process.env.STORES ?? 100_000);

execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const DATABASE_URL = await freshDatabase('floor');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' };
console.error(`seeding ${STORES} stores and 1000 plants…`);
// team0's 1,000 plants, the rows the floors answer from as well.
const {
  tokens: [token],
} = await seedStoresAndPlants(env, { stores: STORES, teams: 1, plantsPerTeam: 1000 });

const floor = (name, adapter = 'express') => ({
  name: adapter === 'express' ? name : `${name} on ${adapter}`,
  script: `${ROOT}bench/floor-servers.mjs`,
  env: { FLOOR: name, ADAPTER: adapter, FLOOR_TOKEN, DATABASE_URL },
  token: FLOOR_TOKEN,
});
const FLOORS = [
  floor('http'),
  floor('express'),
  floor('nest'),
  floor('nest-passport'),
  floor('nest-passport-db'),
  // Not part of the service's stack: what the same floor does on Nest's other HTTP adapter.
  floor('nest-passport', 'fastify'),
  floor('nest-passport-db', 'fastify'),
];
const only = process.env.FLOOR_SERVERS?.split(',').map((name) => name.trim());
const serviceVariants = (process.env.SERVICE_VARIANTS ?? `service=${PRODUCTION_HEAP_FLAGS}`).split(';').map((spec) => {
  const [name, flags = ''] = spec.split(/=(.*)/s);
  return { name: name.trim(), nodeArgs: flags.split(' ').filter(Boolean) };
});
const logDir = mkdtempSync(join(tmpdir(), 'plant-store-floor-'));
const servers = [
  { name: 'baseline (node:http + mysql2)', script: `${ROOT}bench/baseline.mjs`, env: { DATABASE_URL }, token },
  ...FLOORS.filter((f) => !only || only.includes(f.name)),
  // As in production: one log line per request, into a file.
  ...serviceVariants.map(({ name, nodeArgs }) => ({
    name,
    script: `${ROOT}dist/main.js`,
    env,
    token,
    nodeArgs,
    logFile: join(logDir, `${name}.log`),
    searches: true,
  })),
];
const SEARCHES = [5, 50].map((miles) => ({ name: `search ${miles} mi`, body: JSON.stringify({ customer_address: { zip: '10001' }, max_distance: miles }) }));
const searchRow = (server, search) => `${server.name}: ${search.name}`;
const runs = new Map(servers.flatMap((s) => [[s.name, []], ...(s.searches ? SEARCHES.map((search) => [searchRow(s, search), []]) : [])]));
const measure = async (name, options) => {
  const result = await load(options);
  if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  return result;
};
let expected;
for (let round = 0; round < ROUNDS; round++) {
  for (const server of servers) {
    console.error(`round ${round + 1}: ${server.name}…`);
    const process_ = await startProcess(server.script, server.env, { logFile: server.logFile, nodeArgs: server.nodeArgs });
    const headers = { authorization: `Bearer ${server.token}` };
    // Every server must answer the very body the baseline does, or the comparison means nothing.
    const body = await fetch(`${process_.url}/plants?limit=20`, { headers }).then((r) => r.text());
    expected ??= body;
    if (JSON.stringify(JSON.parse(body)) !== JSON.stringify(JSON.parse(expected))) throw new Error(`${server.name} answers ${body}, not ${expected}`);
    const result = await measure(server.name, { url: process_.url, duration: DURATION, path: '/plants?limit=20', headers });
    runs.get(server.name).push({ ...result, rssMb: process_.rssMb() });
    if (server.searches)
      for (const search of SEARCHES) {
        const options = { url: process_.url, duration: DURATION, method: 'POST', path: '/locations/nearest', body: search.body };
        const searched = await measure(searchRow(server, search), { ...options, headers: { ...headers, 'content-type': 'application/json' } });
        runs.get(searchRow(server, search)).push({ ...searched, rssMb: process_.rssMb() });
      }
    await process_.stop();
  }
}
const mean = (list, f) => list.reduce((sum, r) => sum + f(r), 0) / list.length;
const baselineRps = mean(runs.get(servers[0].name), (r) => r.rps);
const floorRuns = runs.get('nest-passport-db');
const floorRps = floorRuns ? mean(floorRuns, (r) => r.rps) : NaN;
console.log(
  `\nGET /plants?limit=20 (the service's searches: POST /locations/nearest, ${STORES} stores), 32 connections, ${ROUNDS} × ${DURATION} s per server and request (alternating; mean req/s, worst p99). Floors answer from memory, the -db ones from MySQL; the last column is against nest-passport-db.\n`,
);
console.log('| server | req/s | p99 ms | RSS MB | / baseline | / floor |\n|---|---:|---:|---:|---:|---:|');
for (const [name, list] of runs) {
  const rps = mean(list, (r) => r.rps);
  console.log(
    `| ${name} | ${fmt(rps)} | ${fmt(Math.max(...list.map((r) => r.p99)))} | ${fmt(Math.max(...list.map((r) => r.rssMb)))} | ${fmt(rps / baselineRps, 2)} | ${fmt(rps / floorRps, 2)} |`,
  );
}
