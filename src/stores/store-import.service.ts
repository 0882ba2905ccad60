import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { parse } from 'csv-parse';
import { DataSource, In, type EntityManager } from 'typeorm';
import { retryWriteConflicts } from '../database/database-errors.js';
import { OutboxService } from '../events/outbox.service.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog } from './store-catalog.js';
import { STORE_CSV_COLUMNS, formatProblem, recordFirstLines, unguardRecord, validateStoreRecord, type RowProblem, type StoreRow } from './store-csv.js';
import { Store, WEEKDAYS } from './store.entity.js';

export interface ImportProgress {
  phase: 'validate' | 'write';
  rows: number;
  bytes: number;
  /** Size of the file, when reading a file. */
  totalBytes?: number;
}

export interface ImportOptions {
  dryRun?: boolean;
  /** Delete stores whose code is not in the file (only after the whole file is valid). */
  prune?: boolean;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * The share of this process's time the import may take, from 0 (exclusive) to 1 (the default:
   * as fast as it goes). The server's import takes half, so that searches and other requests
   * keep at least about half of their throughput while a large file is imported.
   */
  cpuShare?: number;
}

/** How long the import works before it pauses for the others (see Pacer). */
const SLICE_MS = 20;

/**
 * Keeps a long import to a share of the event loop: after each slice of SLICE_MS of work it waits
 * for (1 - share) / share of the time that slice took, during which other requests run.
 */
class Pacer {
  private since = performance.now();

  constructor(private readonly share: number) {}

  async pause(): Promise<void> {
    if (this.share >= 1) return;
    const worked = performance.now() - this.since;
    if (worked < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, (worked * (1 - this.share)) / this.share));
    this.since = performance.now();
  }
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
/** Rows per statement: 17 parameters each stays far below SQLite's 32,766 variables. */
const CHUNK = 500;
const PRUNE_PAGE = 1000;
const PROGRESS_EVERY_ROWS = 1000;

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

type Record = { record: string[]; info: { empty_lines: number } };

/**
 * The stores CSV. `locations import` streams the file twice: the first pass checks every
 * row (and keeps only the codes seen), the second writes them in one transaction, in
 * chunks, upserting by code. Memory stays flat whatever the size of the file; nothing is
 * written unless every row is valid.
 */
