import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { retryWriteConflicts } from '../database/database-errors.js';
import { OutboxService } from '../events/outbox.service.js';
import { Metrics } from '../metrics/metrics.js';
import { hoursProblem } from '../shared/business-hours.js';
import { SERVICE_SLUG, servicesOf } from '../shared/services.js';
import { dayNumber } from '../shared/special-days.js';
import { INDEX_FIELD_NAMES, STORED_FIELDS, type CatalogStore, type StoreRow } from '../shared/store-fields.js';
import { Holiday } from './holiday.entity.js';
import { Service } from './service.entity.js';
import { Store } from './store.entity.js';

export type { CatalogStore } from '../shared/store-fields.js';

/** The fields the search's index reads (CatalogStore), by the table's names (which are the columns'), and the id the pages go by. */
const PAGE_SQL = `SELECT id, ${INDEX_FIELD_NAMES.join(', ')} FROM stores WHERE id > ? ORDER BY id LIMIT ?`;

/** The stores of some codes, as PAGE_SQL reads them; `(?)` becomes one placeholder per code. */
const CODES_SQL = `SELECT ${INDEX_FIELD_NAMES.join(', ')} FROM stores WHERE code IN (?)`;
/** Codes per read by code. */
const CODES_CHUNK = 500;

/**
 * A commit that changes more stores than this is logged as "reload" (NULL) rather than listed:
 * another instance then reloads the whole catalogue, cheaper than reading thousands of stores
 * one code at a time, and the log's row stays small (64 characters a code at most: 32 KB).
 */
export const CHANGE_LOG_MAX_STORES = 500;
/** Versions kept in `store_changes`: an instance further behind than this reloads. */
const CHANGE_LOG_KEEP = 1000;

/**
 * What one or more committed catalogue versions changed, up to `version`: every store changed
 * as it now is (`stores`), and the codes of those gone (`removed`); or `reload` when that was
 * too much to list.
 */
export type CatalogChange = { version: number; reload: true } | { version: number; reload?: false; stores: CatalogStore[]; removed: string[] };

/** Rows per statement of `put`: 22 parameters each (a store's fields and its update time), 11,000 a statement, stays far below SQLite's 32,766 variables. */
const PUT_CHUNK = 500;
/** Ids per DELETE of `remove`. */
const REMOVE_CHUNK = 1000;

const PUT_COLUMNS = ['code', ...STORED_FIELDS, 'updated_at'];
const upserts = new Map<string, string>();

/** `INSERT … ON DUPLICATE KEY UPDATE` (MySQL) or `… ON CONFLICT (code) DO UPDATE` (SQLite) of `rows` stores, as TypeORM's `orUpdate` writes it. */
function upsertSql(mysql: boolean, rows: number): string {
  const key = `${mysql}:${rows}`;
  let sql = upserts.get(key);
  if (!sql) {
    const quote = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    const tuple = `(${PUT_COLUMNS.map(() => '?').join(', ')})`;
    const updates = [...STORED_FIELDS, 'updated_at']
      .map((c) => (mysql ? `${quote(c)} = VALUES(${quote(c)})` : `${quote(c)} = excluded.${quote(c)}`))
      .join(', ');
    sql = `INSERT INTO ${quote('stores')} (${PUT_COLUMNS.map(quote).join(', ')}) VALUES ${Array.from({ length: rows }, () => tuple).join(', ')} ${mysql ? 'ON DUPLICATE KEY UPDATE' : `ON CONFLICT (${quote('code')}) DO UPDATE SET`} ${updates}`;
    upserts.set(key, sql);
  }
  return sql;
}

/**
 * A holiday of the chain as the search's index reads it: on `date` (in each store's own calendar)
 * the stores of `states` (comma-separated codes; empty: every store) keep `hours`.
 */
export interface CatalogHoliday {
  date: string;
  name: string;
  hours: string;
  states: string;
}

const HOLIDAYS_SQL = 'SELECT date, name, hours, states FROM holidays ORDER BY date';

/** A service of the chain as the catalogue writes it (Service). */
export interface CatalogService {
  slug: string;
  label: string;
  description: string | null;
}

/** A store names a service the chain does not have (any more): checked again in the writing transaction, so that no delete slips in between. */
export class UnknownServiceError extends Error {
  constructor(readonly slug: string) {
    super(`"${slug}" is not a service of the chain (GET /admin/services lists them)`);
  }
}

