// What does one store's edit cost with 100,000 stores: how soon the writing instance answers, how
// soon another replica searches the change, what the search keeps of its throughput with one edit
// a second, and how many rows the database reads for one edit.
//
//   BEFORE=/path/to/an/older/checkout/with/dist npm run bench:store-edits
//
// Each build (BEFORE's dist/, when given, and this checkout's) gets a MySQL database of its own
// with STORES synthetic stores (default 100,000) and two instances on it, A and B
// (STORE_INDEX_REFRESH_MS=REFRESH_MS, default 1000). Then ROUNDS rounds (default 2), the builds
// alternating and their order turning from round to round, so that a loaded machine weighs on
// both alike:
// - EDITS edits (default 10) of one store each through A's `PUT /admin/stores/{code}` (a new name,
//   and the store moved by a few metres), one at a time at a random moment of B's refresh cycle:
//   the PUT's time, A's search finding the edit right after it answered, and the time from the
//   PUT's answer until B's search finds it (polled every 5 ms);
// - the rows of the bench database's tables the database read for those edits (MariaDB's
//   information_schema.TABLE_STATISTICS; the bench sets `userstat` on and back as it was);
// - the plain 5-mile search around ZIP 10001 with 32 connections, on B and on A, in windows of
//   DURATION seconds (default 5): SLICES quiet ones (default 3) and as many with one edit a second
//   through A, alternating (quiet, edits, edits, quiet, …): the mean req/s of each and the ratio.
// The load average (1 min) is printed with each round.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import mysql from 'mysql2/promise';
import { ROOT, fmt, freshDatabase, load, MYSQL_URL, startProcess } from './lib.mjs';

const STORES = Number(process.env.STORES ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const EDITS = Number(process.env.EDITS ?? 10);
const DURATION = Number(process.env.DURATION ?? 5);
const SLICES = Number(process.env.SLICES ?? 3);
const REFRESH_MS = Number(process.env.REFRESH_MS ?? 1000);
const builds = [...(process.env.BEFORE ? [{ name: 'before', root: process.env.BEFORE.replace(/\/?$/, '/') }] : []), { name: 'after', root: ROOT }];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const cli = async (root, env, ...args) =>
  (await promisify(execFile)(process.execPath, [`${root}dist/cli.js`, ...args], { env: { ...process.env, ...env }, maxBuffer: 1 << 26 })).stdout.trim();
const percentile = (list, p) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor((p / 100) * list.length))];
const mean = (list) => list.reduce((n, x) => n + x, 0) / list.length;

const file = `/tmp/plant-store-bench-edits-${STORES}-${process.pid}.csv`;
await promisify(execFile)(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), file]);
const stores = parse(readFileSync(file), { columns: true });

const base = new URL(MYSQL_URL);
const admin = await mysql.createConnection({
  host: base.hostname,
  port: Number(base.port || 3306),
  user: decodeURIComponent(base.username),
  password: decodeURIComponent(base.password),
});
const [[{ userstat }]] = await admin.query('SELECT @@global.userstat AS userstat');
await admin.query('SET GLOBAL userstat = 1');

