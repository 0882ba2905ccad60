import { createReadStream, createWriteStream } from 'node:fs';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';
import { DataSource } from 'typeorm';
import { STORE_CSV_COLUMNS, formatProblem, validateStoreRecord, type RowProblem, type StoreRow } from './store-csv.js';
import { Store, WEEKDAYS } from './store.entity.js';
import { ZipGeocoder } from './zip-geocoder.js';

export interface ImportOptions {
  dryRun?: boolean;
  /** Delete stores whose code is not in the file (only after the whole file is valid). */
  prune?: boolean;
}

export interface ImportSummary {
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  pruned: number;
  warnings: string[];
}

/** How many problems an error report lists before it says "and N more". */
export const MAX_LISTED_PROBLEMS = 50;
/** Rows per INSERT: 17 parameters each stays far below SQLite's 32,766 variables. */
const WRITE_CHUNK = 500;
const EXPORT_PAGE = 1000;

export class StoreImportError extends Error {
  constructor(readonly problems: RowProblem[]) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map(formatProblem);
    const rest = problems.length - listed.length;
    super(
      `the file was not imported, ${problems.length} problem${problems.length === 1 ? '' : 's'} found:\n  ${listed.join('\n  ')}` +
        (rest > 0 ? `\n  … and ${rest} more` : ''),
    );
  }
}

const STORED_FIELDS = ['name', 'address', 'city', 'state', 'zip', 'lat', 'lng', ...WEEKDAYS] as const;

function sameStore(row: StoreRow, store: Store): boolean {
  return STORED_FIELDS.every((field) => row[field] === store[field]);
}

/**
 * The stores CSV: `locations import` validates every row first and writes nothing unless
 * all are valid; then one transaction upserts by code. `locations export` writes the same
 * format, so an export imports back unchanged.
 */
@Injectable()
export class StoreImportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly geocoder: ZipGeocoder,
  ) {}

  importFile(path: string, options: ImportOptions = {}): Promise<ImportSummary> {
    return this.import(createReadStream(path), options);
  }

  async import(input: Readable, options: ImportOptions = {}): Promise<ImportSummary> {
    const { rows, warnings } = await this.readAndValidate(input);
    const summary: ImportSummary = { read: rows.length, inserted: 0, updated: 0, unchanged: 0, pruned: 0, warnings: warnings.map(formatProblem) };
    await this.dataSource.transaction(async (manager) => {
      const existing = new Map((await manager.find(Store)).map((store) => [store.code, store]));
      const changed: Array<Partial<Store>> = [];
      const now = new Date();
      for (const row of rows) {
        const current = existing.get(row.code);
        if (!current) summary.inserted++;
        else if (sameStore(row, current)) summary.unchanged++;
        else summary.updated++;
        if (!current || !sameStore(row, current)) changed.push({ ...row, updatedAt: now });
        existing.delete(row.code);
      }
      if (options.prune) summary.pruned = existing.size;
      if (options.dryRun) return;
      for (let i = 0; i < changed.length; i += WRITE_CHUNK) {
        await manager
          .createQueryBuilder()
          .insert()
          .into(Store)
          .values(changed.slice(i, i + WRITE_CHUNK))
          .orUpdate([...STORED_FIELDS, 'updated_at'], ['code'])
          .updateEntity(false)
          .execute();
      }
      if (options.prune) {
        const ids = [...existing.values()].map((store) => store.id);
        for (let i = 0; i < ids.length; i += WRITE_CHUNK) await manager.delete(Store, ids.slice(i, i + WRITE_CHUNK));
      }
    });
    return summary;
  }

  /** Every row checked, every problem collected; throws StoreImportError if there is any. */
  private async readAndValidate(input: Readable): Promise<{ rows: StoreRow[]; warnings: RowProblem[] }> {
    const parser = input.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
    input.on('error', (error) => parser.destroy(error));
    const problems: RowProblem[] = [];
    const warnings: RowProblem[] = [];
    const rows: StoreRow[] = [];
    const firstLine = new Map<string, number>();
    let header = true;
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        if (header) {
          header = false;
          const names = record.map((name) => name.trim().toLowerCase());
          if (names.join(',') !== STORE_CSV_COLUMNS.join(',')) {
            throw new StoreImportError([{ line: info.lines, reason: `the header must be exactly: ${STORE_CSV_COLUMNS.join(',')}` }]);
          }
          continue;
        }
        const result = validateStoreRecord(record, info.lines, (zip) => this.geocoder.lookup(zip));
        problems.push(...result.problems);
        warnings.push(...result.warnings);
        if (!result.row) continue;
        const seen = firstLine.get(result.row.code);
        if (seen !== undefined) problems.push({ line: info.lines, column: 'code', reason: `"${result.row.code}" already appears on line ${seen}` });
        else firstLine.set(result.row.code, info.lines);
        rows.push(result.row);
      }
    } catch (error) {
      if (error instanceof StoreImportError) throw error;
      // csv-parse stops at a broken quote and the like; report it with what it knows.
      const line = (error as { lines?: number }).lines;
      const message = error instanceof Error ? error.message : String(error);
      throw new StoreImportError([...problems, { line: line ?? 0, reason: `the file cannot be read as CSV: ${message}` }]);
    }
    if (header) problems.push({ line: 1, reason: `the file is empty; the header must be: ${STORE_CSV_COLUMNS.join(',')}` });
    if (problems.length > 0) throw new StoreImportError(problems);
    return { rows, warnings };
  }

  /** Writes every store, ordered by code, in the import format; pages keep memory flat. */
  async export(output: Writable): Promise<number> {
    let count = 0;
    const repository = this.dataSource.getRepository(Store);
    async function* records() {
      for (let after: string | undefined; ; ) {
        const query = repository.createQueryBuilder('store').orderBy('store.code', 'ASC').limit(EXPORT_PAGE);
        if (after !== undefined) query.where('store.code > :after', { after });
        const page = await query.getMany();
        for (const store of page) {
          yield STORE_CSV_COLUMNS.map((column) => (column === 'lat' || column === 'lng' ? store[column].toFixed(6) : store[column]));
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
