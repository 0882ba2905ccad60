import { Injectable } from '@nestjs/common';
import type { Problem } from '../common/error-body.js';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { zoneOf } from '../geo/time-zones.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { ServicesService } from './services.service.js';
import { StoreCatalog, UnknownServiceError } from './store-catalog.js';
import { validateStoreRecord, type RowWarning } from './store-csv.js';
import { KEPT_FIELDS, STORED_FIELDS, type StoreFields, STORE_FIELD_NAMES } from '../shared/store-fields.js';
import { Store } from './store.entity.js';

export type { StoreFields } from '../shared/store-fields.js';

/** No store has this code. */
export class StoreNotFoundError extends Error {
  constructor(readonly code: string) {
    super(`store ${JSON.stringify(code)} not found`);
  }
}

/** The fields of a store break a rule of the store CSV; the message names each, with the import's words, and `problems` has them as data. */
export class StoreFieldsError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; '));
  }
}

/**
 * One store at a time, for the admin API: the same checks as a row of the CSV import
 * (validateStoreRecord, the same texts), written through the catalogue's one door
 * (StoreCatalog.write) as an import is: the version bumped and the change event written in the
 * transaction, so that every instance's search index takes it within STORE_INDEX_REFRESH_MS
 * (this one at once). A store sent as it is stored writes nothing.
 */
@Injectable()
export class StoreAdminService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly geocoder: ZipGeocoder,
    private readonly catalog: StoreCatalog,
    private readonly services: ServicesService,
  ) {}

  /**
   * Creates or replaces the store `code`; `created` tells which. Invalid fields: StoreFieldsError
   * naming each. A field kept as stored (KEPT_FIELDS) that `fields` leaves out stays as it is.
   */
  async upsert(code: string, fields: StoreFields): Promise<{ store: Store; created: boolean; warnings: RowWarning[] }> {
    const columns = STORE_FIELD_NAMES.filter((column) => !KEPT_FIELDS.includes(column) || fields[column as keyof StoreFields] !== undefined);
    const record = columns.map((column) => (column === 'code' ? code : (fields[column] ?? '')));
    const lookups = { zip: (zip: string) => this.geocoder.lookup(zip), zone: zoneOf, services: await this.services.slugs() };
    const { row, problems, warnings } = validateStoreRecord(record, 0, lookups, columns);
    if (!row) throw new StoreFieldsError(problems.map((p) => ({ field: p.column, code: p.code, message: p.reason })));
    // The path is the code as given; a code with surrounding spaces would be stored trimmed under another key.
    if (row.code !== code) throw new StoreFieldsError([{ field: 'code', code: 'white_space', message: 'has white space around it' }]);
    const write = this.catalog.write('admin', async ({ manager, put }) => {
      const current = await manager.findOneBy(Store, { code });
      // A copy per try: a retried transaction must not see the stored values of the last one.
      const stored = { ...row };
      for (const field of KEPT_FIELDS) (stored as Record<string, unknown>)[field] ??= current?.[field] ?? '';
      if (current && STORED_FIELDS.every((field) => current[field] === stored[field])) return { store: current, created: false };
      await put([stored], current ? 0 : 1);
      return { store: await manager.findOneByOrFail(Store, { code }), created: !current };
    });
    // A service deleted since the vocabulary was read: the door refused it, in the words of the check.
    const { value } = await write.catch((error: unknown) => {
      if (error instanceof UnknownServiceError) throw new StoreFieldsError([{ field: 'services', code: 'unknown_service', message: error.message }]);
      throw error;
    });
    return { store: value.store, created: value.created, warnings };
  }

  async remove(code: string): Promise<Store> {
    const { value: store } = await this.catalog.write('admin', async ({ manager, remove }) => {
      const current = await manager.findOneBy(Store, { code });
      if (current) await remove([current.id]);
      return current;
    });
    if (!store) throw new StoreNotFoundError(code);
    return store;
  }

  async get(code: string): Promise<Store> {
    const store = await this.dataSource.getRepository(Store).findOneBy({ code });
    if (!store) throw new StoreNotFoundError(code);
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
    const query = this.dataSource
      .getRepository(Store)
      .createQueryBuilder('store')
      .orderBy('store.code', 'ASC')
      .take(limit + 1);
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
