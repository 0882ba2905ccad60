// npm run bench:sqlite: the service on its embedded SQLite default (one file, one process), with
// 1,000 plants for each of 10 teams: GET /plants?limit=20 and POST + DELETE /plants, each for
// DURATION seconds (default 10), ROUNDS times (default 2); then POST + DELETE with change events on
// and off (EVENTS_SECONDS, default 60; bench/events.mjs). Numbers only, no assertion.
//
// BENCH_VARIANTS (comma list, default `current`): `current` is this tree's build;
// `<name>=<path of another build's main.js>` starts that build beside it (on a data directory
// of its own), alternated in every round, to compare the two on the same minutes of a noisy
// machine (e.g. the commit before the SQLite transaction lock).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, cli, fmt, startProcess } from './lib.mjs';
import Database from 'better-sqlite3';
import { benchScenarios } from './scenarios.mjs';
import { describeEvents, writesWithEvents } from './events.mjs';

const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const TEAMS = 10;
const PLANTS_PER_TEAM = 1000;
const VARIANTS = (process.env.BENCH_VARIANTS ?? 'current').split(',').map((v) => v.trim());
for (const v of VARIANTS) if (v !== 'current' && !/^[\w-]+=.+\.js$/.test(v)) throw new Error(`BENCH_VARIANTS: unknown variant ${v}`);

console.error('building…');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

const services = [];
for (const variant of VARIANTS) {
  const [name, main] = variant === 'current' ? ['current', `${ROOT}dist/main.js`] : variant.split('=');
  const env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), `plant-store-bench-sqlite-${name}-`)),
    NODE_ENV: 'production',
    TOKEN_RATE_LIMIT_PER_MINUTE: '0',
    AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
    DEMO_SEED: 'false',
  };
  const tokens = [];
  // The command line migrates the new file; the server then opens it as it is.
  for (let i = 0; i < TEAMS; i++) tokens.push(await cli(env, 'tokens', 'create', '--team', `team${i}`));
  const service = await startProcess(main, env, { logFile: join(env.DATA_DIR, 'service.log') });
  console.error(`seeding ${name}: ${TEAMS * PLANTS_PER_TEAM} plants through POST /plants…`);
  for (let i = 0; i < TEAMS; i++) {
    for (let id = 1; id <= PLANTS_PER_TEAM; id++) {
      const res = await fetch(`${service.url}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id, name: `plant ${id}`, tag: id % 3 === 0 ? 'fern' : null }),
      });
      if (res.status !== 201) throw new Error(`seeding: POST /plants answered ${res.status}`);
    }
  }
  services.push({
    name,
    service,
    tokens,
    scenarios: benchScenarios({ tokens, duration: DURATION }).filter((s) => /plants/.test(s.name) && !/401/.test(s.name)),
  });
}

const results = new Map();
for (let round = 1; round <= ROUNDS; round++) {
  for (const index of services[0].scenarios.keys()) {
    for (const { name, service, scenarios } of services) {
      const scenario = scenarios[index];
      const result = await scenario.run(service.url);
      const errors =
        result.errors +
        Object.entries(result.statusCodes)
          .filter(([code]) => !scenario.expect.includes(Number(code)))
          .reduce((n, [, s]) => n + s.count, 0);
      const key = `${scenario.name}\t${name}`;
      results.set(key, [...(results.get(key) ?? []), { ...result, errors }]);
      console.error(`round ${round}: ${scenario.name} [${name}] ${fmt(result.rps)} req/s, p99 ${result.p99} ms, ${errors} errors`);
    }
  }
}

console.log('| scenario | build | req/s (mean of rounds) | p99 ms (worst) | errors | RSS MB |');
console.log('|---|---|---:|---:|---:|---:|');
for (const [key, runs] of results) {
  const [scenario, name] = key.split('\t');
  const rss = services.find((s) => s.name === name).service.rssMb();
  console.log(
    `| ${scenario} | ${name} | ${fmt(runs.reduce((n, r) => n + r.rps, 0) / runs.length)} | ${Math.max(...runs.map((r) => r.p99))} | ${runs.reduce((n, r) => n + r.errors, 0)} | ${fmt(rss)} |`,
  );
}

// Change events on the embedded default: POST + DELETE for EVENTS_SECONDS (default 60)
// with the relay to NATS JetStream (BENCH_NATS_URL), alternating with this tree's build without.
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';
const EVENTS_SECONDS = Number(process.env.EVENTS_SECONDS ?? 60);
const eventsEnv = {
  DATA_DIR: mkdtempSync(join(tmpdir(), 'plant-store-bench-sqlite-events-')),
  NODE_ENV: 'production',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  DEMO_SEED: 'false',
};
const eventsTokens = [await cli(eventsEnv, 'tokens', 'create', '--team', 'team0'), await cli(eventsEnv, 'tokens', 'create', '--team', 'team1')];
const stream = `BENCH${process.pid}`;
const eventsService = await startProcess(
  `${ROOT}dist/main.js`,
  { ...eventsEnv, EVENTS_NATS_URL: natsUrl, EVENTS_STREAM: stream },
  { logFile: join(eventsEnv.DATA_DIR, 'service.log') },
);
const current = services.find((s) => s.name === 'current') ?? services[0];
const eventWrites = benchScenarios({ tokens: eventsTokens, duration: EVENTS_SECONDS }).find((s) => s.name.startsWith('POST + DELETE'));
const offWrites = benchScenarios({ tokens: current.tokens, duration: EVENTS_SECONDS, firstId: 50_000_000 }).find((s) => s.name.startsWith('POST + DELETE'));
const outbox = new Database(join(eventsEnv.DATA_DIR, 'plant-store.sqlite'), { readonly: true });
const outboxRows = async () => Number(outbox.prepare('SELECT COUNT(*) AS n FROM event_outbox').get().n);
console.error('running POST + DELETE with change events on and off…');
const events = await writesWithEvents({
  on: { url: eventsService.url, pid: eventsService.pid, writes: eventWrites },
  off: { url: current.service.url, pid: current.service.pid, writes: offWrites },
  natsUrl,
  stream,
  rounds: ROUNDS,
  outboxRows,
  label: 'SQLite',
  servers: ['nats-server'],
});
outbox.close();
await eventsService.stop();
console.log(`\n${describeEvents(events, { natsUrl, seconds: EVENTS_SECONDS, expect: eventWrites.expect })}`);
for (const { service } of services) await service.stop();