@Injectable()
export class StoreImportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly geocoder: ZipGeocoder,
    private readonly metrics: Metrics,
    private readonly catalog: StoreCatalog,
    private readonly outbox: OutboxService,
  ) {}

  importFile(path: string, options: ImportOptions = {}): Promise<ImportSummary> {
    const totalBytes = statSync(path).size;
    return this.import(() => createReadStream(path), { ...options, onProgress: options.onProgress && ((p) => options.onProgress!({ ...p, totalBytes })) });
  }

  /** `open` is called once per pass and must give the same content each time. */
  async import(open: () => Readable, options: ImportOptions = {}): Promise<ImportSummary> {
    const pacer = new Pacer(options.cpuShare ?? 1);
    const { codes, read, warnings } = await this.validate(open, pacer, options.onProgress);
    const summary: ImportSummary = { read, inserted: 0, updated: 0, unchanged: 0, pruned: 0, warnings: warnings.map(formatProblem) };
    const write = () => this.dataSource.transaction(async (manager) => {
      Object.assign(summary, { inserted: 0, updated: 0, unchanged: 0, pruned: 0 });
      let batch: StoreRow[] = [];
      const flush = async () => {
        await this.writeChunk(manager, batch, summary, !options.dryRun);
        batch = [];
      };
      for await (const { row, rows, bytes } of this.rows(open)) {
        await pacer.pause();
        batch.push(row);
        if (batch.length === CHUNK) await flush();
        if (rows % PROGRESS_EVERY_ROWS === 0) options.onProgress?.({ phase: 'write', rows, bytes });
      }
      await flush();
      options.onProgress?.({ phase: 'write', rows: read, bytes: Number.NaN });
      if (options.prune) summary.pruned = await this.prune(manager, codes, !options.dryRun);
      if (options.dryRun) return;
      if (summary.inserted + summary.updated + summary.pruned > 0) {
        await manager.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
        await this.outbox.storesChanged(manager, { added: summary.inserted, updated: summary.updated, removed: summary.pruned });
      }
    });
    // A write conflict rolls the whole transaction back: the next try starts from the file again.
    await retryWriteConflicts(write);
    if (!options.dryRun) {
      for (const outcome of ['inserted', 'updated', 'unchanged', 'pruned'] as const) this.metrics.storeImportRows.inc({ outcome }, summary[outcome]);
      // Not after a dry run: the server's search index reloads at once (StoreCatalog.onChange).
      await this.catalog.changed();
    }
    return summary;
  }

  /** First pass: every row checked, every problem collected; throws StoreImportError if there is any. */
  private async validate(open: () => Readable, pacer: Pacer, onProgress?: (p: ImportProgress) => void) {
    const problems: RowProblem[] = [];
    const warnings: RowProblem[] = [];
    const codes = new Map<string, number>();
    let read = 0;
    let sawHeader = false;
    for await (const { record, line, bytes, header } of this.records(open)) {
      await pacer.pause();
      if (header) {
        sawHeader = true;
        const names = record.map((name) => name.trim().toLowerCase());
        if (names.join(',') !== STORE_CSV_COLUMNS.join(',')) {
          throw new StoreImportError([{ line, reason: `the header must be exactly: ${STORE_CSV_COLUMNS.join(',')}` }]);
        }
        continue;
      }
      read++;
      const result = validateStoreRecord(record, line, (zip) => this.geocoder.lookup(zip));
      problems.push(...result.problems);
      warnings.push(...result.warnings);
      if (result.row) {
        const seen = codes.get(result.row.code);
        if (seen !== undefined) problems.push({ line, column: 'code', reason: `"${result.row.code}" already appears on line ${seen}` });
        else codes.set(result.row.code, line);
      }
      if (read % PROGRESS_EVERY_ROWS === 0) onProgress?.({ phase: 'validate', rows: read, bytes });
    }
    onProgress?.({ phase: 'validate', rows: read, bytes: Number.NaN });
    if (!sawHeader) {
      problems.push({ line: 1, reason: `the file is empty; the header must be: ${STORE_CSV_COLUMNS.join(',')}` });
    }
    if (problems.length > 0) throw new StoreImportError(problems);
    return { codes, read, warnings };
  }

  /** The CSV records of one pass, each with the line it starts on and the byte count read so far. */
  private async *records(open: () => Readable): AsyncGenerator<{ record: string[]; line: number; bytes: number; header: boolean }> {
    const input = open();
    let bytes = 0;
    input.on('data', (chunk: Buffer | string) => (bytes += chunk.length));
    const parser = input.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
    input.on('error', (error) => parser.destroy(error));
    const firstLine = recordFirstLines();
    let header = true;
    try {
      for await (const { record, info } of parser as AsyncIterable<Record>) {
        // The line is counted on the record as read; the fields are then taken back from the export's guard.
        const line = firstLine(record, info.empty_lines);
        yield { record: header ? record : unguardRecord(record), line, bytes, header };
        header = false;
      }
    } catch (error) {
      if (error instanceof StoreImportError) throw error;
      // csv-parse stops at a broken quote and the like; report it with what it knows.
      const line = (error as { lines?: number }).lines;
      if ((error as { code?: string }).code === 'ENOENT' || (error as { code?: string }).code === 'EISDIR') throw error;
      throw new StoreImportError([{ line: line ?? 0, reason: `the file cannot be read as CSV: ${error instanceof Error ? error.message : String(error)}` }]);
    }
  }

  /** Second pass: the rows, already known to be valid. */
  private async *rows(open: () => Readable): AsyncGenerator<{ row: StoreRow; rows: number; bytes: number }> {
    let rows = 0;
    for await (const { record, line, bytes, header } of this.records(open)) {
      if (header) continue;
      const { row } = validateStoreRecord(record, line, (zip) => this.geocoder.lookup(zip));
      if (!row) throw new Error(`line ${line} changed between the two passes over the file`);
      rows++;
      yield { row, rows, bytes };
    }
  }

  private async writeChunk(manager: EntityManager, rows: StoreRow[], summary: ImportSummary, write: boolean): Promise<void> {
    if (rows.length === 0) return;
    const existing = new Map((await manager.findBy(Store, { code: In(rows.map((r) => r.code)) })).map((s) => [s.code, s]));
    const now = new Date();
    const changed: Array<Partial<Store>> = [];
    for (const row of rows) {
      const current = existing.get(row.code);
      if (current && sameStore(row, current)) {
        summary.unchanged++;
        continue;
      }
      if (current) summary.updated++;
      else summary.inserted++;
      changed.push({ ...row, updatedAt: now });
    }
    if (!write || changed.length === 0) return;
    await manager
      .createQueryBuilder()
      .insert()
      .into(Store)
      .values(changed)
      .orUpdate([...STORED_FIELDS, 'updated_at'], ['code'])
      .updateEntity(false)
      .execute();
  }

  /** Deletes (or, in a dry run, counts) the stores whose code the file does not have. */
  private async prune(manager: EntityManager, keep: Map<string, number>, write: boolean): Promise<number> {
    let pruned = 0;
    for (let after = 0; ; ) {
      const page = await manager
        .createQueryBuilder(Store, 'store')
        .select(['store.id', 'store.code'])
        .where('store.id > :after', { after })
        .orderBy('store.id', 'ASC')
        .limit(PRUNE_PAGE)
        .getMany();
      const gone = page.filter((store) => !keep.has(store.code)).map((store) => store.id);
      pruned += gone.length;
      if (write && gone.length > 0) await manager.delete(Store, gone);
      if (page.length < PRUNE_PAGE) return pruned;
      after = page[page.length - 1].id;
    }
  }
}
