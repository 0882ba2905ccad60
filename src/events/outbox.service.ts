import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { eventsConfig } from './events.config.js';
import type { StreamState } from './event-stream.js';
import { isDatabaseUnavailableError } from '../database/database-errors.js';
import { plantEventPayloadSql, plantEventsLine, plantEventTriggersFire } from '../database/plant-event-triggers.js';
import { runStatements, type Statement } from '../database/statements-transaction.js';

/** The CloudEvents `type` of each event, under this service's reverse-DNS prefix. */
export const EVENT_TYPES = {
  plantCreated: 'com.plantstore.plant.created',
  plantDeleted: 'com.plantstore.plant.deleted',
  storesChanged: 'com.plantstore.stores.changed',
  holidayChanged: 'com.plantstore.holiday.changed',
} as const;

/** The CloudEvents `source` of every event. */
export const EVENT_SOURCE = '/plant-store-service';

export interface PlantChange {
  team: string;
  id: number;
  name: string;
  tag: string | null;
}

export interface StoresChange {
  added: number;
  updated: number;
  removed: number;
}

/** A holiday of the chain as set (`deleted` false) or as it was before its deletion; `states` null: every store. */
export interface HolidayChange {
  date: string;
  name: string;
  hours: string;
  states: string[] | null;
  deleted: boolean;
}

/** Who made a change: the acting token's id (`oidc:<sub>` for single sign-on, `admin-file`). */
export type Actor = number | string;

const INSERT = 'INSERT INTO event_outbox (event_id, subject, payload) VALUES (?, ?, ?)';
/** What the plants table's triggers read (database/plant-event-triggers.ts): the plant the event is of, then the event's pieces. */
const SET_PLANT_EVENT =
  'SET @plant_event_team = ?, @plant_event_plant = ?, @plant_event_id = ?, @plant_event_subject = ?, @plant_event_head = ?, @plant_event_tail = ?';
const FORGET = 'SET @plant_event_team = NULL';
/** How often, while plants are written, whether the triggers write their events is tried again (usesTriggers). */
const TRIGGER_RECHECK_MS = 10_000;

/**
 * How this instance writes a plant's change event: `off` (EVENTS_NATS_URL unset: the write alone),
 * `triggers` (the plants table's triggers, MySQL/MariaDB, database/plant-event-triggers.ts) or
 * `statements` (the event's INSERT and the write in one transaction: SQLite, or a MySQL whose
 * account could not create the triggers).
 */
export type PlantEventsWay = 'off' | 'triggers' | 'statements';

/** A plant write asked of OutboxService.writePlant: `write` (its INSERT or DELETE) for that plant, and its event's pieces. */
interface PlantWriteRequest {
  kind: 'created' | 'deleted';
  team: string;
  id: number;
  actor: Actor;
  write: Statement;
  /** A creation's plant: its event is made from it rather than read from the row. */
  plant?: PlantChange;
  /** The transaction to write in (an idempotent create's); otherwise one round trip of its own. */
  manager?: EntityManager;
}

/** A plant write with its event: statements for one round trip, the write last; `transaction` false: each autocommits (the event is the write's trigger's). */
interface PlantWrite {
  statements: Statement[];
  transaction: boolean;
  /** Run after the round trip when the write failed or changed nothing (runStatements). */
  unlessChanged?: string;
}

/**
 * The transactional outbox: each change event is one row written with the manager of
 * the change's own transaction, so that it exists if and only if the change was committed; the
 * relay (outbox-relay.ts) publishes it afterwards. Without EVENTS_NATS_URL nothing is written.
 *
 * A full outbox (EVENTS_OUTBOX_MAX_ROWS) refuses the write with 503 instead of dropping events:
 * a consumer may rely on getting every event, and the client may retry the write once the broker
 * is back. The rows are those of every instance (COUNT(*) of the table), counted by this
 * process's relay every EVENTS_RELAY_INTERVAL_MS, plus this process's writes and minus its
 * publications since; a process without a running relay (the command line) counts in the write's
 * own transaction. So the bound holds for the sum of all instances, give or take what the other
 * instances wrote within the last interval.
 */
@Injectable()
export class OutboxService {
  readonly enabled: boolean;
  private readonly prefix: string;
  private readonly maxRows: number;
  /** A count older than this is not trusted: the write counts again (the command line, a relay that stopped). */
  private readonly countValidMs: number;
  /** Rows in the outbox, as last counted, plus those written here since and minus those published. */
  private backlog = 0;
  private countedAt = -Infinity;
  private triggers?: Promise<boolean>;
  private triggersProbedAt = -Infinity;
  private readonly logger = new Logger('Events');

