// npm run bench:events: change events under sustained write load on MySQL/MariaDB
// (BENCH_DATABASE_URL), the relay publishing to NATS JetStream (BENCH_NATS_URL, default the
// machine's nats://127.0.0.1:4222, a stream of this run's own). EVENTS_SECONDS (default 60) per
// run, ROUNDS (default 1) alternating events on and off. `npm run bench` runs the same at the end.
// EVENTS_HANDOVER=stop (or =rolling): instead, the relay's lease holder stopped under writes through
// two instances (or a rolling upgrade of main onto itself), ROUNDS rounds of SIGTERM (the handover)
// and SIGKILL (the lease expires) alternating, each its own processes (bench/events.mjs,
// writesThroughAStop); HANDOVER_WRITERS (default 8) loops of writes, EVENTS_SECONDS (default 15) the window.
// EVENTS_COMPARE=<commit>: that commit's build too, round by round in the same run (below).
// EVENTS_HOLD_SNAPSHOT=1: a transaction with a consistent snapshot held open on the database for
// the whole run, as `mysqldump --single-transaction` or a long report would: InnoDB's purge
// cannot remove the outbox rows the relay deletes meanwhile (docs/performance.md, "The relay's
// reads from a floor").
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ROOT, checkoutCommit, cli, fmt, freshDatabase, pidOf, startProcess } from './lib.mjs';
import { databaseProbe } from './database-probe.mjs';
import { benchScenarios } from './scenarios.mjs';
import { loadavg } from 'node:os';
import { describeEvents, describeHandover, mergeRounds, writesThroughAStop, writesWithEvents } from './events.mjs';

const HANDOVER = process.env.EVENTS_HANDOVER;
if (HANDOVER && HANDOVER !== 'stop' && HANDOVER !== 'rolling') throw new Error(`EVENTS_HANDOVER=${HANDOVER}: stop or rolling`);
const SECONDS = Number(process.env.EVENTS_SECONDS ?? (HANDOVER ? 15 : 60));
const ROUNDS = Number(process.env.ROUNDS ?? 1);
/** WARMUP_SECONDS (default 5): a run of writes against each service before the measured ones, not counted. */
const WARMUP_SECONDS = Number(process.env.WARMUP_SECONDS ?? 5);
const natsUrl = process.env.BENCH_NATS_URL ?? 'nats://127.0.0.1:4222';

console.error('building…');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
console.error('database…');
const DATABASE_URL = await freshDatabase('events');
console.error('tokens…');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0' };
const tokens = [];
for (let i = 0; i < 2; i++) tokens.push(await cli(env, 'tokens', 'create', '--team', `team${i}`));
console.error('services…');
const stream = `BENCH${process.pid}`;
const logDir = mkdtempSync(join(tmpdir(), 'plant-store-bench-events-'));
// BENCH_NODE_ARGS: options for both services' node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (a profile each, written when they stop).
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

