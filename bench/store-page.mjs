// npm run bench:store-page: a store's page (GET /locations/{code}) against the plain search
// (POST /locations/nearest, ZIP 10001, 5 mi) on one service process, on MySQL with STORES synthetic
// stores (default 100,000), as in production (NODE_ENV=production, one log line per request into a
// file, metrics off, abuse limits off). Both are served from the same in-memory index; the page must
// answer at least as many requests a second as the search. Each of ROUNDS rounds (default 3) runs
// the four scenarios for DURATION seconds (default 10), 32 connections, in an order that turns from
// round to round, so that a machine shared with other work slows them alike; the table gives req/s,
// the CPU time per request of the service (from /proc: less moved by the machine's other work) and
// p99, and the page's ratio to the search. Scenarios: the search; the page as JSON; the page as
// JSON-LD; the page with If-None-Match of its current ETag (304, a cache revalidating).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, cpuSeconds, fmt, freshDatabase, load, seedStoresAndPlants, startProcess } from './lib.mjs';
import { STORE_PAGE_CODE } from './scenarios.mjs';

const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const STORES = Number(process.env.STORES ?? 100_000);
/** Seconds of each scenario before the rounds: the JIT's first minutes are not the service's steady state. */
const WARM_UP = 3;

console.error('building…');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
console.error(`seeding ${STORES} stores…`);
const DATABASE_URL = await freshDatabase('store_page');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0' };
const { tokens } = await seedStoresAndPlants(env, { stores: STORES, teams: 1, plantsPerTeam: 1 });
const service = await startProcess(`${ROOT}dist/main.js`, env, {
  logFile: join(mkdtempSync(join(tmpdir(), 'plant-store-bench-log-')), 'store-page.log'),
  nodeArgs: ['--import', `${ROOT}dist/instrumentation.js`],
});

const auth = { authorization: `Bearer ${tokens[0]}` };
const page = `/locations/${STORE_PAGE_CODE}`;
const first = await fetch(service.url + page, { headers: auth });
if (first.status !== 200) throw new Error(`GET ${page} answered ${first.status}: ${await first.text()}`);
const etag = first.headers.get('etag');
const scenarios = [
  {
    name: 'POST /locations/nearest 5 mi (the plain search)',
    expect: 200,
    run: (duration) =>
      load({
        url: service.url,
        duration,
        method: 'POST',
        path: '/locations/nearest',
        body: JSON.stringify({ customer_address: { zip: '10001' }, max_distance: 5 }),
        headers: { ...auth, 'content-type': 'application/json' },
      }),
  },
  { name: 'GET /locations/{code} JSON', expect: 200, run: (duration) => load({ url: service.url, duration, path: page, headers: auth }) },
  {
    name: 'GET /locations/{code} JSON-LD',
    expect: 200,
    run: (duration) => load({ url: service.url, duration, path: page, headers: { ...auth, accept: 'application/ld+json' } }),
  },
  // The ETag is the JSON's at the start; `open` changes at most at the store's next change, not within a run of seconds.
  {
    name: 'GET /locations/{code} If-None-Match (304)',
    expect: 304,
    run: (duration) => load({ url: service.url, duration, path: page, headers: { ...auth, 'if-none-match': etag } }),
  },
];

for (const s of scenarios) await s.run(WARM_UP);
const runs = new Map(scenarios.map((s) => [s, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < scenarios.length; i++) {
    const s = scenarios[(i + round) % scenarios.length];
    console.error(`running ${s.name} (round ${round + 1})…`);
    const before = cpuSeconds(service.pid);
    const r = await s.run(DURATION);
    r.cpuUs = ((cpuSeconds(service.pid) - before) / r.total) * 1e6;
    r.bad = r.errors + Object.entries(r.statusCodes).reduce((n, [code, { count }]) => n + (Number(code) === s.expect ? 0 : count), 0);
    runs.get(s).push(r);
  }
}
await service.stop();

const mean = (list, f) => list.reduce((n, r) => n + f(r), 0) / list.length;
const search = runs.get(scenarios[0]);
console.log(
  `\n${STORES} stores; 32 connections, ${ROUNDS} × ${DURATION} s per scenario, the order turning each round; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}.\n`,
);
console.log('| scenario | req/s | by round | / search | CPU µs / request | p99 ms | errors |');
console.log('|---|---:|---|---:|---:|---:|---:|');
for (const [s, list] of runs)
  console.log(
    `| ${s.name} | ${fmt(mean(list, (r) => r.rps))} | ${list.map((r) => fmt(r.rps)).join(', ')} | ${fmt(mean(list, (r) => r.rps) / mean(search, (r) => r.rps), 2)} | ${fmt(mean(list, (r) => r.cpuUs))} | ${Math.max(...list.map((r) => r.p99))} | ${list.reduce((n, r) => n + r.bad, 0)} |`,
  );
