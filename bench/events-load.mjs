// npm run bench:events: change events under sustained write load on MySQL/MariaDB
// (BENCH_DATABASE_URL), the relay publishing to NATS JetStream (BENCH_NATS_URL, default the
// machine's nats://127.0.0.1:4222, a stream of this run's own). EVENTS_SECONDS (default 60) per
// run, ROUNDS (default 1) alternating events on and off. `npm run bench` runs the same at the end.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ROOT, cli, freshDatabase, startProcess } from './lib.mjs';
import { benchScenarios } from './scenarios.mjs';
import { describeEvents, writesWithEvents } from './events.mjs';

const SECONDS = Number(process.env.EVENTS_SECONDS ?? 60);
const ROUNDS = Number(process.env.ROUNDS ?? 1);
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
const onService = await startProcess(`${ROOT}dist/main.js`, { ...env, EVENTS_NATS_URL: natsUrl, EVENTS_STREAM: stream }, { logFile: join(logDir, 'on.log'), nodeArgs });
const offService = await startProcess(`${ROOT}dist/main.js`, env, { logFile: join(logDir, 'off.log'), nodeArgs });
const writes = benchScenarios({ tokens, duration: SECONDS }).find((s) => s.name.startsWith('POST + DELETE'));
const db = await mysql.createConnection(DATABASE_URL);
const outboxRows = async () => Number((await db.query('SELECT COUNT(*) AS n FROM event_outbox'))[0][0].n);
const result = await writesWithEvents({ on: { url: onService.url, pid: onService.pid, writes }, off: { url: offService.url, pid: offService.pid, writes }, natsUrl, stream, rounds: ROUNDS, outboxRows, label: 'MySQL' });
await db.end();
await onService.stop();
await offService.stop();
console.log(describeEvents(result, { natsUrl, seconds: SECONDS, expect: writes.expect }));
console.log(`Service logs: ${logDir}`);
process.exit(0);
