// The tables and statements of a plant write with change events as the service runs them on
// MySQL/MariaDB, for the benches that measure them on the database alone
// (bench/outbox-statements.mjs, bench/binlog-sql.mjs): one place to follow the service when its
// statements change (src/plants/plants.service.ts, src/events/outbox.service.ts).
import { randomUUID } from 'node:crypto';

export const INSERT_PLANT = 'INSERT INTO plants (team, id, name, tag) VALUES (?, ?, ?, ?)';
export const DELETE_PLANT = 'DELETE FROM plants WHERE team = ? AND id = ?';
/** The variables a plant write with events sets for the triggers (OutboxService.writePlant). */
export const SET_EVENT =
  'SET @plant_event_team = ?, @plant_event_plant = ?, @plant_event_id = ?, @plant_event_subject = ?, @plant_event_head = ?, @plant_event_tail = ?';
export const EVENT_TAIL = ',"tokenId":2}}';

/** The JSON of a plant event before its name (`kind`: created or deleted), as OutboxService builds it. */
export const eventHead = (kind) =>
  `${JSON.stringify({
    specversion: '1.0',
    id: randomUUID(),
    source: '/plant-store-service',
    type: `com.plantstore.plant.${kind}`,
    subject: 'teams/team1/plants/1000000',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { team: 'team1', id: 1_000_000 },
  }).slice(0, -2)},"name":`;
const heads = { created: eventHead('created'), deleted: eventHead('deleted') };

/** SET_EVENT's values for plant `id` of team1: a new event id each, the rest as the service sends them. */
export const eventVariables = (id, kind) => ['team1', id, randomUUID(), `plantstore.team1.plant.${kind}`, heads[kind], EVENT_TAIL];

/**
 * `plants` and `event_outbox` of the service's shape, and `plants_triggered` like `plants` with
 * the service's triggers (migration PlantEventTriggers, from dist/: the benches build first), so
 * that the shapes without triggers run on a table that has none.
 */
export async function createOutboxTables(pool) {
  await pool.query(
    'CREATE TABLE plants (team varchar(64) NOT NULL, id bigint NOT NULL, name varchar(255) NOT NULL, tag varchar(255) NULL, created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), PRIMARY KEY (team, id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4',
  );
  await pool.query(
    'CREATE TABLE event_outbox (id bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, event_id varchar(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, subject varchar(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, payload text CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL, created_at datetime(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)) ENGINE=InnoDB',
  );
  const { plantEventTriggers } = await import(new URL('../dist/database/plant-event-triggers.js', import.meta.url).href);
  await pool.query('CREATE TABLE plants_triggered LIKE plants');
  for (const sql of plantEventTriggers('plants_triggered')) await pool.query(sql);
}

/** The relay's work on the rows waiting: batches of 33 (what it reads under load, docs/performance.md), read in id order and deleted by id. */
export async function drainOutbox(pool) {
  for (;;) {
    const [rows] = await pool.query('SELECT id, event_id, subject, payload FROM event_outbox ORDER BY id LIMIT 33');
    if (rows.length === 0) return;
    const ids = rows.map((row) => row.id);
    await pool.query(`DELETE FROM event_outbox WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
  }
}
