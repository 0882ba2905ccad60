// npm run bench:floor: how close can any server built on the service's stack get to the
// baseline? Drives GET /plants?limit=20 (32 connections, DURATION s, ROUNDS rounds, servers
// alternating) against the baseline (node:http + mysql2: token look-up and page query), the
// floors of bench/floor-servers.mjs and the service itself. The floors answer the same body
// with nothing but their layer: from memory, or (the -db ones) with one query on a plain
// mysql2 pool. A floor's ratio bounds the service from above: whatever the service does on
// top of that layer only lowers it. The Fastify rows show what Nest's other adapter would allow.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ROOT, cli, fmt, freshDatabase, load, startProcess } from './lib.mjs';
import { plantRows } from './plants.mjs';

const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const DATABASE_URL = await freshDatabase('floor');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' };
const token = await cli(env, 'tokens', 'create', '--team', 'team0');
const db = await mysql.createConnection(DATABASE_URL);
await db.query('INSERT INTO plants (team, id, name, tag) VALUES ?', [plantRows(0, 1000)]);
await db.end();

const FLOOR_TOKEN = 'pst_floor';
const floor = (name, adapter = 'express') => ({
  name: adapter === 'express' ? name : `${name} on ${adapter}`,
  script: `${ROOT}bench/floor-servers.mjs`,
  env: { FLOOR: name, ADAPTER: adapter, FLOOR_TOKEN, DATABASE_URL },
  token: FLOOR_TOKEN,
});
const servers = [
  { name: 'baseline (node:http + mysql2)', script: `${ROOT}bench/baseline.mjs`, env: { DATABASE_URL }, token },
  floor('http'),
  floor('express'),
  floor('nest'),
  floor('nest-passport'),
  floor('nest-passport-db'),
  // Not part of the service's stack: what the same floor does on Nest's other HTTP adapter.
  floor('nest-passport', 'fastify'),
  floor('nest-passport-db', 'fastify'),
  // As in npm run bench: production logging, one line per request, into a file.
  { name: 'service', script: `${ROOT}dist/main.js`, env, token, logFile: join(mkdtempSync(join(tmpdir(), 'plant-store-floor-')), 'service.log') },
];
const runs = new Map(servers.map((s) => [s.name, []]));
let expected;
for (let round = 0; round < ROUNDS; round++) {
  for (const server of servers) {
    console.error(`round ${round + 1}: ${server.name}…`);
    const process_ = await startProcess(server.script, server.env, { logFile: server.logFile });
    // Every server must answer the very body the baseline does, or the comparison means nothing.
    const body = await fetch(`${process_.url}/plants?limit=20`, { headers: { authorization: `Bearer ${server.token}` } }).then((r) => r.text());
    expected ??= body;
    if (JSON.stringify(JSON.parse(body)) !== JSON.stringify(JSON.parse(expected))) throw new Error(`${server.name} answers ${body}, not ${expected}`);
    const result = await load({ url: process_.url, duration: DURATION, path: '/plants?limit=20', headers: { authorization: `Bearer ${server.token}` } });
    if (result.errors || result.non2xx) throw new Error(`${server.name}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
    runs.get(server.name).push({ ...result, rssMb: process_.rssMb() });
    await process_.stop();
  }
}
const mean = (list, f) => list.reduce((sum, r) => sum + f(r), 0) / list.length;
const baselineRps = mean(runs.get(servers[0].name), (r) => r.rps);
console.log(
  `\nGET /plants?limit=20, 32 connections, ${ROUNDS} × ${DURATION} s per server (alternating; mean req/s, worst p99). Floors answer from memory, the -db ones from MySQL.\n`,
);
console.log('| server | req/s | p99 ms | RSS MB | / baseline |\n|---|---:|---:|---:|---:|');
for (const [name, list] of runs) {
  const rps = mean(list, (r) => r.rps);
  console.log(
    `| ${name} | ${fmt(rps)} | ${fmt(Math.max(...list.map((r) => r.p99)))} | ${fmt(Math.max(...list.map((r) => r.rssMb)))} | ${fmt(rps / baselineRps, 2)} |`,
  );
}
