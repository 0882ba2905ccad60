// npm run bench:binlog-sql: what change events would cost the database if a relay took them from
// MariaDB's binary log instead of an outbox table, against what the outbox costs now, on a MariaDB
// server of this bench's own (mariadbd and mariadb-install-db on the PATH or in /usr/sbin; a data
// directory under the system's temporary one, a spare port; removed at the end).
//
// The server is started three times on the same data directory:
//   1. binary log off, as the service's database runs in the other benches;
//   2. binary log on (`binlog_format=ROW`, what a reader of row changes needs), no reader;
//   3. the same with a reader attached: bench/binlog-reader.mjs, @vlasky/zongji on the replication
//      protocol with MariaDB's statement annotations requested, in a process of its own.
// In each, 32 connections (BINLOG_SQL_CONNECTIONS) run OUTBOX_SQL_N plant writes (default
// 20,000) of each shape, ROUNDS rounds (default 2):
//   - events off: the INSERT or DELETE alone;
//   - for the binary log: the same statement with the event's id and acting token in a comment
//     (`INSERT /* plant-event <id> <token> */ …`), which the annotation carries to the reader:
//     the row itself has no token, and a deletion's row is the one deleted;
//   - the outbox as the service writes it now: `SET @plant_event_…; INSERT` (or DELETE), the
//     migration's own triggers (from dist/) writing the outbox row;
// and then the relay's reads and deletes of the outbox rows (33 a read, what it reads under load),
// per event. It prints mariadbd's CPU time per write (from /proc) and the reader's, and what events
// cost per write each way, over events off with the binary log off.
// docs/performance.md, "The binary log instead of an outbox table, measured".
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { cpuSeconds, fmt, freePort } from './lib.mjs';
import { DELETE_PLANT, INSERT_PLANT, SET_EVENT, createOutboxTables, drainOutbox, eventVariables } from './outbox-shapes.mjs';

