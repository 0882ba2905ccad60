import { createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { stringify } from 'csv-stringify/sync';
import type { Repository } from 'typeorm';
import { guardCell } from '../shared/csv-guard.js';
import { GUARDED_FIELDS, storeFieldText, STORE_FIELD_NAMES, type StoreFieldName } from '../shared/store-fields.js';
import { Pacer } from './pacer.js';
import { Store } from './store.entity.js';

const EXPORT_PAGE = 1000;
const GUARDED = new Set<string>(GUARDED_FIELDS);

/**
 * `locations export` and `GET /admin/stores.csv`: every store, ordered by code, in the format
 * `locations import` reads; free-text, phone and email cells that a spreadsheet would run as a formula are guarded
 * with a leading `'` (guardCell), which the import takes off again. `columns` picks some of the
 * columns, in their given order (the console's map reads code, lat and lng only: 3 MB rather
 * than 22 MB for 100,000 stores); only the full set can be imported back. `cpuShare` paces it as
 * the import is paced (Pacer): the admin API's export takes half the process, so that searches
 * beside it keep about half their rate instead of waiting behind page after page.
 */
@Injectable()
export class StoreExportService {
  constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}

  /** Writes the CSV to `output`; pages keep memory flat. Returns the number of stores. */
  async export(output: Writable, columns: readonly StoreFieldName[] = STORE_FIELD_NAMES, cpuShare = 1): Promise<number> {
    let count = 0;
    const pacer = new Pacer(cpuShare);
    const stores = this.stores;
    // Raw rows of the chosen columns (and the code, the cursor): no entity is built per store.
    const selected = [...new Set<StoreFieldName>(['code', ...columns])];
    // One CSV chunk per page (csv-stringify's sync form on 1,000 rows): a stream event per page
    // rather than per store, which halves the time of a 100,000-store export.
    async function* chunks() {
      yield stringify([columns]);
      for (let after: string | undefined; ;) {
        const query = stores
          .createQueryBuilder('store')
          .select(selected.map((column) => `store.${column}`))
          .orderBy('store.code', 'ASC')
          .limit(EXPORT_PAGE);
        if (after !== undefined) query.where('store.code > :after', { after });
        const page = await query.getRawMany<Record<`store_${StoreFieldName}`, string | number>>();
        if (page.length > 0) yield stringify(page.map((row) => columns.map((column) => cell(column, row[`store_${column}`]))));
        count += page.length;
        if (page.length < EXPORT_PAGE) return;
        after = String(page[page.length - 1].store_code);
        await pacer.pause();
      }
    }
    await pipeline(Readable.from(chunks()), output);
    return count;
  }

  exportFile(path: string): Promise<number> {
    return this.export(createWriteStream(path));
  }
}

/** A cell as the import reads it: coordinates with six decimals (mysql2 gives DECIMAL as text), free text, phone and email guarded. */
function cell(column: StoreFieldName, value: string | number): string {
  const text = storeFieldText(column, value);
  return GUARDED.has(column) ? guardCell(text) : text;
}
