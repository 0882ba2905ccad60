// npm run bench: the service beside a raw node:http + mysql2 baseline, on MySQL with
// 10,000 plants over 10 teams and 100,000 stores spread like the US population.
//
// Every scenario runs autocannon over loopback with 32 connections for DURATION seconds
// (default 10), ROUNDS times (default 2) alternating service and baseline: bounded in time,
// no assertion, numbers only. The service runs as in production (NODE_ENV=production, request
// log at the default level, into a file). Also cold start (process start to /health/ready
// answering 200) on the embedded default and on MySQL.
//
// BENCH_VARIANTS (comma list, default `metrics`): service set-ups started side by side and
// alternated with the baseline in every round, so that their costs are compared on the same
// minutes of a noisy machine: `metrics` (the production default: METRICS_PORT on, tracing
// off), `plain` (METRICS_PORT=0), `tracing` (metrics on, and every request traced and sent
// over OTLP/HTTP to a sink in this process), or `<name>=<path of another build's main.js>`
// (e.g. the previous commit's, built elsewhere; metrics off). BENCH_SCENARIOS (comma list of
// name prefixes) runs only those scenarios, and of the parts after them only those whose name
// starts with one of the prefixes: `geocoder: …` (the address searches, bench/geocoder.mjs),
// `search during an import`, `POST + DELETE with change events`, `open_at with special days`
// (bench/special-days.mjs), `cold start`; e.g.
// BENCH_SCENARIOS=geocoder runs the address searches alone (after the seeding).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import mysql from 'mysql2/promise';
import { ROOT, cli, fmt, freePort, freshDatabase, seedStoresAndPlants, startProcess } from './lib.mjs';
import { benchScenarios, searchDuringImport } from './scenarios.mjs';
import { describeEvents, writesWithEvents } from './events.mjs';
import { describeGeocoder, geocoderSearches } from './geocoder.mjs';
import { describeSpecialDays, specialDaysSearches } from './special-days.mjs';

const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const STORES = Number(process.env.STORES ?? 100_000);
const TEAMS = 10;
const PLANTS_PER_TEAM = 1000;
const VARIANTS = (process.env.BENCH_VARIANTS ?? 'metrics').split(',').map((v) => v.trim());
for (const v of VARIANTS)
  if (!['metrics', 'plain', 'tracing'].includes(v) && !/^[\w-]+=.+\.js$/.test(v)) throw new Error(`BENCH_VARIANTS: unknown variant ${v}`);
const SCENARIOS = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim());
const wanted = (name) => !SCENARIOS || SCENARIOS.some((prefix) => name.startsWith(prefix));

console.error('building…');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

console.error(`seeding ${STORES} stores and ${TEAMS * PLANTS_PER_TEAM} plants…`);
const DATABASE_URL = await freshDatabase('main');
// The abuse limits are switched off: the runs measure the cost of each request (a 401
// included), not how fast the limiter refuses a flood from one address or one token.
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' };
const { tokens, importSeconds } = await seedStoresAndPlants(env, { stores: STORES, teams: TEAMS, plantsPerTeam: PLANTS_PER_TEAM });

const scenarios = benchScenarios({ tokens, duration: DURATION });

