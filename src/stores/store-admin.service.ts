import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { retryWriteConflicts } from '../database/database-errors.js';
import { OutboxService } from '../events/outbox.service.js';
import { zoneOf } from '../geo/time-zones.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { StoreCatalog } from './store-catalog.js';
import { STORE_CSV_COLUMNS, validateStoreRecord, type StoreRow } from './store-csv.js';
import { STORED_FIELDS } from './store-import.service.js';
import { Store } from './store.entity.js';

/** The fields of one store as the admin API takes them: the CSV row's, as text. */
export type StoreFields = Omit<Record<(typeof STORE_CSV_COLUMNS)[number], string>, 'code' | 'lat' | 'lng' | 'time_zone'> & { lat?: string; lng?: string; time_zone?: string };

const BUMP_VERSION = 'UPDATE store_catalog SET version = version + 1 WHERE id = 1';

/**
 * One store at a time, for the admin API: the same checks as a row of the CSV import
 * (validateStoreRecord, the same texts), and like an import each change bumps
 * `store_catalog.version` in its transaction, so that every instance's search index takes it
 * within STORE_INDEX_REFRESH_MS (this one at once).
 */
@Injectable()
export class StoreAdminService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly geocoder: ZipGeocoder,
    private readonly catalog: StoreCatalog,
    private readonly outbox: OutboxService,
  ) {}

  /** Creates or replaces the store `code`; `created` tells which. Invalid fields: 400 naming each. */
  async upsert(code: string, fields: StoreFields): Promise<{ store: Store; created: boolean; warnings: string[] }> {
    const record = STORE_CSV_COLUMNS.map((column) => (column === 'code' ? code : (fields[column] ?? '')));
    const { row, problems, warnings } = validateStoreRecord(record, 0, { zip: (zip) => this.geocoder.lookup(zip), zone: zoneOf });
    if (!row) throw new BadRequestException(problems.map((p) => (p.column ? `${p.column}: ${p.reason}` : p.reason)).join('; '));
    // The path is the code as given; a code with surrounding spaces would be stored trimmed under another key.
    if (row.code !== code) throw new BadRequestException('code: has white space around it');
    const result = await retryWriteConflicts(() =>
      this.dataSource.transaction(async (manager) => {
        const current = await manager.findOneBy(Store, { code });
        if (current && STORED_FIELDS.every((field) => current[field] === row[field])) return { store: current, created: false, changed: false };
        if (current) await manager.update(Store, { id: current.id }, { ...pick(row), updatedAt: new Date() });
        else await manager.insert(Store, { ...row });
        await manager.query(BUMP_VERSION);
        await this.outbox.storesChanged(manager, { added: current ? 0 : 1, updated: current ? 1 : 0, removed: 0 });
        return { store: await manager.findOneByOrFail(Store, { code }), created: !current, changed: true };
      }),
    );
    if (result.changed) await this.catalog.changed();
    return { store: result.store, created: result.created, warnings: warnings.map((w) => `${w.column}: ${w.reason}`) };
  }

  async remove(code: string): Promise<Store> {
    const store = await retryWriteConflicts(() =>
      this.dataSource.transaction(async (manager) => {
        const current = await manager.findOneBy(Store, { code });
        if (!current) return null;
        await manager.delete(Store, { id: current.id });
        await manager.query(BUMP_VERSION);
        await this.outbox.storesChanged(manager, { added: 0, updated: 0, removed: 1 });
        return current;
      }),
    );
    if (!store) throw notFound(code);
    await this.catalog.changed();
    return store;
  }

  async get(code: string): Promise<Store> {
    const store = await this.dataSource.getRepository(Store).findOneBy({ code });
    if (!store) throw notFound(code);
    return store;
  }

  /**
   * One page by code, as GET /plants pages by id: `nextAfter` is set when more follow. `state`
   * and `q` (a substring of code, name, address, city or ZIP, ignoring case) narrow it down; the
   * console's table filters with them. LOWER on both sides: the columns are utf8mb4_bin on MySQL
   * (codes compare exactly), where LIKE alone would match case. SQLite's LOWER knows ASCII
   * letters only. A scan either way, as any `%text%` is.
   */
  async page({ limit, after, state, q }: { limit: number; after?: string; state?: string; q?: string }): Promise<{ stores: Store[]; nextAfter?: string }> {
    const query = this.dataSource.getRepository(Store).createQueryBuilder('store').orderBy('store.code', 'ASC').take(limit + 1);
    if (after !== undefined) query.andWhere('store.code > :after', { after });
    if (state !== undefined) query.andWhere('store.state = :state', { state: state.toUpperCase() });
    if (q !== undefined) {
      // '!' escapes, not a backslash: that is an escape in MySQL's string literals and not in SQLite's.
      const pattern = `%${q.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`;
      const columns = ['code', 'name', 'address', 'city', 'zip'].map((column) => `LOWER(store.${column}) LIKE :pattern ESCAPE '!'`);
      query.andWhere(`(${columns.join(' OR ')})`, { pattern });
    }
    const stores = await query.getMany();
    if (stores.length <= limit) return { stores };
    stores.length = limit;
    return { stores, nextAfter: stores[limit - 1].code };
  }
}

const notFound = (code: string) => new NotFoundException(`store ${JSON.stringify(code)} not found`);

function pick(row: StoreRow): Partial<Store> {
  return Object.fromEntries(STORED_FIELDS.map((field) => [field, row[field]]));
}