/** A service some stores still have cannot be removed: they would name a service that is not there. */
export class ServiceInUseError extends Error {
  constructor(
    readonly slug: string,
    readonly stores: number,
  ) {
    super(`service ${slug} is offered by ${stores} store${stores === 1 ? '' : 's'}; take it off ${stores === 1 ? 'that store' : 'those stores'} first`);
  }
}

/** Who wrote, for the write-time histogram. */
export type CatalogWriter = 'admin' | 'import';

/**
 * The writes of one catalogue transaction, as the door hands them to a writer: reads in the
 * transaction through `manager`, the rows written only through `put` and `remove` (bound: a
 * writer may destructure them), which count what the commit's event and the version bump are made of.
 */
export class CatalogWrite {
  /** Stores added, replaced and removed so far in this transaction. */
  readonly change = { added: 0, updated: 0, removed: 0 };
  /** The codes written or removed so far, for the change log; undefined once there are more than CHANGE_LOG_MAX_STORES. */
  codes: Set<string> | undefined = new Set();

  constructor(
    readonly manager: EntityManager,
    /** `store_catalog.version` when the transaction began (locked on MySQL: no other catalogue write commits before this one ends). */
    readonly version: number,
  ) {}

  /**
   * Inserts or replaces stores by code (an existing store keeps its id and creation time); `added`
   * of them are new. Plain SQL, PUT_CHUNK rows a statement (the same text for every full chunk,
   * prepared once): TypeORM's query builder spent most of an import's write building its
   * statements, 9.8 s of 100,000 rows on SQLite, where plant writes wait for the transaction.
   */
  readonly put = async (rows: readonly StoreRow[], added: number): Promise<void> => {
    if (rows.length === 0) return;
    await this.checkServices(rows);
    const { driver } = this.manager.connection;
    const updatedAt: unknown = driver.preparePersistentValue(new Date(), this.manager.connection.getMetadata(Store).findColumnWithPropertyName('updatedAt')!);
    for (let i = 0; i < rows.length; i += PUT_CHUNK) {
      const chunk = rows.slice(i, i + PUT_CHUNK);
      const params: unknown[] = [];
      for (const row of chunk) params.push(row.code, ...STORED_FIELDS.map((field) => row[field]), updatedAt);
      await this.manager.query(upsertSql(driver.options.type !== 'better-sqlite3', chunk.length), params);
    }
    this.log(rows.map((row) => row.code));
    this.change.added += added;
    this.change.updated += rows.length - added;
  };

  /** Deletes stores by id. */
  readonly remove = async (ids: readonly number[]): Promise<void> => {
    for (let i = 0; i < ids.length; i += REMOVE_CHUNK) {
      const chunk = ids.slice(i, i + REMOVE_CHUNK);
      // The log names stores by code, the only key other instances know them by.
      if (this.codes && this.codes.size + chunk.length <= CHANGE_LOG_MAX_STORES) {
        const rows: Array<{ code: string }> = await this.manager.query(`SELECT code FROM stores WHERE id IN (${chunk.map(() => '?').join(', ')})`, [...chunk]);
        this.log(rows.map((row) => row.code));
      } else {
        this.codes = undefined;
      }
      await this.manager.delete(Store, chunk);
    }
    this.change.removed += ids.length;
  };

  /** Whether a holiday was set or deleted in this transaction: every store's hours on its date may change. */
  holidaysChanged = false;

  /** Sets the holiday of `holiday.date` (added or replaced); every instance's index then reloads, as every store may be concerned. */
  readonly setHoliday = async (holiday: CatalogHoliday): Promise<void> => {
    const { driver } = this.manager.connection;
    const mysql = driver.options.type !== 'better-sqlite3';
    const updatedAt: unknown = driver.preparePersistentValue(new Date(), this.manager.connection.getMetadata(Holiday).findColumnWithPropertyName('updatedAt')!);
    await this.manager.query(
      mysql
        ? 'INSERT INTO holidays (date, name, hours, states, updated_at) VALUES (?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE name = VALUES(name), hours = VALUES(hours), states = VALUES(states), updated_at = VALUES(updated_at)'
        : 'INSERT INTO holidays (date, name, hours, states, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (date) DO UPDATE SET name = excluded.name, hours = excluded.hours, states = excluded.states, updated_at = excluded.updated_at',
      [holiday.date, holiday.name, holiday.hours, holiday.states, updatedAt],
    );
    this.holidaysChanged = true;
    this.codes = undefined;
  };

