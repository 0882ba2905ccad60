import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Store } from './store.entity.js';

/** A store as a reader of the whole catalogue gets it: mysql2 gives DECIMAL as text, better-sqlite3 as a number. */
export type CatalogStore = Pick<
  Store,
  'code' | 'name' | 'address' | 'city' | 'state' | 'zip' | 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday' | 'time_zone'
> & {
  lat: number | string;
  lng: number | string;
};

const PAGE_SQL =
  'SELECT id, code, name, address, city, state, zip, lat, lng, monday, tuesday, wednesday, thursday, friday, saturday, sunday, time_zone FROM stores WHERE id > ? ORDER BY id LIMIT ?';

/**
 * The store catalogue as its readers see it (the search's index in locations/): the version
 * every write bumps in its transaction, every store page by page, and a hook that runs after
 * this process committed a change. The only door into the catalogue for another folder.
 */
@Injectable()
export class StoreCatalog {
  private readonly listeners: Array<() => Promise<void>> = [];

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
    for (let after = 0; ; ) {
      const page: Array<CatalogStore & { id: number | string }> = await this.dataSource.query(PAGE_SQL, [after, pageSize]);
      yield page;
      if (page.length < pageSize) return;
      after = Number(page[page.length - 1].id);
    }
  }

  /**
   * Runs `listener` after each change this process commits (the server's index reloads at once
   * and the write answers after it; other instances poll `version()`). The command line registers none.
   */
  onChange(listener: () => Promise<void>): void {
    this.listeners.push(listener);
  }

  /** Called by the writers of this folder once their transaction committed. */
  async changed(): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener()));
  }
}
