import type { DataSource } from 'typeorm';
import { driverError } from './database-errors.js';

/**
 * The plants table's triggers that write a plant's change event in the write's own statement
 * (MySQL/MariaDB; OutboxService.writePlant sets the session variables they read), where the
 * database lets the account that runs the migrations create them.
 *
 * Creating a trigger needs the TRIGGER privilege (part of `ALL PRIVILEGES` on the database) and,
 * on a server that writes a binary log (MySQL 8 by default, a managed MySQL with backups, every
 * node of a Galera cluster), either SUPER or the server's `log_bin_trust_function_creators = 1`:
 * the server cannot know that a trigger is safe to replay from the log. An account refused is no
 * fault: the service then writes each event in its write's transaction (OutboxService), which is
 * exactly as correct and costs the database more per write (docs/events.md). Nothing here ever
 * needs more than the documented grant: a refused CREATE is the answer, and nothing is dropped
 * after it (a DROP TRIGGER is refused for the same reason, even with IF EXISTS).
 */

/**
 * A plant event's payload as SQL: the JSON made by the service around the plant's name and tag
 * (`head` … `tail`), which the database quotes in from the row. The one writing of it, for the
 * triggers and for a deletion's INSERT … SELECT where there are none (OutboxService).
 */
export function plantEventPayloadSql(engine: 'mysql' | 'sqlite', { head, name, tag, tail }: { head: string; name: string; tag: string; tail: string }): string {
  return engine === 'mysql'
    ? `CONCAT(${head}, JSON_QUOTE(${name}), ',"tag":', COALESCE(JSON_QUOTE(${tag}), 'null'), ${tail})`
    : `${head} || json_quote(${name}) || ',"tag":' || json_quote(${tag}) || ${tail}`;
}

/** What a row's trigger does with the session variables a plant write sets for its event. */
const ROW_EVENT = (row: 'NEW' | 'OLD') => `
  IF @plant_event_team IS NOT NULL AND BINARY ${row}.team = @plant_event_team AND ${row}.id = @plant_event_plant THEN
    SET @plant_event_team = NULL;
    INSERT INTO event_outbox (event_id, subject, payload) VALUES (@plant_event_id, @plant_event_subject,
      ${plantEventPayloadSql('mysql', { head: '@plant_event_head', name: `${row}.name`, tag: `${row}.tag`, tail: '@plant_event_tail' })});
  END IF;`;

export const PLANT_EVENT_TRIGGERS = ['plant_created_event', 'plant_deleted_event'] as const;

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
 * Creates whichever of the two triggers is missing (one that exists is left as it is, so that
 * instances starting together need no lock). Answers the server's refusal code when the account
 * may not create them, null when both exist afterwards; any other error is thrown.
 */
export async function createPlantEventTriggers(query: (sql: string) => Promise<unknown>): Promise<string | null> {
  for (const sql of plantEventTriggers()) {
    try {
      await query(sql);
    } catch (error) {
      const { code } = driverError(error);
      if (code === 'ER_TRG_ALREADY_EXISTS') continue;
      if (code && NOT_ALLOWED.has(code)) return code;
      throw error;
    }
  }
  return null;
}

/**
 * Whether this database's triggers write a plant's events, tried rather than looked up: a plant
 * row is written and deleted with the session variables naming it, in a transaction that is
 * rolled back, and each trigger that fired has cleared `@plant_event_team`. It needs only the
 * rights on plants and event_outbox that every write needs, where `information_schema.TRIGGERS`
 * shows MySQL's triggers only to an account with the TRIGGER privilege. The row (team '', id -1)
 * is one no token can name; the outbox row the triggers write goes with the rollback.
 */
export async function plantEventTriggersFire(dataSource: DataSource): Promise<boolean> {
  if (dataSource.options.type === 'better-sqlite3') return false;
  const runner = dataSource.createQueryRunner();
  const named = "SET @plant_event_team = '', @plant_event_plant = -1";
  const cleared = async () => {
    const [row] = (await runner.query('SELECT @plant_event_team IS NULL AS fired')) as Array<{ fired: number | string }>;
    return Number(row.fired) === 1;
  };
  try {
    await runner.startTransaction();
    await runner.query(
      `${named}, @plant_event_id = 'plant-event-trigger-probe', @plant_event_subject = 'probe', @plant_event_head = '{"name":', @plant_event_tail = '}'`,
    );
    await runner.query("INSERT INTO plants (team, id, name) VALUES ('', -1, 'trigger probe')");
    const created = await cleared();
    await runner.query(named);
    await runner.query("DELETE FROM plants WHERE team = '' AND id = -1");
    return created && (await cleared());
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    await runner.query('SET @plant_event_team = NULL').catch(() => undefined);
    await runner.release();
  }
}

/**
 * After the migrations (a start with MIGRATIONS_RUN, `npm run migration:run`): the triggers
 * created where they are missing and the account may now create them (a server whose
 * `log_bin_trust_function_creators` was set since, a TRIGGER privilege granted since), so that
 * moving to them takes a restart and nothing more. Answers whether they write the events now.
 */
export async function ensurePlantEventTriggers(dataSource: DataSource): Promise<{ triggers: boolean; created: boolean }> {
  if (dataSource.options.type === 'better-sqlite3') return { triggers: false, created: false };
  if (await plantEventTriggersFire(dataSource)) return { triggers: true, created: false };
  if ((await createPlantEventTriggers((sql) => dataSource.query(sql))) !== null) return { triggers: false, created: false };
  const triggers = await plantEventTriggersFire(dataSource);
  return { triggers, created: triggers };
}

/**
 * What an operator must change for the triggers to be created, read from the server's own
 * variables (readable by any account): the one start-up line names it (main.ts, migrate.ts).
 */
export async function plantEventTriggerAdvice(dataSource: DataSource): Promise<string> {
  const rows = await dataSource.query<Array<{ Variable_name: string; Value: string }>>(
    "SHOW VARIABLES WHERE Variable_name IN ('log_bin', 'log_bin_trust_function_creators', 'wsrep_on')",
  );
  const on = (name: string) => rows.some((row) => row.Variable_name === name && ['ON', '1'].includes(String(row.Value).toUpperCase()));
  const logged = on('log_bin') || on('wsrep_on');
  const steps = [
    ...(logged && !on('log_bin_trust_function_creators')
      ? [
          `the server writes a binary log${on('wsrep_on') ? ' (Galera)' : ''} and log_bin_trust_function_creators is OFF: set it to 1 (on a managed MySQL, in the instance's parameter group; on Galera, on every node);`,
        ]
      : []),
    'grant TRIGGER on the database to the account that runs the migrations (ALL PRIVILEGES includes it);',
    'then start an instance with MIGRATIONS_RUN=true or run `npm run migration:run`, which creates them (docs/deployment.md#the-database-account)',
  ];
  return steps.join(' ');
}

/** The one line that says how plant events are written (the server's start-up, `npm run migration:run`), with what to change where the triggers are missing. */
export async function plantEventsLine(dataSource: DataSource, triggers: boolean): Promise<string> {
  if (triggers) return "plant change events: written by the plants table's triggers";
  return `plant change events: written in each write's transaction, which costs the database more per write: the plants table has no event triggers. To have them: ${await plantEventTriggerAdvice(dataSource)}`;
}