  /** Deletes the holiday of `date`; whether there was one. */
  readonly removeHoliday = async (date: string): Promise<boolean> => {
    const found: CatalogHoliday[] = await this.manager.query('SELECT date FROM holidays WHERE date = ?', [date]);
    if (found.length === 0) return false;
    await this.manager.query('DELETE FROM holidays WHERE date = ?', [date]);
    this.holidaysChanged = true;
    this.codes = undefined;
    return true;
  };

  /** Refuses rows that name a service the chain does not have now, in this transaction (the callers checked against a vocabulary read before it). */
  private async checkServices(rows: readonly StoreRow[]): Promise<void> {
    const named = new Set<string>();
    for (const row of rows) if (row.services) for (const slug of servicesOf(row.services)) named.add(slug);
    if (named.size === 0) return;
    const known = new Set((await this.manager.query<Array<{ slug: string }>>('SELECT slug FROM services')).map((row) => row.slug));
    for (const slug of named) if (!known.has(slug)) throw new UnknownServiceError(slug);
  }

  /** Whether the chain's services were set or deleted in this transaction: every instance's index then reloads (the filter's vocabulary). */
  servicesChanged = false;

  /** Sets the service `service.slug` (added or replaced). */
  readonly setService = async (service: CatalogService): Promise<void> => {
    const { driver } = this.manager.connection;
    const mysql = driver.options.type !== 'better-sqlite3';
    const updatedAt: unknown = driver.preparePersistentValue(new Date(), this.manager.connection.getMetadata(Service).findColumnWithPropertyName('updatedAt')!);
    await this.manager.query(
      mysql
        ? 'INSERT INTO services (slug, label, description, updated_at) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE label = VALUES(label), description = VALUES(description), updated_at = VALUES(updated_at)'
        : 'INSERT INTO services (slug, label, description, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET label = excluded.label, description = excluded.description, updated_at = excluded.updated_at',
      [service.slug, service.label, service.description, updatedAt],
    );
    this.servicesChanged = true;
    this.codes = undefined;
  };

  /**
   * Deletes the service `slug`; whether there was one. ServiceInUseError, and nothing deleted, while
   * stores still have it (counted here, under the catalogue's lock: no store write comes between).
   */
  readonly removeService = async (slug: string): Promise<boolean> => {
    const found: Array<{ slug: string }> = await this.manager.query('SELECT slug FROM services WHERE slug = ?', [slug]);
    if (found.length === 0) return false;
    const stores = await this.storesWithService(slug);
    if (stores > 0) throw new ServiceInUseError(slug, stores);
    await this.manager.query('DELETE FROM services WHERE slug = ?', [slug]);
    this.servicesChanged = true;
    this.codes = undefined;
    return true;
  };

  /**
   * How many stores have service `slug`: their text with a separator on either side holds it with
   * one on either side. '!' escapes LIKE's `_` (a slug's underscore), as StoreAdminService.page does.
   */
  private async storesWithService(slug: string): Promise<number> {
    const mysql = this.manager.connection.driver.options.type !== 'better-sqlite3';
    const padded = mysql ? "CONCAT('|', services, '|')" : "('|' || services || '|')";
    const pattern = `%|${slug.replace(/[!%_]/g, (c) => `!${c}`)}|%`;
    const rows: Array<{ stores: number | string }> = await this.manager.query(`SELECT COUNT(*) AS stores FROM stores WHERE ${padded} LIKE ? ESCAPE '!'`, [
      pattern,
    ]);
    return Number(rows[0].stores);
  }

  private log(codes: string[]): void {
    if (this.codes && this.codes.size + codes.length > CHANGE_LOG_MAX_STORES * 2) this.codes = undefined;
    if (!this.codes) return;
    for (const code of codes) this.codes.add(code);
    if (this.codes.size > CHANGE_LOG_MAX_STORES) this.codes = undefined;
  }

  get changed(): boolean {
    return this.holidaysChanged || this.servicesChanged || this.change.added + this.change.updated + this.change.removed > 0;
  }
}

