import type { Readable } from 'node:stream';
import { In, type EntityManager } from 'typeorm';
import type { CatalogWrite, StoreCatalog } from './store-catalog.js';
import { type RowProblem, type RowWarning, type StoreRow } from './store-csv.js';
import type { Pacer } from './pacer.js';
import { PROGRESS_EVERY_ROWS, type CheckedFile, type StoreCsvReader } from './store-csv-reader.js';
import { KEPT_FIELDS, STORED_FIELDS, storeFieldText, type StoredField } from '../shared/store-fields.js';
import { WEEKDAYS } from '../shared/weekdays.js';
import { Store } from './store.entity.js';
import type { ImportOptions } from './store-import-options.js';

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
  /** The first MAX_LISTED_PROBLEMS warnings, in the file's order. */
  warnings: RowWarning[];
  warningCount: number;
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
/** Codes per look-up of the stored rows while planning, and rows per write of an apply that reads the file again. */
const CHUNK = 500;
/**
 * The most new and changed rows a plan keeps for its apply (about 450 bytes each: 4.5 MB). A plan
 * that changes more keeps only a mark per row of the file (ImportPlan.marks, a byte each) and the
 * apply reads those rows from the file again, so that an import's memory does not grow with the
 * file (100,000 kept rows were 43 MB, enough to get a 256 MiB pod killed). The cost is that pass,
 * inside the write's transaction: about a second for 100,000 rows, where writing 10,000 rows alone
 * takes about as long; an import that changes fewer stores writes straight from memory.
 */
export const KEPT_ROWS_MAX = 10_000;

/** What an apply does with a row of the file (ImportPlan.marks). */
const Mark = { Unchanged: 0, Added: 1, Updated: 2 } as const;
const PRUNE_PAGE = 1000;

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

function changedFields(row: StoreRow, store: Store): FieldChange[] {
  return STORED_FIELDS.filter((field) => row[field] !== store[field]).map((field) => ({
    field,
    old: storeFieldText(field, store[field]),
    new: storeFieldText(field, row[field] ?? ''),
  }));
}

/** The fields whose values repeat from store to store in a chain's file: its opening hours, cities, states and zones. */
const REPEATING_FIELDS = ['city', 'state', ...WEEKDAYS, 'time_zone'] as const;

/**
 * `row`, each of its REPEATING_FIELDS now the first equal string of the plan (`seen`): the
 * file's parser makes a new string of every cell, so a plan keeping 100,000 rows held as many
 * copies of the same few hours (771 bytes a row of the synthetic file; 449 shared).
 */
function sharingValues(row: StoreRow, seen: Map<string, string>): StoreRow {
  for (const field of REPEATING_FIELDS) {
    const value = row[field];
    if (value === undefined) continue;
    const first = seen.get(value);
    if (first === undefined) seen.set(value, value);
    else (row as { [field: string]: unknown })[field] = first;
  }
  return row;
}

/** Gives the rows' KEPT_FIELDS that the file left out the stored values (a new store's are empty), as the plan compared them. */
async function keepStoredValues(reader: EntityManager, rows: StoreRow[]): Promise<void> {
  const missing = rows.filter((row) => KEPT_FIELDS.some((field) => row[field] === undefined));
  if (missing.length === 0) return;
  const stored = await reader.find(Store, {
    select: Object.fromEntries(['code', ...KEPT_FIELDS].map((field) => [field, true])),
    where: { code: In(missing.map((row) => row.code)) },
  });
  const byCode = new Map(stored.map((store) => [store.code, store]));
  for (const row of missing) for (const field of KEPT_FIELDS) (row as { [field: string]: unknown })[field] ??= byCode.get(row.code)?.[field] ?? '';
}

/** The stores a prune removes: how many, every id for an apply (they are deleted by id), details only for the ones listed. */
interface Removals {
  count: number;
  ids: number[];
  listed: StoreChange[];
  catalogSize: number;
}

/**
 * What an import would do to the catalogue at `summary.version`: the dry run's answer, and what
 * an apply writes (ImportPlanner.apply). It holds a mark per row of the file, the new and
 * changed rows themselves only while there are at most KEPT_ROWS_MAX of them, and the ids to
 * remove; nothing of the rows that stay as they are. A dry run's plan holds none of it (it writes
 * nothing): its answer is the summary, counts and a listing capped at MAX_LISTED_CHANGES.
 */
export interface ImportPlan {
  summary: ImportSummary;
  /** Each row of the file, by its place among the rows (0 the first): added, updated or unchanged. Empty for a dry run. */
  marks: Uint8Array;
  /** The new and changed rows in the file's order, while there are at most KEPT_ROWS_MAX; undefined beyond (the apply reads the file again). Empty for a dry run. */
  puts: StoreRow[] | undefined;
  /** The ids of the stores a prune removes. Empty for a dry run. */
  removals: number[];
  /** The chain's services the file was checked against: the apply reads its rows against the same. */
  services: ReadonlySet<string>;
}

/**
 * The plan of an import: the file against the catalogue, compared a chunk of rows at a time
 * with the stored stores (reads only), counting and listing each change for the operator, and
 * the refusals of an apply (the version moved, the removal guard).
 */
export class ImportPlanner {
  constructor(
    private readonly csv: StoreCsvReader,
    private readonly catalog: StoreCatalog,
    private readonly maxPrunePercent: number,
    /** KEPT_ROWS_MAX; a test makes it smaller to read a small file's rows again. */
    private readonly keptRowsMax = KEPT_ROWS_MAX,
  ) {}