try {
  for (const build of builds) {
    const DATABASE_URL = await freshDatabase(`edits_${build.name}`);
    build.schema = new URL(DATABASE_URL).pathname.slice(1);
    const env = {
      DATABASE_URL,
      NODE_ENV: 'production',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      STORE_INDEX_REFRESH_MS: String(REFRESH_MS),
    };
    await cli(build.root, env, 'locations', 'import', file);
    const token = await cli(build.root, env, 'tokens', 'create', '--team', 'bench');
    const adminToken = await cli(build.root, env, 'tokens', 'create', '--team', 'ops', '--scope', 'admin');
    // Their output to a file: autocannon's end cuts requests off, which the service logs.
    const logFile = `/tmp/plant-store-bench-edits-${build.name}-${process.pid}.log`;
    build.a = await startProcess(`${build.root}dist/main.js`, { ...env, LOG_LEVEL: 'warn' }, { logFile });
    build.b = await startProcess(`${build.root}dist/main.js`, { ...env, LOG_LEVEL: 'warn' }, { logFile });
    build.headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    build.adminHeaders = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    build.results = [];
  }

  let edit = 0;
  /** Edits one store through A: a new name, moved by a few metres. */
  const put = async (build) => {
    const store = stores[Math.floor(Math.random() * stores.length)];
    const name = `Edited ${build.name} ${++edit}`;
    const lat = (Number(store.lat) + 0.0001).toFixed(6);
    const lng = (Number(store.lng) + 0.0001).toFixed(6);
    const { code, lat: _lat, lng: _lng, ...fields } = store;
    const started = performance.now();
    const res = await fetch(`${build.a.url}/admin/stores/${encodeURIComponent(code)}`, {
      method: 'PUT',
      headers: build.adminHeaders,
      body: JSON.stringify({ ...fields, name, lat, lng }),
    });
    if (res.status !== 200) throw new Error(`PUT ${code}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    return { name, zip: store.zip, lat: Number(lat), lng: Number(lng), ms: performance.now() - started, answered: performance.now() };
  };
  const finds = async (url, headers, edited) => {
    const body = JSON.stringify({ customer_address: { zip: edited.zip, lat: edited.lat, lng: edited.lng }, max_distance: 0.01, limit: 5 });
    const res = await fetch(`${url}/locations/nearest`, { method: 'POST', headers, body });
    return (await res.json()).locations.some((l) => l.name === edited.name);
  };
  const rowsRead = async (schema) => {
    const [rows] = await admin.query('SELECT table_name AS t, rows_read AS n FROM information_schema.TABLE_STATISTICS WHERE table_schema = ?', [schema]);
    return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
  };

  const search = JSON.stringify({ customer_address: { zip: '10001' }, max_distance: 5 });
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    console.error(`round ${round + 1}: load average ${loadavg()[0].toFixed(2)}`);
    for (const build of order) {
      const result = { round, load: loadavg()[0], putMs: [], seenHere: 0, replicaMs: [], rows: {}, rps: {} };
      const before = await rowsRead(build.schema);
      for (let i = 0; i < EDITS; i++) {
        await sleep(Math.random() * REFRESH_MS);
        const edited = await put(build);
        result.putMs.push(edited.ms);
        if (await finds(build.a.url, build.headers, edited)) result.seenHere++;
        for (const deadline = performance.now() + 30_000; performance.now() < deadline; await sleep(5)) {
          if (await finds(build.b.url, build.headers, edited)) {
            result.replicaMs.push(performance.now() - edited.answered);
            break;
          }
        }
      }
      const after = await rowsRead(build.schema);
      for (const [table, n] of Object.entries(after)) if (n - (before[table] ?? 0) > 0) result.rows[table] = (n - (before[table] ?? 0)) / EDITS;
      for (const [where, service] of [
        ['B', build.b],
        ['A', build.a],
      ]) {
        // Quiet and editing windows alternate (SLICES of each, their order turning), so that the load of the machine weighs on both alike.
        const rps = { quiet: 0, edits: 0, errors: 0, putMs: [] };
        for (let slice = 0; slice < 2 * SLICES; slice++) {
          const editing = slice % 4 === 1 || slice % 4 === 2;
          let on = editing;
          const editor = (async () => {
            for (let next = performance.now(); on;) {
              next += 1000;
              rps.putMs.push((await put(build)).ms);
              await sleep(Math.max(0, next - performance.now()));
            }
          })();
          const run = await load({
            url: service.url,
            connections: 32,
            duration: DURATION,
            method: 'POST',
            path: '/locations/nearest',
            body: search,
            headers: build.headers,
          });
          on = false;
          await editor;
          rps[editing ? 'edits' : 'quiet'] += run.rps / SLICES;
          rps.errors += run.errors + run.non2xx;
        }
        result.rps[where] = rps;
      }
      build.results.push(result);
      console.error(
        `  ${build.name}: PUT median ${fmt(percentile(result.putMs, 50))} ms, replica mean ${fmt(mean(result.replicaMs))} ms, B ${fmt(result.rps.B.edits / result.rps.B.quiet, 2)}x, A ${fmt(result.rps.A.edits / result.rps.A.quiet, 2)}x`,
      );
    }
  }

  console.log(
    `\n${STORES} stores on MySQL, two instances (STORE_INDEX_REFRESH_MS=${REFRESH_MS}); ${ROUNDS} rounds, the builds alternating; ${EDITS} single edits a round; searches: the plain 5-mile search around ZIP 10001, 32 connections, ${SLICES} quiet windows of ${DURATION} s and ${SLICES} with edits, alternating\n`,
  );
  console.log(
    '| build | round | load avg | PUT ms p50 / max (idle) | A finds it after the PUT | B finds it, ms after the PUT: mean / max | rows read per edit | B req/s quiet → 1 edit/s | × | A req/s quiet → 1 edit/s | × | PUT ms p50 / max under load (A) | errors |',
  );
  console.log('|---|---:|---:|---|---:|---|---|---|---:|---|---:|---|---:|');
  for (const build of builds) {
    for (const r of build.results) {
      const rows = Object.entries(r.rows)
        .map(([table, n]) => `${table} ${fmt(n, n < 10 ? 1 : 0)}`)
        .join(', ');
      const underLoad = r.rps.A.putMs;
      console.log(
        `| ${build.name} | ${r.round + 1} | ${fmt(r.load, 1)} | ${fmt(percentile(r.putMs, 50))} / ${fmt(Math.max(...r.putMs))} | ${r.seenHere}/${EDITS} | ${fmt(mean(r.replicaMs))} / ${fmt(Math.max(...r.replicaMs))} (${r.replicaMs.length}/${EDITS}) | ${rows} | ${fmt(r.rps.B.quiet)} → ${fmt(r.rps.B.edits)} | ${fmt(r.rps.B.edits / r.rps.B.quiet, 2)} | ${fmt(r.rps.A.quiet)} → ${fmt(r.rps.A.edits)} | ${fmt(r.rps.A.edits / r.rps.A.quiet, 2)} | ${fmt(percentile(underLoad, 50))} / ${fmt(Math.max(...underLoad))} | ${r.rps.A.errors + r.rps.B.errors} |`,
      );
    }
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((n) => n.toFixed(2))
      .join(', ')}`,
  );
} finally {
  for (const build of builds) await Promise.all([build.a?.stop(), build.b?.stop()]);
  await admin.query(`SET GLOBAL userstat = ${Number(userstat)}`);
  await admin.end();
}
