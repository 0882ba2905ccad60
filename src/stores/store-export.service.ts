import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { stringify } from 'csv-stringify';
import type { Repository } from 'typeorm';
import { FREE_TEXT_COLUMNS, guardCell, STORE_CSV_COLUMNS } from './store-csv.js';
import { Store } from './store.entity.js';

const EXPORT_PAGE = 1000;
const FREE_TEXT = new Set<string>(FREE_TEXT_COLUMNS);

/**
 * `locations export` and `GET /admin/stores.csv`: every store, ordered by code, in the format
 * `locations import` reads; free-text cells that a spreadsheet would run as a formula are guarded
 * with a leading `'` (guardCell), which the import takes off again.
 */
@Injectable()
export class StoreExportService {
  constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}

  /** Writes the CSV to `output`; pages keep memory flat. Returns the number of stores. */
  async export(output: Writable): Promise<number> {
    let count = 0;
    const stores = this.stores;
    async function* records() {
      for (let after: string | undefined; ; ) {
        const query = stores.createQueryBuilder('store').orderBy('store.code', 'ASC').limit(EXPORT_PAGE);
        if (after !== undefined) query.where('store.code > :after', { after });
        const page = await query.getMany();
        for (const store of page) {
          yield STORE_CSV_COLUMNS.map((column) => (column === 'lat' || column === 'lng' ? store[column].toFixed(6) : FREE_TEXT.has(column) ? guardCell(store[column]) : store[column]));
        }
        count += page.length;
        if (page.length < EXPORT_PAGE) return;
        after = page[page.length - 1].code;
      }
    }
    await pipeline(Readable.from(records()), stringify({ header: true, columns: [...STORE_CSV_COLUMNS] }), output);
    return count;
  }

  exportFile(path: string): Promise<number> {
    return this.export(createWriteStream(path));
  }
}
