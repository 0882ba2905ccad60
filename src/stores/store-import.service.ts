import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { parse } from 'csv-parse';
import { DataSource, In, type EntityManager } from 'typeorm';
import { storesConfig } from './stores.config.js';
import { zoneOf } from '../geo/time-zones.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog } from './store-catalog.js';
import { KEPT_FIELDS, STORED_FIELDS, storeFieldText, type StoredField, type StoreFieldName } from './store-fields.js';
import {
  STORE_CSV_HEADER_RULE,
  formatProblem,
  headerColumns,
  recordFirstLines,
  unguardRecord,
  validateStoreRecord,
  type RowProblem,
  type RowWarning,
  type StoreRow,
} from './store-csv.js';
import { Store } from './store.entity.js';

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
   * Apply only if the catalogue is still at one of these versions (the `version` of a dry run):
   * otherwise StoreCatalogMovedError and nothing is written. Ignored by a dry run.
   */
  ifVersions?: readonly number[];
  /**
   * The number of removals the caller expects from `prune`. When given it must equal the real
   * number, and it is what lets a prune remove more than STORE_IMPORT_MAX_PRUNE_PERCENT of the
   * catalogue (StoreRemovalGuardError otherwise). Ignored by a dry run.
   */
  expectedRemovals?: number;
  /**
   * The share of this process's time the import may take, from 0 (exclusive) to 1 (the default:
   * as fast as it goes). The server's import takes half, so that searches and other requests
   * keep at least about half of their throughput while a large file is imported.
   */
  cpuShare?: number;
  /**
   * A dry run of a file with bad rows answers a summary that lists them (`problems`) instead of
   * throwing StoreImportError: the admin upload's `Prefer: handling=lenient`. Ignored by an apply.
   */
  listProblems?: boolean;
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

export interface FieldChange {
  field: StoredField;
  old: string;
  new: string;
}

/** One store an import adds, changes or removes: what a dry run lists for the operator. */
export type StoreChange =
  | { change: 'add'; line: number; code: string; name: string; city: string; state: string }
  | { change: 'update'; line: number; code: string; name: string; fields: FieldChange[] }
  | { change: 'remove'; code: string; name: string; city: string; state: string };

export interface ImportSummary {
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  pruned: number;
  warnings: string[];
  /**
   * The catalogue version the result holds for: the one a dry run was computed against (an apply
   * that names it with `ifVersions` does exactly what the dry run listed), or the version after an apply.
   */
  version: number;
  /** The stores in `stores` before the import. */
  catalogSize: number;
  /** The first MAX_LISTED_CHANGES changes: the file's adds and updates in its order, then the removals. */
  changes: StoreChange[];
  /** Whether `changes` was cut at MAX_LISTED_CHANGES (the counts stay exact). */
  changesTruncated: boolean;
  /** Whether `pruned` is more than the share an apply may remove without `expectedRemovals`. */
  removalsNeedConfirmation: boolean;
  /** The first MAX_LISTED_PROBLEMS bad rows (`listProblems`); when there are any, nothing was planned. */
  problems: RowProblem[];
  problemCount: number;
}

/**
 * How many changes an import lists. A thousand rows is what an operator can still read through
 * (and about 200 KB of JSON); a file that changes more is checked by its counts and by sampling.
 */
export const MAX_LISTED_CHANGES = 1000;

/** How many problems an error report lists before it says "and N more". */
export const MAX_LISTED_PROBLEMS = 50;
/** Codes per look-up of the stored rows while planning. */
const CHUNK = 500;
const PRUNE_PAGE = 1000;
const PROGRESS_EVERY_ROWS = 1000;

/** An apply with `ifVersions` found the catalogue at another version: nothing was written. */
export class StoreCatalogMovedError extends Error {
  constructor(
    readonly expected: readonly number[],
    readonly current: number,
  ) {
    super(`the store catalogue changed since the dry run (version ${expected.join(' or ') || 'unknown'}, now ${current}); nothing was written`);
  }
}

/**
 * An apply whose `prune` removes more than STORE_IMPORT_MAX_PRUNE_PERCENT of the catalogue without
 * `expectedRemovals`, or whose `expectedRemovals` is not the real number: nothing was written.
 * Each door words the way to confirm (a query parameter, a command-line option).
 */
