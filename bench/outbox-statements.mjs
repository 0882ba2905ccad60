// npm run bench:outbox-sql: what the change events' statements cost MySQL/MariaDB alone, with no
// service in between: mariadbd's CPU time per operation (from /proc) and operations a second, for
// each statement shape a plant write runs with events off and on, and for the relay's read and
// delete of the published rows. 32 connections (OUTBOX_SQL_CONNECTIONS), OUTBOX_SQL_N operations
// each (default 20,000), in tables of the service's shape on a fresh database (BENCH_DATABASE_URL,
// as npm run bench: `<name>_outbox_sql`). The shapes are those of src/plants/plants.service.ts and
// src/events/outbox.service.ts: with the plants table's triggers (what the service runs on
// MySQL/MariaDB, the triggers of the migration itself, from dist/), the transaction it runs where
// there are none (an account that may not create them), and what it ran before (marked
// "before"), so that a change of a statement is measured against the one it replaces on the same
// minutes of the machine; and MariaDB's DELETE … RETURNING (a "candidate" the service does not run).
// docs/performance.md, "The statements alone".
import { randomUUID } from 'node:crypto';
import mysql from 'mysql2/promise';
import { cpuSeconds, fmt, freshDatabase, pidOf } from './lib.mjs';
import { DELETE_PLANT, EVENT_TAIL, INSERT_PLANT, SET_EVENT, createOutboxTables, drainOutbox, eventHead, eventVariables } from './outbox-shapes.mjs';

const N = Number(process.env.OUTBOX_SQL_N ?? 20_000);
const CONNECTIONS = Number(process.env.OUTBOX_SQL_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const url = await freshDatabase('outbox_sql');
const pool = mysql.createPool({ uri: url, connectionLimit: CONNECTIONS, multipleStatements: true });
await createOutboxTables(pool);
const databasePid = pidOf('mariadbd') ?? pidOf('mysqld');
if (!databasePid) throw new Error('no mariadbd or mysqld process on this machine: its CPU time is what this measures');

const payload = (type) =>
  JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: '/plant-store-service',
    type,
    subject: 'teams/team1/plants/1000000',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { team: 'team1', id: 1_000_000, name: 'bench plant', tag: 'b', tokenId: 2 },
  });
const created = payload('com.plantstore.plant.created');
const head = eventHead('deleted');
const INSERT_EVENT = 'INSERT INTO event_outbox (event_id, subject, payload) VALUES (?, ?, ?)';
const EVENT_OF_DELETION = `INSERT INTO event_outbox (event_id, subject, payload) SELECT ?, ?, CONCAT(?, JSON_QUOTE(name), ',"tag":', COALESCE(JSON_QUOTE(tag), 'null'), ?) FROM plants WHERE team = ? AND id = ?`;
const deletionParams = (id) => [randomUUID(), 'plantstore.team1.plant.deleted', head, EVENT_TAIL, 'team1', id];

/** `op(i)` for i in 0..N-1 on CONNECTIONS connections at once: mariadbd's CPU µs per operation and operations a second. */
async function measure(op) {
  let next = 0;
  const cpu = cpuSeconds(databasePid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let i = next++; i < N; i = next++) await op(i);
    }),
  );
  return { cpu: (1e6 * (cpuSeconds(databasePid) - cpu)) / N, rate: N / ((performance.now() - started) / 1000) };
}