/**
 * The store catalogue: for its readers (the search's index in locations/) the version and every
 * store page by page; for its writers (the admin API, the import) the one door every change goes
 * through, `write`. The only door into the catalogue for another folder, and the only file that
 * writes `store_catalog` and its change log `store_changes` (src/stores/catalog-door.spec.ts checks the tree for it).
 */
@Injectable()
export class StoreCatalog {
  private readonly listeners: Array<(change: CatalogChange) => Promise<void>> = [];
  private readonly logger = new Logger(StoreCatalog.name);
  private readonly mysql: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly metrics: Metrics,
  ) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
  }

  /** `store_catalog.version`: changes with every committed import or admin write, on any instance. */
  async version(): Promise<number> {
    const rows: Array<{ version: number | string }> = await this.dataSource.query('SELECT version FROM store_catalog WHERE id = 1');
    return Number(rows[0]?.version ?? 0);
  }

  /** How many stores there are (the admin status). */
  async count(): Promise<number> {
    const rows: Array<{ stores: number | string }> = await this.dataSource.query('SELECT COUNT(*) AS stores FROM stores');
    return Number(rows[0].stores);
  }

  /**
   * The chain's holidays, by date, for the search's index. Every write checks them; a row edited
   * into the table by hand that does not parse is left out (and logged), rather than stopping the
   * index from loading.
   */
  async holidays(): Promise<CatalogHoliday[]> {
    const rows: CatalogHoliday[] = await this.dataSource.query(HOLIDAYS_SQL);
    return rows.filter((row) => {
      const valid = dayNumber(row.date) !== undefined && hoursProblem(row.hours) === null && /^([A-Z]{2}(,[A-Z]{2})*)?$/.test(row.states);
      if (!valid) this.logger.warn(`holiday ${JSON.stringify(row.date)} left out of the search: its row does not parse`);
      return valid;
    });
  }

  /**
   * The chain's services with their labels, by slug: the search's vocabulary (and what a store's
   * page shows). A slug edited into the table by hand that is no slug is left out (and logged), as a
   * holiday that does not parse.
   */
  async services(): Promise<Array<{ slug: string; label: string }>> {
    const rows: Array<{ slug: string; label: string }> = await this.dataSource.query('SELECT slug, label FROM services ORDER BY slug');
    return rows.filter(({ slug }) => {
      const valid = SERVICE_SLUG.test(slug);
      if (!valid) this.logger.warn(`service ${JSON.stringify(slug)} left out of the search: it is not a slug`);
      return valid;
    });
  }

  /** Every store in id order, `pageSize` at a time (small pages keep a reader's garbage young). */
  async *pages(pageSize: number): AsyncGenerator<CatalogStore[]> {
    for (let after = 0; ;) {
      const page: Array<CatalogStore & { id: number | string }> = await this.dataSource.query(PAGE_SQL, [after, pageSize]);
      yield page;
      if (page.length < pageSize) return;
      after = Number(page[page.length - 1].id);
    }
  }

  /**
   * Every change of the catalogue, one transaction each. `work` reads through `write.manager`
   * and changes stores only through `write.put` and `write.remove`. The version is read first,
   * FOR UPDATE on MySQL, so that catalogue writers queue on that one row instead of meeting
   * half-way in a deadlock (SQLite's transactions run one at a time anyway). When `work` changed
   * anything, the version is bumped, the `stores.changed` event and the change log's row (the codes
   * changed, see changesSince) written in the same transaction, and after the commit this
   * process's listeners run with the change (the search index applies it) before
   * this answers. A write that changed nothing commits nothing, bumps nothing and tells no one.
   * A write conflict runs `work` again from the start, so it must not keep state across tries.
   * `committed`, when given, runs once with `work`'s value after the commit and before the
   * listeners: there a writer lets go of what it held for `work` (an import's rows, tens of
   * megabytes), which would otherwise still be held while the index loads every store again.
   */
  async write<T>(
    writer: CatalogWriter,
    work: (write: CatalogWrite) => Promise<T>,
    committed?: (value: T) => void,
  ): Promise<{ value: T; version: number; change: CatalogWrite['change'] }> {
    const result = await retryWriteConflicts(() =>
      this.dataSource.transaction(async (manager) => {
        const begun = performance.now();
        const rows: Array<{ version: number | string }> = await manager.query(
          `SELECT version FROM store_catalog WHERE id = 1${this.mysql ? ' FOR UPDATE' : ''}`,
        );
        const write = new CatalogWrite(manager, Number(rows[0].version));
        const value = await work(write);
        let version = write.version;
        let change: CatalogChange | undefined;
        if (write.changed) {
          await manager.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
          version++;
          await this.outbox.storesChanged(manager, write.change);
          change = await this.logChange(manager, version, write.codes);
        }
        return { value, version, change: write.change, changed: change, begun };
      }),
    );
    this.metrics.storeCatalogWriteDuration.observe({ writer }, (performance.now() - result.begun) / 1000);
    committed?.(result.value);
    if (result.changed) await this.changed(result.changed);
    return { value: result.value, version: result.version, change: result.change };
  }

  /**
   * Writes `version`'s row of the change log and drops the oldest, in the writing transaction;
   * gives the change as this transaction leaves the stores (read back, so that the index holds
   * exactly what a reload would read).
   */
  private async logChange(manager: EntityManager, version: number, codes: Set<string> | undefined): Promise<CatalogChange> {
    await manager.query('INSERT INTO store_changes (version, stores) VALUES (?, ?)', [version, codes ? JSON.stringify([...codes]) : null]);
    await manager.query('DELETE FROM store_changes WHERE version <= ?', [version - CHANGE_LOG_KEEP]);
    return codes ? { version, ...(await this.storesOf(manager, [...codes])) } : { version, reload: true };
  }

  /** The stores of `codes` as they are now, and the codes of those that no longer exist. */
  private async storesOf(manager: EntityManager | DataSource, codes: string[]): Promise<{ stores: CatalogStore[]; removed: string[] }> {
    const stores: CatalogStore[] = [];
    for (let i = 0; i < codes.length; i += CODES_CHUNK) {
      const chunk = codes.slice(i, i + CODES_CHUNK);
      stores.push(...(await manager.query<CatalogStore[]>(CODES_SQL.replace('(?)', `(${chunk.map(() => '?').join(', ')})`), chunk)));
    }
    const found = new Set(stores.map((store) => store.code));
    return { stores, removed: codes.filter((code) => !found.has(code)) };
  }

  /**
   * What the catalogue changed after `version`, from the change log (one read of the log, one of
   * the stores it names): `reload` when the log no longer covers every later version, or one of
   * them was too big to list. The stores are read after the version, so they may already hold a
   * later change too; applying that change again later changes nothing.
   */
  async changesSince(version: number): Promise<CatalogChange> {
    const current = await this.version();
    if (current === version) return { version, stores: [], removed: [] };
    if (current < version) return { version: current, reload: true };
    const log: Array<{ version: number | string; stores: string | null }> = await this.dataSource.query(
      'SELECT version, stores FROM store_changes WHERE version > ? AND version <= ? ORDER BY version',
      [version, current],
    );
    if (log.length !== current - version || log.some((row) => row.stores === null)) return { version: current, reload: true };
    const codes = new Set<string>();
    for (const row of log) for (const code of JSON.parse(row.stores!) as string[]) codes.add(code);
    if (codes.size > CHANGE_LOG_MAX_STORES * 4) return { version: current, reload: true };
    return { version: current, ...(await this.storesOf(this.dataSource, [...codes])) };
  }

  /**
   * Runs `listener` with each change this process commits (the server's index applies it at once
   * and the write answers after it; other instances poll `version()` and read `changesSince`).
   * The command line registers none.
   */
  onChange(listener: (change: CatalogChange) => Promise<void>): void {
    this.listeners.push(listener);
  }

  /**
   * Runs every listener with a committed change. A listener that fails does not fail the write:
   * the change is committed whatever a listener makes of it, so the caller must hear so (a 500
   * for a committed write would make a client retry it). The failure is logged; the index it
   * concerns takes the change on its next refresh (STORE_INDEX_REFRESH_MS), as it takes another
   * instance's.
   */
  private async changed(change: CatalogChange): Promise<void> {
    const results = await Promise.allSettled(this.listeners.map((listener) => listener(change)));
    for (const result of results) {
      if (result.status === 'rejected') {
        const reason: unknown = result.reason;
        this.logger.warn(
          `catalogue version ${change.version} committed, but a listener failed on it: ${reason instanceof Error ? reason.message : String(reason)}`,
        );
      }
    }
  }
}