export class StoreRemovalGuardError extends Error {
  constructor(
    readonly removals: number,
    readonly catalogSize: number,
    readonly maxPercent: number,
    readonly expected: number | undefined,
  ) {
    super(
      expected === undefined
        ? `this import would remove ${removals} of ${catalogSize} stores (${percentOf(removals, catalogSize)}), more than the ${maxPercent} % (STORE_IMPORT_MAX_PRUNE_PERCENT) allowed without confirmation; nothing was written`
        : `this import would remove ${removals} stores, not the ${expected} expected; nothing was written`,
    );
  }
}

const percentOf = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((1000 * part) / whole) / 10} %`;

export class StoreImportError extends Error {
  /** The rows the check read (a dry run's `read` with `listProblems`); 0 when the file itself was refused (its header, or not CSV). */
  read = 0;

  constructor(readonly problems: RowProblem[]) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map(formatProblem);
    const rest = problems.length - listed.length;
    super(
      `the file was not imported, ${problems.length} problem${problems.length === 1 ? '' : 's'} found:\n  ${listed.join('\n  ')}` +
        (rest > 0 ? `\n  … and ${rest} more` : ''),
    );
  }
}

function changedFields(row: StoreRow, store: Store): FieldChange[] {
  return STORED_FIELDS.filter((field) => row[field] !== store[field]).map((field) => ({
    field,
    old: storeFieldText(field, store[field]),
    new: storeFieldText(field, row[field] ?? ''),
  }));
}

/** The stores a prune removes: every id (they are deleted by id), details only for the ones listed. */
interface Removals {
  ids: number[];
  listed: StoreChange[];
  catalogSize: number;
}

type Record = { record: string[]; info: { empty_lines: number } };

/** The first pass's result: the codes seen (for a prune's removals), with their lines. */
interface CheckedFile {
  codes: Map<string, number>;
  read: number;
  warnings: RowWarning[];
}

/**
 * What an import would do to the catalogue at `summary.version`: the dry run's answer, and what
 * an apply writes. It holds the rows to write and the ids to remove, nothing of the rows that
 * stay as they are: a file that changes one store of 100,000 plans to one row.
 */
interface ImportPlan {
  summary: ImportSummary;
  /** The file's new and changed rows, in its order; `summary.inserted` of them are new. */
  puts: StoreRow[];
  /** The ids of the stores a prune removes. */
  removals: number[];
}

/**
 * How many plans an apply makes outside a transaction before it plans inside the write's own
 * (holding the writer, as every import did before plans): each one is dropped when a catalogue
 * write committed while it ran, and a file of 100,000 rows takes seconds to plan.
 */
const OPTIMISTIC_PLANS = 3;

/**
 * The stores CSV, for `locations import` and the admin upload, in three steps, each streaming
 * the file: a check of every row (keeping only the codes seen), a plan that compares the rows
 * with the stored ones a chunk at a time (reads only: no transaction, no lock, so plant writes
 * and the admin API go on meanwhile, on SQLite too), and an apply that writes only the plan's
 * changes through the catalogue's one door (StoreCatalog.write), in one short transaction.
 * The apply first checks that the catalogue is still at the version the plan read before its
 * first look-up; when another write committed since, an apply with `ifVersions` is refused
 * (StoreCatalogMovedError) and one without plans again (then, after OPTIMISTIC_PLANS, plans
 * inside the write's transaction, as before plans existed: it cannot miss a change). Nothing is
 * written unless every row is valid and the whole apply commits. docs/operations.md, "Importing
 * stores", tells operators; docs/performance.md has the figures.
 */
@Injectable()
export class StoreImportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly geocoder: ZipGeocoder,
    private readonly metrics: Metrics,
    private readonly catalog: StoreCatalog,
    @Inject(storesConfig.KEY) settings: ConfigType<typeof storesConfig>,
  ) {
    this.maxPrunePercent = settings.STORE_IMPORT_MAX_PRUNE_PERCENT;
  }

  private readonly maxPrunePercent: number;
  private readonly lookupZip = (zip5: string) => this.geocoder.lookup(zip5);

  importFile(path: string, options: ImportOptions = {}): Promise<ImportSummary> {
    const totalBytes = statSync(path).size;
    return this.import(() => createReadStream(path), { ...options, onProgress: options.onProgress && ((p) => options.onProgress!({ ...p, totalBytes })) });
  }

  /**
   * `open` is called once per pass and must give the same content each time. A dry run is the
   * check and one plan; an apply refuses when `ifVersions` does not name the plan's version or
   * the removal guard stops it, before anything is written.
   */
  async import(open: () => Readable, options: ImportOptions = {}): Promise<ImportSummary> {
    const pacer = new Pacer(options.cpuShare ?? 1);
    let file: CheckedFile;
    try {
      file = await this.validate(open, pacer, options.onProgress);
    } catch (error) {
      if (options.dryRun && options.listProblems && error instanceof StoreImportError) return this.refusal(error);
      throw error;
    }
    for (let plans = 1; ; plans++) {
      const last = plans > OPTIMISTIC_PLANS;
      if (options.dryRun) {
        const plan = await this.plan(this.dataSource.manager, open, file, pacer, options);
        // A write that committed during the plan may show in its listing: plan again, so that the listing is the version's.
        if (plans >= OPTIMISTIC_PLANS || (await this.catalog.version()) === plan.summary.version) return plan.summary;
        continue;
      }
      const outcome = last
        ? await this.catalog.write('import', async (write) => {
            const plan = await this.plan(write.manager, open, file, pacer, options, write.version);
            this.check(plan, options);
            await write.put(plan.puts, plan.summary.inserted);
            await write.remove(plan.removals);
            return plan;
          })
        : await this.planThenApply(open, file, pacer, options);
      if (!outcome) continue;
      const { value: plan, version } = outcome;
      const summary = { ...plan.summary, version };
      for (const count of ['inserted', 'updated', 'unchanged', 'pruned'] as const) this.metrics.storeImportRows.inc({ outcome: count }, summary[count]);
      return summary;
    }
  }

  /** A dry run's answer for a file with bad rows (`listProblems`): the problems, and no plan. */
  private async refusal(error: StoreImportError): Promise<ImportSummary> {
    return {
      read: error.read,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      pruned: 0,
      warnings: [],
      version: await this.catalog.version(),
      catalogSize: await this.dataSource.manager.count(Store),
      changes: [],
      changesTruncated: false,
      removalsNeedConfirmation: false,
      problems: error.problems.slice(0, MAX_LISTED_PROBLEMS),
      problemCount: error.problems.length,
    };
  }

  /** A plan outside any transaction, then its apply; undefined when the catalogue moved in between (plan again). */
  private async planThenApply(open: () => Readable, file: CheckedFile, pacer: Pacer, options: ImportOptions) {
    const plan = await this.plan(this.dataSource.manager, open, file, pacer, options);
    this.check(plan, options);
    const applied = await this.catalog.write('import', async (write) => {
      if (write.version !== plan.summary.version) return undefined;
      await write.put(plan.puts, plan.summary.inserted);
      await write.remove(plan.removals);
      return plan;
    });
    if (applied.value) return { value: applied.value, version: applied.version };
    if (options.ifVersions !== undefined && !options.ifVersions.includes(applied.version))
      throw new StoreCatalogMovedError(options.ifVersions, applied.version);
    return undefined;
  }

  /** Refuses an apply of `plan`: the catalogue's version is not one `ifVersions` names, or the removal guard. */
  private check(plan: ImportPlan, options: ImportOptions): void {
    const { summary } = plan;
    if (options.ifVersions !== undefined && !options.ifVersions.includes(summary.version))
      throw new StoreCatalogMovedError(options.ifVersions, summary.version);
    if (options.expectedRemovals !== undefined ? options.expectedRemovals !== summary.pruned : summary.removalsNeedConfirmation) {
      throw new StoreRemovalGuardError(summary.pruned, summary.catalogSize, this.maxPrunePercent, options.expectedRemovals);
    }
  }

  /**
   * The second pass: the file against the catalogue, read through `reader` (the data source's
   * manager: lone reads, none in a transaction; or the write's own when planning under its lock).
   * The version is read first: a write that commits later bumps it, so an apply that finds it
   * unchanged knows that every look-up of the plan saw what it is about to change.
   */
  private async plan(
    reader: EntityManager,
    open: () => Readable,
    file: CheckedFile,
    pacer: Pacer,
    options: ImportOptions,
    version?: number,
  ): Promise<ImportPlan> {
    const summary: ImportSummary = {
      read: file.read,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      pruned: 0,
      warnings: file.warnings.map(formatProblem),
      version: version ?? (await this.catalog.version()),
      catalogSize: 0,
      changes: [],
      changesTruncated: false,
      removalsNeedConfirmation: false,
      problems: [],
      problemCount: 0,
    };
    const removals = options.prune ? await this.removals(reader, file.codes) : undefined;
    summary.catalogSize = removals?.catalogSize ?? (await reader.count(Store));
    summary.pruned = removals?.ids.length ?? 0;
    summary.removalsNeedConfirmation = summary.pruned > (summary.catalogSize * this.maxPrunePercent) / 100;
    const plan: ImportPlan = { summary, puts: [], removals: removals?.ids ?? [] };
    let batch: Array<{ row: StoreRow; line: number }> = [];
    for await (const { row, line, rows, bytes } of this.rows(open)) {
      await pacer.pause();
      batch.push({ row, line });
      if (batch.length === CHUNK) {
        await this.compare(reader, batch, plan);
        batch = [];
      }
      // Still named `write` for the progress's readers (the command's bar, scripts): the pass that leads to the write.
      if (rows % PROGRESS_EVERY_ROWS === 0) options.onProgress?.({ phase: 'write', rows, bytes });
    }
    await this.compare(reader, batch, plan);
    options.onProgress?.({ phase: 'write', rows: file.read, bytes: Number.NaN });
    if (removals) this.list(summary, removals.listed);
    return plan;
  }

  /** Adds to the listed changes while there is room; the counts are kept elsewhere. */
  private list(summary: ImportSummary, changes: StoreChange[]): void {
    const room = MAX_LISTED_CHANGES - summary.changes.length;
    if (changes.length > room) summary.changesTruncated = true;
    summary.changes.push(...changes.slice(0, Math.max(0, room)));
  }

  /** First pass: every row checked, every problem collected; throws StoreImportError if there is any. */
  private async validate(open: () => Readable, pacer: Pacer, onProgress?: (p: ImportProgress) => void): Promise<CheckedFile> {
    const problems: RowProblem[] = [];
    const warnings: RowWarning[] = [];
    const codes = new Map<string, number>();
    let read = 0;
    let sawHeader = false;
    for await (const { record, line, bytes, header, columns } of this.records(open)) {
      await pacer.pause();
      if (header) {
        sawHeader = true;
        continue;
      }
      read++;
      const result = validateStoreRecord(record, line, { zip: this.lookupZip }, columns);
      problems.push(...result.problems);
      warnings.push(...result.warnings);
      if (result.row) {
        const seen = codes.get(result.row.code);
        if (seen !== undefined) problems.push({ line, column: 'code', code: 'duplicate_code', reason: `"${result.row.code}" already appears on line ${seen}` });
        else codes.set(result.row.code, line);
      }
      if (read % PROGRESS_EVERY_ROWS === 0) onProgress?.({ phase: 'validate', rows: read, bytes });
    }
    onProgress?.({ phase: 'validate', rows: read, bytes: Number.NaN });
    if (!sawHeader) {
      problems.push({ line: 1, code: 'bad_header', reason: `the file is empty; ${STORE_CSV_HEADER_RULE}` });
    }
    if (problems.length > 0) throw Object.assign(new StoreImportError(problems), { read });
    return { codes, read, warnings };
  }

  /**
   * The CSV records of one pass, each with the line it starts on, the byte count read so far and
   * the columns of the header (which is checked here: a wrong one is a StoreImportError).
   */
  private async *records(open: () => Readable): AsyncGenerator<{ record: string[]; line: number; bytes: number; header: boolean; columns: StoreFieldName[] }> {
    const input = open();
    let bytes = 0;
    input.on('data', (chunk: Buffer | string) => (bytes += chunk.length));
    const parser = input.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true, info: true }));
    input.on('error', (error) => parser.destroy(error));
    const firstLine = recordFirstLines();
    let header = true;
    let columns: StoreFieldName[] = [];
    try {
      for await (const { record, info } of parser as AsyncIterable<Record>) {
        // The line is counted on the record as read; the fields are then taken back from the export's guard.
        const line = firstLine(record, info.empty_lines);
        if (header) {
          const named = headerColumns(record);
          if (!named) throw new StoreImportError([{ line, code: 'bad_header', reason: STORE_CSV_HEADER_RULE }]);
          columns = named;
        }
        yield { record: header ? record : unguardRecord(record), line, bytes, header, columns };
        header = false;
      }
    } catch (error) {
      if (error instanceof StoreImportError) throw error;
      // csv-parse stops at a broken quote and the like; report it with what it knows.
      const line = (error as { lines?: number }).lines;
      if ((error as { code?: string }).code === 'ENOENT' || (error as { code?: string }).code === 'EISDIR') throw error;
      throw new StoreImportError([
        { line: line ?? 0, code: 'bad_csv', reason: `the file cannot be read as CSV: ${error instanceof Error ? error.message : String(error)}` },
      ]);
    }
  }

  /** Second pass: the rows, already known to be valid. */
  private async *rows(open: () => Readable): AsyncGenerator<{ row: StoreRow; line: number; rows: number; bytes: number }> {
    let rows = 0;
    for await (const { record, line, bytes, header, columns } of this.records(open)) {
      if (header) continue;
      const { row } = validateStoreRecord(record, line, { zip: this.lookupZip, zone: zoneOf }, columns);
      if (!row) throw new Error(`line ${line} changed between the two passes over the file`);
      rows++;
      yield { row, line, rows, bytes };
    }
  }

  /** One chunk of the file's rows against the stored ones: counted, listed, and the new and changed ones kept for the apply. */
  private async compare(reader: EntityManager, rows: Array<{ row: StoreRow; line: number }>, plan: ImportPlan): Promise<void> {
    if (rows.length === 0) return;
    const { summary } = plan;
    const existing = new Map((await reader.findBy(Store, { code: In(rows.map((r) => r.row.code)) })).map((s) => [s.code, s]));
    const listed: StoreChange[] = [];
    for (const { row, line } of rows) {
      const current = existing.get(row.code);
      // A column the file does not have leaves the stored value (KEPT_FIELDS); a new store has none.
      for (const field of KEPT_FIELDS) (row as { [field: string]: unknown })[field] ??= current?.[field] ?? '';
      const fields = current && changedFields(row, current);
      if (fields?.length === 0) {
        summary.unchanged++;
        continue;
      }
      if (fields) {
        summary.updated++;
        listed.push({ change: 'update', line, code: row.code, name: row.name, fields });
      } else {
        summary.inserted++;
        listed.push({ change: 'add', line, code: row.code, name: row.name, city: row.city, state: row.state });
      }
      plan.puts.push(row);
    }
    this.list(summary, listed);
  }

  /** The stores whose code the file does not have, read page by page in id order, and how many stores there are. */
  private async removals(reader: EntityManager, keep: Map<string, number>): Promise<Removals> {
    const removals: Removals = { ids: [], listed: [], catalogSize: 0 };
    for (let after = 0; ;) {
      const page = await reader
        .createQueryBuilder(Store, 'store')
        .select(['store.id', 'store.code', 'store.name', 'store.city', 'store.state'])
        .where('store.id > :after', { after })
        .orderBy('store.id', 'ASC')
        .limit(PRUNE_PAGE)
        .getMany();
      removals.catalogSize += page.length;
      for (const store of page) {
        if (keep.has(store.code)) continue;
        removals.ids.push(store.id);
        if (removals.listed.length < MAX_LISTED_CHANGES)
          removals.listed.push({ change: 'remove', code: store.code, name: store.name, city: store.city, state: store.state });
      }
      if (page.length < PRUNE_PAGE) return removals;
      after = page[page.length - 1].id;
    }
  }
}