  /**
   * The second pass: the file against the catalogue, read through `reader` (the data source's
   * manager: lone reads, none in a transaction; or the write's own when planning under its lock).
   * The version is read first: a write that commits later bumps it, so an apply that finds it
   * unchanged knows that every look-up of the plan saw what it is about to change.
   */
  async plan(reader: EntityManager, open: () => Readable, file: CheckedFile, pacer: Pacer, options: ImportOptions, version?: number): Promise<ImportPlan> {
    const summary: ImportSummary = {
      read: file.read,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      pruned: 0,
      warnings: file.warnings,
      warningCount: file.warningCount,
      version: version ?? (await this.catalog.version()),
      catalogSize: 0,
      changes: [],
      changesTruncated: false,
      removalsNeedConfirmation: false,
      problems: [],
      problemCount: 0,
    };
    const apply = !options.dryRun;
    const removals = options.prune ? await this.removals(reader, file.codes, apply) : undefined;
    summary.catalogSize = removals?.catalogSize ?? (await reader.count(Store));
    summary.pruned = removals?.count ?? 0;
    summary.removalsNeedConfirmation = summary.pruned > (summary.catalogSize * this.maxPrunePercent) / 100;
    const plan: ImportPlan = { summary, marks: new Uint8Array(apply ? file.read : 0), puts: [], removals: removals?.ids ?? [], services: file.services };
    const kept = apply ? new Map<string, string>() : undefined;
    let batch: Array<{ row: StoreRow; line: number; place: number }> = [];
    for await (const { row, line, rows, bytes } of this.csv.rows(open, file.services)) {
      await pacer.pause();
      batch.push({ row, line, place: rows - 1 });
      if (batch.length === CHUNK) {
        await this.compare(reader, batch, plan, kept);
        batch = [];
      }
      // Still named `write` for the progress's readers (the command's bar, scripts): the pass that leads to the write.
      if (rows % PROGRESS_EVERY_ROWS === 0) options.onProgress?.({ phase: 'write', rows, bytes });
    }
    await this.compare(reader, batch, plan, kept);
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

  /**
   * Writes `plan` through `write`: the new and changed rows (kept, or read from the file again
   * CHUNK at a time, with the values of the columns the file leaves out read back from the
   * stores), then the removals. The catalogue is at the plan's version (the caller checked it),
   * so the marks still say which rows change. No pause for the pacer: this is the transaction.
   */
  async apply(write: CatalogWrite, open: () => Readable, plan: ImportPlan): Promise<void> {
    const { marks, puts, summary } = plan;
    if (puts) await write.put(puts, summary.inserted);
    else {
      let chunk: StoreRow[] = [];
      let added = 0;
      const flush = async () => {
        await keepStoredValues(write.manager, chunk);
        await write.put(chunk, added);
        chunk = [];
        added = 0;
      };
      for await (const { row, rows } of this.csv.rows(open, plan.services, (place) => marks[place] !== Mark.Unchanged)) {
        chunk.push(row);
        if (marks[rows - 1] === Mark.Added) added++;
        if (chunk.length === CHUNK) await flush();
      }
      if (chunk.length > 0) await flush();
    }
    await write.remove(plan.removals);
  }

  /**
   * One chunk of the file's rows against the stored ones: counted, listed, and for an apply
   * marked, the new and changed rows kept while there are at most keptRowsMax, their repeating
   * values shared through `kept` (undefined for a dry run, which keeps no row).
   */
  private async compare(
    reader: EntityManager,
    rows: Array<{ row: StoreRow; line: number; place: number }>,
    plan: ImportPlan,
    kept: Map<string, string> | undefined,
  ): Promise<void> {
    if (rows.length === 0) return;
    const { summary } = plan;
    const existing = new Map((await reader.findBy(Store, { code: In(rows.map((r) => r.row.code)) })).map((s) => [s.code, s]));
    const listed: StoreChange[] = [];
    for (const { row, line, place } of rows) {
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
      if (!kept) continue;
      plan.marks[place] = fields ? Mark.Updated : Mark.Added;
      // Past the bound the rows are read again by the apply: the ones kept so far are let go of.
      if (plan.puts && plan.puts.length === this.keptRowsMax) plan.puts = undefined;
      plan.puts?.push(sharingValues(row, kept));
    }
    this.list(summary, listed);
  }

  /** The stores whose code the file does not have, read page by page in id order (their ids kept for an `apply`), and how many stores there are. */
  private async removals(reader: EntityManager, keep: Map<string, number>, apply: boolean): Promise<Removals> {
    const removals: Removals = { count: 0, ids: [], listed: [], catalogSize: 0 };
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
        removals.count++;
        if (apply) removals.ids.push(store.id);
        if (removals.listed.length < MAX_LISTED_CHANGES)
          removals.listed.push({ change: 'remove', code: store.code, name: store.name, city: store.city, state: store.state });
      }
      if (page.length < PRUNE_PAGE) return removals;
      after = page[page.length - 1].id;
    }
  }

  /** Refuses an apply of `plan`: the catalogue's version is not one `ifVersions` names, or the removal guard. */
  check(plan: ImportPlan, options: Pick<ImportOptions, 'ifVersions' | 'expectedRemovals'>): void {
    const { summary } = plan;
    if (options.ifVersions !== undefined && !options.ifVersions.includes(summary.version))
      throw new StoreCatalogMovedError(options.ifVersions, summary.version);
    if (options.expectedRemovals !== undefined ? options.expectedRemovals !== summary.pruned : summary.removalsNeedConfirmation) {
      throw new StoreRemovalGuardError(summary.pruned, summary.catalogSize, this.maxPrunePercent, options.expectedRemovals);
    }
  }
}
