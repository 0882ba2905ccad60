import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createPlantEventTriggers, PLANT_EVENT_TRIGGERS } from '../plant-event-triggers.js';

/**
 * On MySQL/MariaDB, a plant's change event is written by a trigger of the `plants` table, in the
 * write's own statement: a create or a delete with events on is one autocommit statement (after
 * the `SET` of the event's session variables, in the same round trip) instead of a transaction of
 * four statements, and the deletion's event takes the name and tag from the row the DELETE
 * removes instead of a locking read of its own. That was the larger part of what the events cost
 * the database per write (docs/performance.md, "Change events at the write rate").
 *
 * A trigger writes only for a row its session named (team and id in `@plant_event_team` and
 * `@plant_event_plant`), and forgets the name at once: a write by anything else (a process with
 * events off, an operator's own SQL) writes no event, as before. The JSON around the row's name
 * and tag is the service's (`@plant_event_head`, `@plant_event_tail`), so the event is the same
 * whichever way it is written. Galera applies replicated rows without firing triggers: the outbox
 * row comes over with the plant's.
 *
 * An account that may not create triggers (no TRIGGER privilege, or binary logging on without
 * SUPER or `log_bin_trust_function_creators`) is no failure: the migration is recorded as run,
 * the service writes each event in the write's transaction (OutboxService tries which way works),
 * and every later run of the migrations creates the triggers once the server allows it
 * (plant-event-triggers.ts). SQLite keeps the transaction: one process, no round trips to save.
 */
export class PlantEventTriggers1764800000000 implements MigrationInterface {
  name = 'PlantEventTriggers1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') return;
    await createPlantEventTriggers((sql) => queryRunner.query(sql));
  }

  /** Drops the triggers that exist, and only those: with binary logging on, a DROP is refused to the account that could not create them. */
  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') return;
    const rows = (await queryRunner.query(
      `SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME IN (${PLANT_EVENT_TRIGGERS.map(() => '?').join(', ')})`,
      [...PLANT_EVENT_TRIGGERS],
    )) as Array<{ name: string }>;
    for (const { name } of rows) await queryRunner.query(`DROP TRIGGER ${name}`);
  }
}
