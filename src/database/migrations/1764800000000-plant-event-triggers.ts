import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What a row's trigger does with the session variables a plant write sets for its event (OutboxService.writePlant). */
const ROW_EVENT = (row: 'NEW' | 'OLD') => `
  IF @plant_event_team IS NOT NULL AND BINARY ${row}.team = @plant_event_team AND ${row}.id = @plant_event_plant THEN
    SET @plant_event_team = NULL;
    INSERT INTO event_outbox (event_id, subject, payload) VALUES (@plant_event_id, @plant_event_subject,
      CONCAT(@plant_event_head, JSON_QUOTE(${row}.name), ',"tag":', COALESCE(JSON_QUOTE(${row}.tag), 'null'), @plant_event_tail));
  END IF;`;

/** The two triggers' CREATE statements, on `table` (another table of the plants' shape: `npm run bench:outbox-sql`). */
export function plantEventTriggers(table = 'plants'): string[] {
  const name = (kind: string) => (table === 'plants' ? `plant_${kind}_event` : `${table}_${kind}_event`);
  return [
    `CREATE TRIGGER ${name('created')} AFTER INSERT ON ${table} FOR EACH ROW BEGIN${ROW_EVENT('NEW')}\nEND`,
    `CREATE TRIGGER ${name('deleted')} AFTER DELETE ON ${table} FOR EACH ROW BEGIN${ROW_EVENT('OLD')}\nEND`,
  ];
}

/** MySQL's and MariaDB's refusals of CREATE TRIGGER to an account that may not: without TRIGGER, or with binary logging on and neither SUPER nor log_bin_trust_function_creators. */
const NOT_ALLOWED = new Set([
  'ER_TABLEACCESS_DENIED_ERROR',
  'ER_SPECIFIC_ACCESS_DENIED_ERROR',
  'ER_BINLOG_CREATE_ROUTINE_NEED_SUPER',
  'ER_DBACCESS_DENIED_ERROR',
]);

/**
 * On MySQL/MariaDB, a plant's change event is written by a trigger of the `plants` table, in the
 * write's own statement: a create or a delete with events on is one autocommit statement (after
 * the `SET` of the event's session variables, in the same round trip) instead of a transaction of
 * four statements, and the deletion's event takes the name and tag from the row the DELETE
 * removes instead of a locking read of its own. That was the larger part of what the events cost
 * the database per write (docs/performance.md, "Change events at the write rate on Node 24").
 *
 * A trigger writes only for a row its session named (team and id in `@plant_event_team` and
 * `@plant_event_plant`), and forgets the name at once: a write by anything else (a process with
 * events off, an operator's own SQL) writes no event, as before. The JSON around the row's name
 * and tag is the service's (`@plant_event_head`, `@plant_event_tail`), so the event is the same
 * whichever way it is written. Galera applies replicated rows without firing triggers: the outbox
 * row comes over with the plant's.
 *
 * An account that may not create triggers (no TRIGGER privilege, or MySQL's binary logging on
 * without SUPER or `log_bin_trust_function_creators`) gets a warning instead of a failed upgrade:
 * the service then writes each event in the write's transaction, as it did before this change
 * (OutboxService reads which triggers exist). SQLite keeps that transaction too: one process,
 * no round trips to save.
 */
export class PlantEventTriggers1764800000000 implements MigrationInterface {
  name = 'PlantEventTriggers1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') return;
    try {
      for (const sql of plantEventTriggers()) await queryRunner.query(sql);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (!code || !NOT_ALLOWED.has(code)) throw error;
      await queryRunner.query('DROP TRIGGER IF EXISTS plant_created_event');
      new Logger('Migrations').warn(
        `the database account may not create triggers (${code}): change events are written in each write's transaction instead, which costs the database more per write. ` +
          'To have them written by triggers, grant TRIGGER (and with binary logging on set log_bin_trust_function_creators = 1), then undo and run this migration again (docs/events.md).',
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.driver.options.type === 'better-sqlite3') return;
    await queryRunner.query('DROP TRIGGER IF EXISTS plant_deleted_event');
    await queryRunner.query('DROP TRIGGER IF EXISTS plant_created_event');
  }
}