  constructor(
    @Inject(eventsConfig.KEY) events: ConfigType<typeof eventsConfig>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.enabled = Boolean(events.EVENTS_NATS_URL);
    this.prefix = events.EVENTS_SUBJECT_PREFIX;
    this.maxRows = events.EVENTS_OUTBOX_MAX_ROWS;
    this.countValidMs = 2 * events.EVENTS_RELAY_INTERVAL_MS;
  }

  /** Set by this process's relay: called after a row is written (`committed`: and its transaction committed), so that it goes out without waiting for the next round. */
  onRecorded?: (committed: boolean) => void;

  /** Set by this process's relay (the server's, not the command line's): its stream as the status page shows it. */
  streamStatus?: () => Promise<{ problem: string | null; state: StreamState | null }>;

  /** The relay's count of the rows waiting. */
  counted(rows: number): void {
    this.backlog = rows;
    this.countedAt = performance.now();
  }

  /** The events waiting in the outbox, of every instance (the admin status): counted now. */
  async waiting(): Promise<number> {
    const rows: Array<{ events: number | string }> = await this.dataSource.query('SELECT COUNT(*) AS events FROM event_outbox');
    return Number(rows[0].events);
  }

  /** The relay published and deleted this many rows. */
  removed(rows: number): void {
    this.backlog = Math.max(0, this.backlog - rows);
  }

  /**
   * Writes a plant (`write`, its INSERT) with its creation's event, whichever way this instance
   * writes events (plantEventsWay), and counts the event for the relay: the rows `write` changed.
   * Every plant write of the service comes through here or deletePlant, so that no write can
   * miss its event and none can leave a trigger's session variables behind. `manager`: inside that
   * transaction (an idempotent create), statement by statement; otherwise in one round trip.
   * Refuses with 503 when the outbox is full.
   */
  createPlant(plant: PlantChange, actor: Actor, write: Statement, manager?: EntityManager): Promise<number> {
    return this.writePlant({ kind: 'created', team: plant.team, id: plant.id, actor, write, plant, manager });
  }

  /** A plant's deletion (`write`, its DELETE) with its event, as createPlant: 0 when there was no such plant, and no event. */
  deletePlant(team: string, id: number, actor: Actor, write: Statement): Promise<number> {
    return this.writePlant({ kind: 'deleted', team, id, actor, write });
  }

  /**
   * The event is JSON made here around the plant's name and tag (`head` … `tail`, the keys in the
   * order of a creation's), which the database quotes in (JSON_QUOTE, json_quote on SQLite) from
   * the row as written or deleted. Two ways to write it, the same event either way:
   *
   * - **Triggers** of the plants table (MySQL/MariaDB, database/plant-event-triggers.ts): the event's
   *   pieces go into session variables in the write's round trip (`SET …; INSERT` or `DELETE`),
   *   and the write is one autocommit statement, its event written by the trigger for the row the
   *   variables name. A deletion's event comes from the row the DELETE removes: no read of its
   *   own. The variables never outlive the write on its pooled connection: the trigger clears them
   *   as it writes the event, and runStatements clears them when the write failed or changed no
   *   row, so nothing that runs next on that connection can write an event for them.
   * - **A transaction** of the event's INSERT and the write, where there are no triggers (SQLite;
   *   a server that would not let the migrations' account create them). A deletion's event is read from the plant's row by
   *   its INSERT … SELECT, before the DELETE; on MySQL/MariaDB that read locks the row
   *   (`… FOR UPDATE`, accepted by both in an INSERT … SELECT), so that of two deletes of one
   *   plant the second waits and then finds nothing, where INSERT … SELECT's shared lock would
   *   make them deadlock on the upgrade.
   *
   * Triggers took about 150 µs of the database's CPU off each deletion and cost a creation about
   * the same as the transaction; under load, mariadbd's CPU per write for events fell by a third
   * (`npm run bench:outbox-sql`, `npm run bench:events`, docs/performance.md).
   */
  private async writePlant(request: PlantWriteRequest): Promise<number> {
    const { statements, transaction, unlessChanged } = await this.plantStatements(request);
    const { manager } = request;
    const changed = manager
      ? await writeIn(manager, statements, unlessChanged)
      : (await runStatements(this.dataSource, statements, { transaction, unlessChanged })).at(-1)!;
    if (this.enabled) this.recorded(changed, !manager);
    return changed;
  }

