import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { retryWriteConflicts } from '../database/database-errors.js';
import { OutboxService } from '../events/outbox.service.js';
import { Metrics } from '../metrics/metrics.js';
import { INDEX_FIELD_NAMES, STORED_FIELDS, type CatalogStore, type StoreRow } from './store-fields.js';
import { Store } from './store.entity.js';

export { STORED_FIELDS, type CatalogStore } from './store-fields.js';
export type StoredField = (typeof STORED_FIELDS)[number];

/** The fields the search's index reads (CatalogStore), by the table's names (which are the columns'), and the id the pages go by. */
const PAGE_SQL = `SELECT id, ${INDEX_FIELD_NAMES.join(', ')} FROM stores WHERE id > ? ORDER BY id LIMIT ?`;

/** Rows per statement of `put`: 18 parameters each (a store's fields and its update time) stays far below SQLite's 32,766 variables. */
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
    const { driver } = this.manager.connection;
    const updatedAt: unknown = driver.preparePersistentValue(new Date(), this.manager.connection.getMetadata(Store).findColumnWithPropertyName('updatedAt')!);
    for (let i = 0; i < rows.length; i += PUT_CHUNK) {
      const chunk = rows.slice(i, i + PUT_CHUNK);
      const params: unknown[] = [];
      for (const row of chunk) params.push(row.code, ...STORED_FIELDS.map((field) => row[field]), updatedAt);
      await this.manager.query(upsertSql(driver.options.type !== 'better-sqlite3', chunk.length), params);
    }
    this.change.added += added;
    this.change.updated += rows.length - added;
  };

  /** Deletes stores by id. */
  readonly remove = async (ids: readonly number[]): Promise<void> => {
    for (let i = 0; i < ids.length; i += REMOVE_CHUNK) await this.manager.delete(Store, ids.slice(i, i + REMOVE_CHUNK));
    this.change.removed += ids.length;
  };

  get changed(): boolean {
    return this.change.added + this.change.updated + this.change.removed > 0;
  }
}

/**
 * The store catalogue: for its readers (the search's index in locations/) the version and every
 * store page by page; for its writers (the admin API, the import) the one door every change goes
 * through, `write`. The only door into the catalogue for another folder, and the only file that
 * writes `store_catalog` (src/stores/catalog-door.spec.ts checks the tree for it).
 */
@Injectable()
export class StoreCatalog {
  private readonly listeners: Array<() => Promise<void>> = [];
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
   * anything, the version is bumped and the `stores.changed` event written in the same
   * transaction, and after the commit this process's listeners run (the search index) before
   * this answers. A write that changed nothing commits nothing, bumps nothing and tells no one.
   * A write conflict runs `work` again from the start, so it must not keep state across tries.
   */
  async write<T>(writer: CatalogWriter, work: (write: CatalogWrite) => Promise<T>): Promise<{ value: T; version: number; change: CatalogWrite['change'] }> {
    const result = await retryWriteConflicts(() =>
      this.dataSource.transaction(async (manager) => {
        const begun = performance.now();
        const rows: Array<{ version: number | string }> = await manager.query(
          `SELECT version FROM store_catalog WHERE id = 1${this.mysql ? ' FOR UPDATE' : ''}`,
        );
        const write = new CatalogWrite(manager, Number(rows[0].version));
        const value = await work(write);
        let version = write.version;
        if (write.changed) {
          await manager.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
          version++;
          await this.outbox.storesChanged(manager, write.change);
        }
        return { value, version, change: write.change, changed: write.changed, begun };
      }),
    );
    this.metrics.storeCatalogWriteDuration.observe({ writer }, (performance.now() - result.begun) / 1000);
    if (result.changed) await this.changed();
    return { value: result.value, version: result.version, change: result.change };
  }

  /**
   * Runs `listener` after each change this process commits (the server's index reloads at once
   * and the write answers after it; other instances poll `version()`). The command line registers none.
   */
  onChange(listener: () => Promise<void>): void {
    this.listeners.push(listener);
  }

  private async changed(): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener()));
  }
}