if (HANDOVER) {
  const writers = Number(process.env.HANDOVER_WRITERS ?? 8);
  const db = await mysql.createConnection(DATABASE_URL);
  const holderPid = async () => {
    for (;;) {
      const [[{ owner }]] = await db.query('SELECT owner FROM event_relay_lease WHERE id = 1');
      if (owner) return Number(owner.split(':')[1]);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  let started = 0;
  // The production defaults: SHUTDOWN_DRAIN_MS 5 s, SHUTDOWN_GRACE_MS 10 s, EVENTS_RELAY_INTERVAL_MS 1 s.
  const start = () =>
    startProcess(
      `${ROOT}dist/main.js`,
      { ...env, EVENTS_NATS_URL: natsUrl, EVENTS_STREAM: stream },
      { logFile: join(logDir, `instance-${++started}.log`), nodeArgs },
    );
  const results = [];
  let firstId = 1;
  const loads = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      console.error(`  round ${round}: ${HANDOVER}, ${signal}…`);
      loads.push(loadavg()[0]);
      const result = await writesThroughAStop({
        start,
        holderPid,
        outboxRows: async () => Number((await db.query('SELECT COUNT(*) AS n FROM event_outbox'))[0][0].n),
        token: tokens[0],
        natsUrl,
        stream,
        mode: HANDOVER,
        signal,
        writers,
        seconds: SECONDS,
        firstId,
      });
      firstId = result.nextId;
      results.push(result);
      console.error(
        `  round ${round}: ${signal}: ${result.written} events in the window, p99 ${Math.round(result.p99)} ms, ${result.later1s} later than 1 s, ${result.lost} lost, ${result.doubled} doubled; late ones by second of the window ${JSON.stringify(result.lateBySecond)}; exits ${JSON.stringify(result.exits)}`,
      );
      // The next round starts with a free lease (a SIGKILLed holder's expires) and an empty outbox.
      await db.query('UPDATE event_relay_lease SET owner = NULL WHERE id = 1');
      await db.query('DELETE FROM event_outbox');
    }
  }
  await db.end();
  console.log(describeHandover(results, { writers, seconds: SECONDS, load: `${loads.map((l) => l.toFixed(1)).join(', ')} (1 min, at each run's start)` }));
  console.log(`Service logs: ${logDir}`);
  process.exit(0);
}
// EVENTS_COMPARE=<commit>: that commit's build in the same run, round by round, each build with a
// service with events on and one with them off (its own ids, stream and subject prefix), the
// builds' order turning from round to round: a change measured against the one before it.
const compare = process.env.EVENTS_COMPARE;
const builds = [{ name: 'working tree', root: ROOT, firstId: 1_000_000, prefix: 'plantstore' }];
if (compare) {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${compare}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const dir = checkoutCommit(commit);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  builds.push({ name: commit.slice(0, 7), root: `${dir}/`, firstId: 500_000_000, prefix: 'plantstorebase' });
}
let snapshot;
if (process.env.EVENTS_HOLD_SNAPSHOT === '1') {
  snapshot = await mysql.createConnection(DATABASE_URL);
  await snapshot.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
  await snapshot.query('SELECT COUNT(*) FROM event_outbox');
  console.error('  EVENTS_HOLD_SNAPSHOT: a consistent snapshot is held open for the whole run');
}
const db = await mysql.createConnection(DATABASE_URL);
const outboxRows = async () => Number((await db.query('SELECT COUNT(*) AS n FROM event_outbox'))[0][0].n);
const databasePid = pidOf('mariadbd') ?? pidOf('mysqld');
const database = databasePid ? await databaseProbe(db, databasePid) : undefined;
for (const [i, build] of builds.entries()) {
  build.stream = `${stream}_${i}`;
  const log = (name) => ({ logFile: join(logDir, `${name}-${i}.log`), nodeArgs });
  build.on = await startProcess(
    `${build.root}dist/main.js`,
    { ...env, EVENTS_NATS_URL: natsUrl, EVENTS_STREAM: build.stream, EVENTS_SUBJECT_PREFIX: build.prefix },
    log('on'),
  );
  build.off = await startProcess(`${build.root}dist/main.js`, env, log('off'));
  build.writes = benchScenarios({ tokens, duration: SECONDS, firstId: build.firstId }).find((s) => s.name.startsWith('POST + DELETE'));
  build.warmup = benchScenarios({ tokens, duration: WARMUP_SECONDS, firstId: build.firstId + 400_000_000 }).find((s) => s.name.startsWith('POST + DELETE'));
  build.results = [];
}
for (let round = 1; round <= (compare ? ROUNDS : 1); round++) {
  for (const build of round % 2 === 1 ? builds : [...builds].reverse()) {
    if (compare) console.error(`  round ${round}: ${build.name}…`);
    build.results.push(
      await writesWithEvents({
        on: { url: build.on.url, pid: build.on.pid, writes: build.writes },
        off: { url: build.off.url, pid: build.off.pid, writes: build.writes },
        natsUrl,
        stream: build.stream,
        rounds: compare ? 1 : ROUNDS,
        warmup: round === 1 && WARMUP_SECONDS > 0 ? build.warmup : undefined,
        offFirst: round % 2 === 0,
        last: !compare || round === ROUNDS,
        outboxRows,
        label: compare ? `MySQL, ${build.name}` : 'MySQL',
        database,
      }),
    );
  }
}
if (snapshot) {
  const [[status]] = await db.query('SHOW ENGINE INNODB STATUS');
  console.log(
    `\nEVENTS_HOLD_SNAPSHOT: InnoDB's history list length at the end, purge held back all run: ${/History list length (\d+)/.exec(status.Status)?.[1] ?? '?'}.`,
  );
  await snapshot.end();
}
await db.end();
for (const build of builds) {
  await build.on.stop();
  await build.off.stop();
  if (compare) console.log(`\n### ${build.name}\n`);
  console.log(describeEvents(mergeRounds(build.results), { natsUrl, seconds: SECONDS, expect: build.writes.expect }));
}
if (compare) {
  const ratios = (build) => build.results.map((r) => r.runs.on[0].rps / r.runs.off[0].rps);
  console.log(
    `\nWrites with events / without, round by round: ${builds
      .map(
        (b) =>
          `${b.name} ${ratios(b)
            .map((x) => fmt(x, 2))
            .join(', ')} (best ${fmt(Math.max(...ratios(b)), 2)})`,
      )
      .join('; ')}.`,
  );
}
console.log(`Service logs: ${logDir}`);
process.exit(0);
