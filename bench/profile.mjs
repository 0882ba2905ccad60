// npm run bench:profile — where a request's CPU time goes, layer by layer: a CPU profile of the
// service under one scenario's load, cut into the layers a request crosses (bench/profile-layers.mjs).
//
// Seeds a MySQL database (BENCH_DATABASE_URL, as npm run bench: `<name>_profile`) with STORES
// synthetic stores (default 100,000) and 10,000 plants, or uses SEEDED_DATABASE_URL, a database
// another bench seeded (a token is made for it). Starts the built service as in production:
// NODE_ENV=production, one log line per request into a file, metrics on (the request-duration
// histogram), the abuse limits on (their counting runs on every request; the token's limit is
// raised so that the load is never refused). Warms up for 3 s, then profiles (bench/cpu-probe.mjs)
// DURATION seconds (default 20) of PROFILE_SCENARIO (a name prefix of npm run bench's scenarios,
// default `POST /locations/nearest 5 mi`) at 32 connections, and prints the layers with their
// share of the busy samples and their µs per request. The profile is kept (its path is printed)
// for Chrome's DevTools or speedscope.
//
// PROFILE_KIND=heap takes V8's sampling heap profile instead: the bytes each layer allocates per
// request (what the garbage collector then spends its time on). PROFILE_FLOOR=<name> profiles a
// floor of bench/floor-servers.mjs (e.g. nest-passport-db, the NestJS + passport + one query
// floor of npm run bench:floor) under the same load on the same database instead of the service,
// so that the two tables side by side say which layers the service adds and what they cost; the
// floors answer GET /plants?limit=20 only, so the scenario is that one.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLOOR_TOKEN, ROOT, cli, freePort, freshDatabase, seedStoresAndPlants, startProcess } from './lib.mjs';
import { benchScenarios } from './scenarios.mjs';

const DURATION = Number(process.env.DURATION ?? 20);
const STORES = Number(process.env.STORES ?? 100_000);
const FLOOR = process.env.PROFILE_FLOOR;
const SCENARIO = FLOOR ? 'GET /plants' : (process.env.PROFILE_SCENARIO ?? 'POST /locations/nearest 5 mi');
const KIND = process.env.PROFILE_KIND === 'heap' ? 'heap' : 'cpu';

const DATABASE_URL = process.env.SEEDED_DATABASE_URL ?? (await freshDatabase('profile'));
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '100000000', METRICS_PORT: String(await freePort()) };
let tokens;
if (process.env.SEEDED_DATABASE_URL) tokens = [await cli(env, 'tokens', 'create', '--team', 'team0')];
else {
  console.error(`seeding ${STORES} stores and 10000 plants…`);
  ({ tokens } = await seedStoresAndPlants(env, { stores: STORES, teams: 10, plantsPerTeam: 1000 }));
}
if (FLOOR) tokens = [FLOOR_TOKEN];
const scenario = benchScenarios({ tokens, duration: DURATION }).find((s) => s.name.startsWith(SCENARIO));
if (!scenario) throw new Error(`no scenario named ${SCENARIO}…`);
const warmUp = benchScenarios({ tokens, duration: 3 }).find((s) => s.name === scenario.name);

const work = mkdtempSync(join(tmpdir(), 'plant-store-profile-'));
const probe = ['--import', `${ROOT}bench/cpu-probe.mjs`];
const service = FLOOR
  ? await startProcess(
      `${ROOT}bench/floor-servers.mjs`,
      { FLOOR, ADAPTER: 'express', FLOOR_TOKEN, DATABASE_URL, CPU_PROBE_DIR: work, PROBE_KIND: KIND },
      { nodeArgs: probe },
    )
  : await startProcess(
      `${ROOT}dist/main.js`,
      { ...env, CPU_PROBE_DIR: work, PROBE_KIND: KIND },
      { logFile: join(work, 'service.log'), nodeArgs: [...probe, '--import', `${ROOT}dist/instrumentation.js`] },
    );
console.error(`warming up (3 s), then profiling (${KIND}) ${FLOOR ? `the ${FLOOR} floor's` : "the service's"} ${scenario.name} for ${DURATION} s…`);
await warmUp.run(service.url);
process.kill(service.pid, 'SIGUSR2');
const run = await scenario.run(service.url);
process.kill(service.pid, 'SIGUSR2');
const file = join(work, `${service.pid}.${KIND === 'heap' ? 'heapprofile' : 'cpuprofile'}`);
for (let i = 0; i < 600 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
await new Promise((r) => setTimeout(r, 500));
await service.stop();
console.log(
  `${scenario.name}: ${run.total} requests in ${DURATION} s (${Math.round(run.rps)} req/s, p99 ${run.p99} ms, ${run.errors + run.non2xx} errors or unexpected statuses); load average ${execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ')}`,
);
execFileSync(process.execPath, [`${ROOT}bench/profile-layers.mjs`, file, String(run.total)], { stdio: 'inherit' });