  /** The statements of writePlant, `write` last: its changed rows are the events written (with events off, `write` alone). */
  private async plantStatements({ kind, team, id, actor, write, plant, manager = this.dataSource.manager }: PlantWriteRequest): Promise<PlantWrite> {
    if (!this.enabled) return { statements: [write], transaction: false };
    await this.checkRoom(manager);
    const event = this.event(kind === 'created' ? EVENT_TYPES.plantCreated : EVENT_TYPES.plantDeleted, plantSubject({ team, id }), { team, id });
    const head = `${JSON.stringify(event).slice(0, -2)},"name":`;
    const tail = `,"tokenId":${JSON.stringify(actor)}}}`;
    const subject = `${this.prefix}.${team}.plant.${kind}`;
    if (await this.usesTriggers()) {
      // A trigger that fired cleared the variables; a write that failed (a taken id) or changed no
      // row (a delete of no plant) fired none, and they are cleared then, on that connection.
      return { transaction: false, statements: [{ sql: SET_PLANT_EVENT, params: [team, id, event.id, subject, head, tail] }, write], unlessChanged: FORGET };
    }
    if (plant) {
      const payload = `${head}${JSON.stringify(plant.name)},"tag":${JSON.stringify(plant.tag)}${tail}`;
      return { transaction: true, statements: [{ sql: INSERT, params: [event.id, subject, payload] }, write] };
    }
    const mysql = this.dataSource.options.type !== 'better-sqlite3';
    const payload = plantEventPayloadSql(mysql ? 'mysql' : 'sqlite', { head: '?', name: 'name', tag: 'tag', tail: '?' });
    const read = `INSERT INTO event_outbox (event_id, subject, payload) SELECT ?, ?, ${payload} FROM plants WHERE team = ? AND id = ?${mysql ? ' FOR UPDATE' : ''}`;
    return { transaction: true, statements: [{ sql: read, params: [event.id, subject, head, tail, team, id] }, write] };
  }

  /**
   * Whether this database's triggers write the plants' events, tried (plantEventTriggersFire, which
   * works under an account with no more than the rights of a write) at the first write and again
   * in the background every TRIGGER_RECHECK_MS while writes come: triggers dropped under a running
   * instance (a migration undone) cost the events of at most that long, not of every write until a
   * restart, and triggers created later are used without one. Any doubt means the transaction,
   * which is right either way: it sets no session variable, so a trigger that does exist writes
   * nothing twice. A read that failed because the database did not answer is tried again by the
   * next write.
   */
  private usesTriggers(): Promise<boolean> {
    if (this.dataSource.options.type === 'better-sqlite3') return Promise.resolve(false);
    if (!this.triggers) {
      this.triggersProbedAt = performance.now();
      this.triggers = this.probeTriggers();
    } else if (performance.now() - this.triggersProbedAt >= TRIGGER_RECHECK_MS) {
      this.triggersProbedAt = performance.now();
      void this.recheckTriggers();
    }
    return this.triggers;
  }

  private probeTriggers(): Promise<boolean> {
    return plantEventTriggersFire(this.dataSource).catch((error: unknown) => {
      if (isDatabaseUnavailableError(error)) {
        this.triggers = undefined;
        throw error;
      }
      this.logger.warn(
        `could not tell whether the plants table's event triggers work (${(error as Error).message}): events are written in each write's transaction`,
      );
      return false;
    });
  }

  /** The background look of usesTriggers: the way changes only on a definite answer, and says so. */
  private async recheckTriggers(): Promise<void> {
    const before = await this.triggers?.catch(() => undefined);
    if (before === undefined) return;
    const now = await plantEventTriggersFire(this.dataSource).catch(() => before);
    if (now === before) return;
    this.triggers = Promise.resolve(now);
    if (now) this.logger.log("plant change events: written by the plants table's triggers from now on (they were created)");
    else
      this.logger.error(
        `plant change events: the plants table's event triggers no longer write them (dropped?): written in each write's transaction from now on; plant writes of the last ${TRIGGER_RECHECK_MS / 1000} s may have no event`,
      );
  }

  /**
   * How plant events are written now (the status page): `off`, `triggers` or `statements`; null on
   * MySQL/MariaDB before the first look (the server looks at start-up: main.ts's plantEventsLine).
   */
  async plantEventsWay(): Promise<PlantEventsWay | null> {
    if (!this.enabled) return 'off';
    if (this.dataSource.options.type === 'better-sqlite3') return 'statements';
    const triggers = await this.triggers?.catch(() => undefined);
    return triggers === undefined ? null : triggers ? 'triggers' : 'statements';
  }