const N = Number(process.env.OUTBOX_SQL_N ?? 20_000);
const CONNECTIONS = Number(process.env.BINLOG_SQL_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const program = (name) => ['/usr/sbin', '/usr/bin', ...(process.env.PATH ?? '').split(':')].map((dir) => join(dir, name)).find((path) => existsSync(path));
const mariadbd = program('mariadbd');
const installDb = program('mariadb-install-db');
if (!mariadbd || !installDb) throw new Error('mariadbd and mariadb-install-db are needed (Debian: mariadb-server)');

const dir = mkdtempSync(join(tmpdir(), 'plant-store-binlog-sql-'));
const datadir = join(dir, 'data');
// mariadbd refuses to run as root unless told to; elsewhere it runs as the current user.
const user = process.getuid?.() === 0 ? ['--user=root'] : [];
execFileSync(installDb, ['--no-defaults', `--datadir=${datadir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user], { stdio: 'ignore' });
const port = await freePort();
let server;
const stopServer = async () => {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
};
process.once('exit', () => server?.kill('SIGKILL'));

/** Starts the server with `options` (the settings the service's server runs with otherwise: the redo log flushed at each commit). */
async function startServer(options) {
  await stopServer();
  server = spawn(
    mariadbd,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      `--socket=${join(dir, 'mariadb.sock')}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      '--innodb-buffer-pool-size=128M',
      '--innodb-log-file-size=96M',
      '--innodb-flush-log-at-trx-commit=1',
      '--server-id=1',
      '--max-connections=200',
      ...options,
      ...user,
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; ; i++) {
    try {
      const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
      await connection.end();
      return;
    } catch (error) {
      if (server.exitCode !== null || i > 300) throw new Error(`mariadbd did not start: ${error.message}`, { cause: error });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** What a write would say for a reader of the binary log: the event's id and the acting token (a hex of it: a comment must not end early). */
const TOKEN = Buffer.from('2').toString('hex');
const annotation = () => `/* plant-event ${randomUUID()} ${TOKEN} */`;
const onTable = (sql, table) => sql.replace('plants', table);
const shapes = [
  { name: 'create, events off: INSERT', run: (pool, id) => pool.query(INSERT_PLANT, ['team1', id, 'bench plant', 'b']) },
  {
    name: 'create, binary log: INSERT /* plant-event … */',
    run: (pool, id) => pool.query(INSERT_PLANT.replace('INSERT', `INSERT ${annotation()}`), ['team1', id, 'bench plant', 'b']),
  },
  {
    name: 'create, outbox: SET @plant_event_…; INSERT (trigger)',
    table: 'plants_triggered',
    run: (pool, id) =>
      pool.query(`${SET_EVENT}; ${onTable(INSERT_PLANT, 'plants_triggered')}`, [...eventVariables(id, 'created'), 'team1', id, 'bench plant', 'b']),
  },
  { name: 'delete, events off: DELETE', deletes: true, run: (pool, id) => pool.query(DELETE_PLANT, ['team1', id]) },
  {
    name: 'delete, binary log: DELETE /* plant-event … */',
    deletes: true,
    run: (pool, id) => pool.query(DELETE_PLANT.replace('DELETE', `DELETE ${annotation()}`), ['team1', id]),
  },
  {
    name: 'delete, outbox: SET @plant_event_…; DELETE (trigger)',
    table: 'plants_triggered',
    deletes: true,
    run: (pool, id) => pool.query(`${SET_EVENT}; ${onTable(DELETE_PLANT, 'plants_triggered')}`, [...eventVariables(id, 'deleted'), 'team1', id]),
  },
];
const RELAY = 'the relay: SELECT 33 in id order, DELETE … IN (33 ids), per event';

/** One configuration of the server: each shape's mariadbd and reader CPU µs per write, each round. */
async function measureConfiguration(options, withReader) {
  await startServer(options);
  const admin = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', multipleStatements: true });
  await admin.query('DROP DATABASE IF EXISTS bench; CREATE DATABASE bench CHARACTER SET utf8mb4');
  await admin.end();
  const pool = mysql.createPool({ host: '127.0.0.1', port, user: 'root', database: 'bench', connectionLimit: CONNECTIONS, multipleStatements: true });
  await createOutboxTables(pool);
  const { pid } = server;
  let reader;
  if (withReader) {
    reader = fork(new URL('./binlog-reader.mjs', import.meta.url), ['127.0.0.1', String(port)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    await new Promise(
      (resolve, reject) => (reader.once('message', resolve), reader.once('exit', (code) => reject(new Error(`the binary log reader exited with ${code}`)))),
    );
  }
  /** `op(i)` for i in 0..N-1 on CONNECTIONS connections at once: CPU µs per operation of mariadbd and the reader. */
  const measure = async (op, count = N) => {
    let next = 0;
    const before = [cpuSeconds(pid), reader ? cpuSeconds(reader.pid) : 0];
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let i = next++; i < count; i = next++) await op(i);
      }),
    );
    // The reader takes the last events a moment after their commit.
    if (reader) await new Promise((r) => setTimeout(r, 300));
    return { database: (1e6 * (cpuSeconds(pid) - before[0])) / count, reader: reader ? (1e6 * (cpuSeconds(reader.pid) - before[1])) / count : undefined };
  };
  const results = new Map([...shapes.map((s) => [s.name, []]), [RELAY, []]]);
  let base = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    await pool.query('TRUNCATE TABLE event_outbox');
    for (const shape of shapes) {
      const table = shape.table ?? 'plants';
      base += N;
      const first = base;
      if (shape.deletes) await measure((i) => pool.query(onTable(INSERT_PLANT, table), ['team1', first + i, 'bench plant', 'b']));
      results.get(shape.name).push(await measure((i) => shape.run(pool, first + i)));
      if (!shape.deletes) await pool.query(`DELETE FROM ${table} WHERE team = ? AND id >= ?`, ['team1', first]);
    }
    const [[{ n }]] = await pool.query('SELECT COUNT(*) AS n FROM event_outbox');
    results.get(RELAY).push(
      // One drain, on one of the connections.
      await measure(() => drainOutbox(pool), 1).then((r) => ({
        database: r.database / Number(n),
        reader: r.reader === undefined ? undefined : r.reader / Number(n),
      })),
    );
    console.error(`  ${options.join(' ')}${withReader ? ' + reader' : ''}: round ${round} done`);
  }
  if (reader) {
    const received = await new Promise((resolve) => (reader.once('message', resolve), reader.kill('SIGTERM')));
    // Each write of the binary log's two shapes, its comment included, came to the reader.
    const annotated = 2 * ROUNDS * N;
    if (received.annotated !== annotated) throw new Error(`the reader found ${received.annotated} annotations of plant events, not ${annotated}`);
  }
  await pool.end();
  return results;
}

const configurations = [
  { name: 'binary log off', options: ['--skip-log-bin'] },
  { name: 'binary log on (ROW)', options: ['--log-bin=binlog', '--binlog-format=ROW'] },
  { name: 'binary log on, a reader attached', options: ['--log-bin=binlog', '--binlog-format=ROW'], reader: true },
];
try {
  for (const c of configurations) c.results = await measureConfiguration(c.options, c.reader);
} finally {
  await stopServer();
  rmSync(dir, { recursive: true, force: true });
}

const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
const cell = (list, key) => `${fmt(mean(list.map((r) => r[key])))} (${list.map((r) => fmt(r[key])).join(', ')})`;
console.log(`MariaDB, ${CONNECTIONS} connections, ${N} writes per shape, ${ROUNDS} rounds; CPU µs per write (mean, each round in brackets):\n`);
console.log(`| statements | ${configurations.map((c) => `mariadbd, ${c.name}`).join(' | ')} | the reader |`);
console.log(`|---|${configurations.map(() => '---:|').join('')}---:|`);
for (const name of configurations[0].results.keys()) {
  const row = configurations.map((c) => cell(c.results.get(name), 'database'));
  console.log(`| ${name} | ${row.join(' | ')} | ${cell(configurations[2].results.get(name), 'reader')} |`);
}
const at = (c, name, key = 'database') => mean(configurations[c].results.get(name).map((r) => r[key]));
const perWrite = (c, kind, key) => (at(c, shapes[kind].name, key) + at(c, shapes[kind + 3].name, key)) / 2;
const off = [perWrite(0, 0), perWrite(1, 0)];
const outbox = (c) => perWrite(c, 2) + at(c, RELAY);
const binlog = perWrite(2, 1) + perWrite(2, 1, 'reader');
console.log(
  `\nWhat events add per write (the mean of a create and a delete; mariadbd, and the reader where there is one) over events off: ${fmt(off[0])} µs of mariadbd with the binary log off, ${fmt(off[1])} with it on:\n`,
);
console.log('| events | over events off, binary log off | over events off, binary log on |');
console.log('|---|---:|---:|');
console.log(`| the outbox (triggers; the relay's reads and deletes), binary log off | ${fmt(outbox(0) - off[0])} | - |`);
console.log(`| the outbox, binary log on | ${fmt(outbox(1) - off[0])} | ${fmt(outbox(1) - off[1])} |`);
console.log(
  `| the binary log and a reader of it (${fmt(perWrite(2, 1, 'reader'))} µs of it the reader's) | ${fmt(binlog - off[0])} | ${fmt(binlog - off[1])} |`,
);