const results = [];
// The OTLP receiver of the `tracing` variant: takes every export and answers an empty success.
let exportedBytes = 0;
const sink = createServer((req, res) => {
  req.on('data', (chunk) => (exportedBytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'Content-Type': req.headers['content-type'] ?? 'application/x-protobuf' }).end());
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const variantEnv = {
  metrics: async () => ({ METRICS_PORT: String(await freePort()) }),
  plain: async () => ({ METRICS_PORT: '0' }),
  tracing: async () => ({ METRICS_PORT: String(await freePort()), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.address().port}` }),
};
// The service logs as in production (LOG_LEVEL=log: one JSON line per request), into a file,
// and starts as in the image (node --import ./dist/instrumentation.js dist/main.js).
const logDir = mkdtempSync(join(tmpdir(), 'plant-store-bench-log-'));
const services = [];
for (const variant of VARIANTS) {
  const [name, main = `${ROOT}dist/main.js`] = variant.split('=');
  const instrumentation = join(dirname(main), 'instrumentation.js');
  const nodeArgs = existsSync(instrumentation) ? ['--import', instrumentation] : [];
  const p = await startProcess(main, { ...env, ...(await (variantEnv[name] ?? variantEnv.plain)()) }, { logFile: join(logDir, `${name}.log`), nodeArgs });
  services.push({ variant, ...p });
}
const baseline = await startProcess(`${ROOT}bench/baseline.mjs`, { DATABASE_URL });
/** Several runs of one scenario as one: mean req/s and p50, worst p99, errors and status counts added up. */
function combine(runs) {
  const mean = (f) => runs.reduce((sum, r) => sum + f(r), 0) / runs.length;
  const statusCodes = {};
  for (const r of runs) for (const [code, { count }] of Object.entries(r.statusCodes)) statusCodes[code] = { count: (statusCodes[code]?.count ?? 0) + count };
  return {
    rps: mean((r) => r.rps),
    p50: mean((r) => r.p50),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: mean((r) => r.errors) * runs.length,
    statusCodes,
  };
}

// The machine is shared with MariaDB and autocannon, and its speed drifts from minute to
// minute; service and baseline therefore alternate, ROUNDS times each per scenario.
let serviceRss = 0;
for (const scenario of scenarios.filter((s) => wanted(s.name))) {
  console.error(`running ${scenario.name}…`);
  const runs = { b: [], ...Object.fromEntries(VARIANTS.map((v) => [v, []])) };
  for (let round = 0; round < ROUNDS; round++) {
    // Each round in another order, so that no set-up always runs first after the baseline.
    for (let i = 0; i < services.length; i++) {
      const service = services[(i + round) % services.length];
      runs[service.variant].push(await scenario.run(service.url));
      serviceRss = Math.max(serviceRss, service.rssMb());
    }
    if (scenario.baseline) runs.b.push(await scenario.run(baseline.url));
  }
  for (const variant of VARIANTS) results.push({ scenario, variant, s: combine(runs[variant]), b: scenario.baseline ? combine(runs.b) : undefined });
}
// The address searches through the geocoder, against the ZIP-only search, on the stores as seeded.
const geocoder = await geocoderSearches({ env, token: tokens[0], duration: DURATION, rounds: ROUNDS, logDir, wanted });
// Searches while the admin API imports another 100,000-row list: every row changes.
let duringImport;
if (wanted('search during an import')) {
  const importFile = join(mkdtempSync(join(tmpdir(), 'plant-store-bench-import-')), 'stores.csv');
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), importFile, '43'], { stdio: 'ignore' });
  const adminToken = await cli(env, 'tokens', 'create', '--team', 'ops', '--scope', 'admin');
  console.error('running searches during an import…');
  duringImport = await searchDuringImport({ url: services[0].url, teamToken: tokens[0], adminToken, csvFile: importFile });
}
// Change events under load: POST + DELETE at full rate for EVENTS_SECONDS (default 60)
// with the outbox and its relay to NATS JetStream (BENCH_NATS_URL, default the machine's
// nats://127.0.0.1:4222), alternating with a service without events (bench/events.mjs).
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const EVENTS_SECONDS = Number(process.env.EVENTS_SECONDS ?? 60);
const eventsStream = `BENCH${process.pid}`;
const writes = benchScenarios({ tokens, duration: EVENTS_SECONDS, firstId: 50_000_000 }).find((s) => s.name.startsWith('POST + DELETE'));
let eventsResult;
if (wanted('POST + DELETE with change events')) {
  const eventsService = await startProcess(
    `${ROOT}dist/main.js`,
    { ...env, METRICS_PORT: '0', EVENTS_NATS_URL: natsUrl, EVENTS_STREAM: eventsStream },
    { logFile: join(logDir, 'events.log') },
  );
  const noEventsService = await startProcess(`${ROOT}dist/main.js`, { ...env, METRICS_PORT: '0' }, { logFile: join(logDir, 'no-events.log') });
  console.error('running POST + DELETE with change events on and off…');
  const counter = await mysql.createConnection(DATABASE_URL);
  const outboxRows = async () => Number((await counter.query('SELECT COUNT(*) AS n FROM event_outbox'))[0][0].n);
  eventsResult = await writesWithEvents({
    on: { url: eventsService.url, pid: eventsService.pid, writes },
    off: { url: noEventsService.url, pid: noEventsService.pid, writes },
    natsUrl,
    stream: eventsStream,
    rounds: ROUNDS,
    outboxRows,
    label: 'MySQL',
  });
  await counter.end();
  await noEventsService.stop();
  await eventsService.stop();
}
for (const service of services) await service.stop();
await baseline.stop();
// The search at a moment over special days, closures and a holiday, against the same stores without them (bench/special-days.mjs).
let specialDays;
if (wanted('open_at with special days')) {
  console.error('running open_at over special days, closures and a holiday…');
  specialDays = await specialDaysSearches({
    env: { ...env, METRICS_PORT: '0' },
    sourceUrl: DATABASE_URL,
    token: tokens[0],
    rounds: ROUNDS,
    duration: DURATION,
    logFile: (name) => join(logDir, `${name}.log`),
  });
}
sink.close();

// Cold start: an existing database (migrations already applied), process start to ready.
const dataDir = mkdtempSync(join(tmpdir(), 'plant-store-cold-'));
if (wanted('cold start')) await cli({ DATA_DIR: dataDir, DEMO_SEED: 'false' }, 'tokens', 'list');
const cold = [];
for (const [label, coldEnv] of wanted('cold start')
  ? [
      ['embedded SQLite', { DATA_DIR: dataDir, DEMO_SEED: 'false', DATABASE_URL: '' }],
      [`MySQL, ${STORES} stores`, env],
    ]
  : []) {
  const times = [];
  for (let i = 0; i < 3; i++) {
    const p = await startProcess(`${ROOT}dist/main.js`, { NODE_ENV: 'production', ...coldEnv }, { nodeArgs: ['--import', `${ROOT}dist/instrumentation.js`] });
    times.push(p.readyMs);
    await p.stop();
  }
  cold.push([label, Math.min(...times), times.sort((a, b) => a - b)[1]]);
}

const errorsOf = (r, expect) =>
  r.errors +
  Object.entries(r.statusCodes)
    .filter(([code]) => !expect.includes(Number(code)))
    .reduce((n, [, v]) => n + v.count, 0);
if (results.length) {
  console.log(
    `\n${STORES} stores, ${TEAMS * PLANTS_PER_TEAM} plants over ${TEAMS} teams; 32 connections, ${ROUNDS} × ${DURATION} s per scenario and server (alternating; mean req/s and p50, worst p99); store import took ${fmt(importSeconds, 1)} s.\n`,
  );
  const variantColumn = VARIANTS.length > 1 || VARIANTS[0] !== 'metrics';
  console.log(
    `| scenario |${variantColumn ? ' service set-up |' : ''} service req/s | p50 ms | p99 ms | errors | baseline req/s | baseline p99 ms | service / baseline |`,
  );
  console.log(`|---|${variantColumn ? '---|' : ''}---:|---:|---:|---:|---:|---:|---:|`);
  for (const { scenario, variant, s, b } of results) {
    const ratio = b ? fmt(s.rps / b.rps, 2) : '-';
    console.log(
      `| ${scenario.name} |${variantColumn ? ` ${variant.split('=')[0]} |` : ''} ${fmt(s.rps)} | ${fmt(s.p50)} | ${s.p99} | ${errorsOf(s, scenario.expect)} | ${b ? fmt(b.rps) : '-'} | ${b ? b.p99 : '-'} | ${ratio} |`,
    );
  }
  const plantsBaseline = results.find((r) => r.scenario === scenarios[0])?.b.rps;
  const searchRps = (scenario) => results.find((r) => r.scenario === scenario && r.variant === VARIANTS[0])?.s.rps;
  if (plantsBaseline && searchRps(scenarios[1]) && searchRps(scenarios[2])) {
    console.log(
      `\nSearch vs the baseline's GET /plants: 5 mi ${fmt(searchRps(scenarios[1]) / plantsBaseline, 2)}, 50 mi ${fmt(searchRps(scenarios[2]) / plantsBaseline, 2)}.`,
    );
  }
  if (VARIANTS.includes('tracing')) console.log(`The tracing set-up exported ${fmt(exportedBytes / 1e6, 1)} MB of spans to the OTLP sink.`);
  console.log(`Service RSS (max during the runs): ${fmt(serviceRss)} MB. The service logged one line per request into ${logDir}/<set-up>.log.`);
}
if (geocoder) console.log(`\n${describeGeocoder(geocoder)}`);
if (duringImport) {
  console.log(
    `\nSearch (5 mi, 16 connections) while POST /admin/stores.csv took ${fmt(duringImport.rows)} rows in ${fmt(duringImport.importSeconds, 1)} s (${fmt(duringImport.rowsPerSecond)} rows/s, status ${duringImport.importStatus}${duringImport.importError ? `: ${duringImport.importError}` : ''}): ` +
      `${fmt(duringImport.duringRps)} req/s against ${fmt(duringImport.idleRps)} idle (${fmt(duringImport.ratio * 100)} %), ${duringImport.searchFailures} searches not answered 200.`,
  );
}
if (specialDays) console.log(describeSpecialDays(specialDays, STORES, fmt));
if (eventsResult) console.log(`\n${describeEvents(eventsResult, { natsUrl, seconds: EVENTS_SECONDS, expect: writes.expect })}`);
if (cold.length) {
  console.log('\n| cold start to ready | best ms | median ms |\n|---|---:|---:|');
  for (const [label, best, median] of cold) console.log(`| ${label} | ${fmt(best)} | ${fmt(median)} |`);
}