  /**
   * The start-up's line on how plant events are written (main.ts): by the triggers, or in each
   * write's transaction and what the server must allow for the triggers. None with events off or
   * on SQLite, where there is no choice to tell.
   */
  async plantEventsLine(): Promise<string | undefined> {
    if (!this.enabled || this.dataSource.options.type === 'better-sqlite3') return undefined;
    return plantEventsLine(this.dataSource, await this.usesTriggers());
  }

  /** `rows` events were written by this service (`committed`: and their transaction committed): counted, and the relay told. */
  private recorded(rows: number, committed = true): void {
    if (rows === 0) return;
    this.backlog += rows;
    this.onRecorded?.(committed);
  }

  /** After an import or an admin change of the store list: counts, never the list. */
  storesChanged(manager: EntityManager, change: StoresChange): Promise<void> {
    if (change.added + change.updated + change.removed === 0) return Promise.resolve();
    return this.record(manager, `${this.prefix}.stores.changed`, EVENT_TYPES.storesChanged, 'stores', change);
  }

  /** After a holiday of the chain was set or deleted: the holiday itself (every store of its states keeps its hours on that date). */
  holidayChanged(manager: EntityManager, change: HolidayChange, actor: Actor): Promise<void> {
    return this.record(manager, `${this.prefix}.holidays.changed`, EVENT_TYPES.holidayChanged, `holidays/${change.date}`, { ...change, tokenId: actor });
  }

  private async record(manager: EntityManager, subject: string, type: string, ceSubject: string, data: object): Promise<void> {
    if (!this.enabled) return;
    await this.checkRoom(manager);
    const event = this.event(type, ceSubject, data);
    await manager.query(INSERT, [event.id, subject, JSON.stringify(event)]);
    this.recorded(1, false);
  }

  /**
   * 503 when the outbox is full. The estimate decides the common case; it is counted afresh when
   * too old to trust (see the class comment) and before a refusal, since a write counted by the
   * relay and by `recorded` alike makes it one too high.
   */
  private async checkRoom(manager: EntityManager): Promise<void> {
    const count = async () => {
      const [row] = await manager.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM event_outbox');
      this.counted(Number(row.n));
    };
    if (performance.now() - this.countedAt > this.countValidMs) await count();
    else if (this.backlog >= this.maxRows) await count();
    if (this.backlog >= this.maxRows) {
      throw new ServiceUnavailableException(
        `change events cannot be delivered right now and ${this.backlog} wait already (EVENTS_OUTBOX_MAX_ROWS); try again later`,
      );
    }
  }

  private event(type: string, subject: string, data: object) {
    return {
      specversion: '1.0',
      id: randomUUID(),
      source: EVENT_SOURCE,
      type,
      subject,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data,
    };
  }
}

/**
 * The CloudEvents `subject` of a plant: ids are per team (and a deleted highest id is given
 * again), so the team is part of it. One id's incarnations: docs/events.md.
 */
function plantSubject({ team, id }: Pick<PlantChange, 'team' | 'id'>): string {
  return `teams/${team}/plants/${id}`;
}

/**
 * A plant creation's statements (the write last) inside a transaction already open on `manager`:
 * the write first, then the event's own INSERT where there is one, only if the write changed a
 * row, since a statement that fails undoes itself and not the transaction's earlier ones. The
 * trigger's session variables (`unlessChanged`) are cleared when the write failed or changed no
 * row, as runStatements does for its single round trip. Answers the rows the write changed.
 */
async function writeIn(manager: EntityManager, statements: Statement[], unlessChanged?: string): Promise<number> {
  const runner = manager.queryRunner!;
  const run = async ({ sql, params }: Statement) => ((await runner.query(sql, params, true)) as { affected?: number }).affected ?? 0;
  const write = statements.at(-1)!;
  if (!unlessChanged) {
    const changed = await run(write);
    if (changed > 0) for (const event of statements.slice(0, -1)) await run(event);
    return changed;
  }
  let changed = 0;
  try {
    for (const statement of statements) changed = await run(statement);
  } catch (error) {
    await runner.query(unlessChanged).catch(() => undefined);
    throw error;
  }
  if (changed === 0) await runner.query(unlessChanged);
  return changed;
}