let base = 0;
/** Plants base … base+N-1, inserted for a deletion shape to delete. */
const fill = (table = 'plants') => measure((i) => pool.query(INSERT_PLANT.replace('plants', table), ['team1', base + i, 'bench plant', 'b']));
const shapes = [
  { name: 'create, events off: INSERT (autocommit)', run: (id) => pool.query(INSERT_PLANT, ['team1', id, 'bench plant', 'b']) },
  {
    name: 'create, events on, no triggers: START; INSERT event; INSERT; COMMIT',
    run: (id) =>
      pool.query(`START TRANSACTION; ${INSERT_EVENT}; ${INSERT_PLANT}; COMMIT`, [
        randomUUID(),
        'plantstore.team1.plant.created',
        created,
        'team1',
        id,
        'bench plant',
        'b',
      ]),
  },
  { name: 'delete, events off: DELETE (autocommit)', deletes: true, run: (id) => pool.query(DELETE_PLANT, ['team1', id]) },
  {
    name: 'delete, events on, no triggers: START; INSERT … SELECT … FOR UPDATE; DELETE; COMMIT',
    deletes: true,
    run: (id) => pool.query(`START TRANSACTION; ${EVENT_OF_DELETION} FOR UPDATE; ${DELETE_PLANT}; COMMIT`, [...deletionParams(id), 'team1', id]),
  },
  {
    name: 'delete, events on, two round trips: START; SELECT name, tag … FOR UPDATE, then INSERT event; DELETE; COMMIT',
    deletes: true,
    run: async (id) => {
      const connection = await pool.getConnection();
      try {
        const [[, rows]] = await connection.query('START TRANSACTION; SELECT name, tag FROM plants WHERE team = ? AND id = ? FOR UPDATE', ['team1', id]);
        const [{ name, tag }] = rows;
        const event = `${head}${JSON.stringify(name)},"tag":${JSON.stringify(tag)}${EVENT_TAIL}`;
        await connection.query(`${INSERT_EVENT}; ${DELETE_PLANT}; COMMIT`, [randomUUID(), 'plantstore.team1.plant.deleted', event, 'team1', id]);
      } finally {
        connection.release();
      }
    },
  },
  {
    name: 'delete, events on, before: START; SELECT … FOR UPDATE; INSERT … SELECT; DELETE; COMMIT',
    deletes: true,
    run: (id) =>
      pool.query(`START TRANSACTION; SELECT 1 FROM plants WHERE team = ? AND id = ? FOR UPDATE; ${EVENT_OF_DELETION}; ${DELETE_PLANT}; COMMIT`, [
        'team1',
        id,
        ...deletionParams(id),
        'team1',
        id,
      ]),
  },
  {
    name: 'create, events on, triggers: SET @plant_event_…; INSERT (autocommit)',
    table: 'plants_triggered',
    run: (id) =>
      pool.query(`${SET_EVENT}; ${INSERT_PLANT.replace('plants', 'plants_triggered')}`, [...eventVariables(id, 'created'), 'team1', id, 'bench plant', 'b']),
  },
  {
    name: 'delete, events on, triggers: SET @plant_event_…; DELETE (autocommit)',
    table: 'plants_triggered',
    deletes: true,
    run: (id) => pool.query(`${SET_EVENT}; ${DELETE_PLANT.replace('plants', 'plants_triggered')}`, [...eventVariables(id, 'deleted'), 'team1', id]),
  },
  {
    name: 'candidate: delete, events on, MariaDB: START; DELETE … RETURNING name, tag, then INSERT event; COMMIT',
    deletes: true,
    run: async (id) => {
      const connection = await pool.getConnection();
      try {
        const [[, rows]] = await connection.query(`START TRANSACTION; ${DELETE_PLANT} RETURNING name, tag`, ['team1', id]);
        const [{ name, tag }] = rows;
        const event = `${head}${JSON.stringify(name)},"tag":${JSON.stringify(tag)}${EVENT_TAIL}`;
        await connection.query(`${INSERT_EVENT}; COMMIT`, [randomUUID(), 'plantstore.team1.plant.deleted', event]);
      } finally {
        connection.release();
      }
    },
  },
];

const results = new Map(shapes.map((s) => [s.name, []]));
const relay = [];
for (let round = 1; round <= ROUNDS; round++) {
  // Each round starts from an empty outbox; its shapes in turn, then the relay drains what they wrote.
  await pool.query('TRUNCATE TABLE event_outbox');
  for (const shape of shapes) {
    base += N;
    if (shape.deletes) await fill(shape.table);
    const first = base;
    results.get(shape.name).push(await measure((i) => shape.run(first + i)));
    if (!shape.deletes) await pool.query(`DELETE FROM ${shape.table ?? 'plants'} WHERE team = ? AND id >= ?`, ['team1', first]);
    console.error(`  round ${round}: ${shape.name}: ${fmt(results.get(shape.name).at(-1).cpu)} µs`);
  }
  const [[{ n }]] = await pool.query('SELECT COUNT(*) AS n FROM event_outbox');
  const cpu = cpuSeconds(databasePid);
  await drainOutbox(pool);
  relay.push((1e6 * (cpuSeconds(databasePid) - cpu)) / Number(n));
}
await pool.end();

const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
console.log(`mariadbd alone, ${CONNECTIONS} connections, ${N} operations per shape, ${ROUNDS} rounds (mean; each round in brackets):\n`);
console.log('| statements | mariadbd CPU per operation (µs) | operations/s |');
console.log('|---|---:|---:|');
for (const [name, list] of results) {
  console.log(`| ${name} | ${fmt(mean(list.map((r) => r.cpu)))} (${list.map((r) => fmt(r.cpu)).join(', ')}) | ${fmt(mean(list.map((r) => r.rate)))} |`);
}
console.log(`| the relay: SELECT 33 in id order, DELETE … IN (33 ids), per event | ${fmt(mean(relay))} (${relay.map((x) => fmt(x)).join(', ')}) | |`);
