import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { Point } from '../shared/great-circle.js';
import { zoneOf } from '../geo/time-zones.js';
import type { Pacer } from './pacer.js';
import type { StoreFieldName } from '../shared/store-fields.js';
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

export interface ImportProgress {
  phase: 'validate' | 'write';
  rows: number;
  bytes: number;
  /** Size of the file, when reading a file. */
  totalBytes?: number;
}

/** How many problems an error report lists before it says "and N more". */
export const MAX_LISTED_PROBLEMS = 50;
/** How often an import reports its progress, in rows. */
export const PROGRESS_EVERY_ROWS = 1000;

export class StoreImportError extends Error {
  /** The rows the check read (a dry run's `read` with `listProblems`); 0 when the file itself was refused (its header, or not CSV). */
  read = 0;
  /** The first MAX_LISTED_PROBLEMS problems, in the file's order: all that any answer shows. */
  readonly problems: RowProblem[];

  /** `problemCount` counts every problem found, `problems` may hold only the first ones (a bad file of 100,000 rows has hundreds of thousands). */
  constructor(
    problems: RowProblem[],
    readonly problemCount = problems.length,
  ) {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
    const rest = problemCount - listed.length;
    super(
      `the file was not imported, ${problemCount} problem${problemCount === 1 ? '' : 's'} found:\n  ${listed.map(formatProblem).join('\n  ')}` +
        (rest > 0 ? `\n  … and ${rest} more` : ''),
    );
    this.problems = listed;
  }
}

type Record = { record: string[]; info: { empty_lines: number } };

/** The first pass's result: the codes seen (for a prune's removals), with their lines. */
export interface CheckedFile {
  codes: Map<string, number>;
  read: number;
  /** The first MAX_LISTED_PROBLEMS warnings, in the file's order: a file of far rows must not fill the memory with them. */
  warnings: RowWarning[];
  /** The chain's services the rows were checked against: the later passes check them against the same. */
  services: ReadonlySet<string>;
  warningCount: number;
}

/**
 * The store CSV as an import reads it, pass by pass, each streaming the file from `open()`: the
 * first checks every row and keeps only the codes seen (`validate`), the later ones give the
 * rows, already known to be valid, with their zones worked out (`rows`). `lookupZip` gives a ZIP
 * code's point, for rows without coordinates.
 */
export class StoreCsvReader {
  constructor(private readonly lookupZip: (zip5: string) => Point | undefined) {}

  /**
   * First pass: every row checked, every problem counted and the first MAX_LISTED_PROBLEMS kept
   * (all that is shown); throws StoreImportError if there is any.
   */
  async validate(open: () => Readable, pacer: Pacer, services: ReadonlySet<string>, onProgress?: (p: ImportProgress) => void): Promise<CheckedFile> {
    const problems: RowProblem[] = [];
    let problemCount = 0;
    const found = (more: RowProblem[]) => {
      problemCount += more.length;
      problems.push(...more.slice(0, MAX_LISTED_PROBLEMS - problems.length));
    };
    const warnings: RowWarning[] = [];
    let warningCount = 0;
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
      const result = validateStoreRecord(record, line, { zip: this.lookupZip, services }, columns);
      found(result.problems);
      warningCount += result.warnings.length;
      warnings.push(...result.warnings.slice(0, MAX_LISTED_PROBLEMS - warnings.length));
      if (result.row) {
        const seen = codes.get(result.row.code);
        if (seen !== undefined) found([{ line, column: 'code', code: 'duplicate_code', reason: `"${result.row.code}" already appears on line ${seen}` }]);
        else codes.set(result.row.code, line);
      }
      if (read % PROGRESS_EVERY_ROWS === 0) onProgress?.({ phase: 'validate', rows: read, bytes });
    }
    onProgress?.({ phase: 'validate', rows: read, bytes: Number.NaN });
    if (!sawHeader) {
      found([{ line: 1, code: 'bad_header', reason: `the file is empty; ${STORE_CSV_HEADER_RULE}` }]);
    }
    if (problemCount > 0) throw Object.assign(new StoreImportError(problems, problemCount), { read });
    return { codes, read, warnings, warningCount, services };
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
        yield { record: header ? record : unguardRecord(record, columns), line, bytes, header, columns };
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

  /**
   * A later pass: the rows, already known to be valid (checked against the same `services`);
   * `rows` counts every row read. With `only`, just the rows whose place among the rows (0 the
   * first) it takes: the others are not made again.
   */
  async *rows(
    open: () => Readable,
    services: ReadonlySet<string>,
    only?: (place: number) => boolean,
  ): AsyncGenerator<{ row: StoreRow; line: number; rows: number; bytes: number }> {
    let rows = 0;
    for await (const { record, line, bytes, header, columns } of this.records(open)) {
      if (header) continue;
      rows++;
      if (only && !only(rows - 1)) continue;
      const { row } = validateStoreRecord(record, line, { zip: this.lookupZip, zone: zoneOf, services }, columns);
      if (!row) throw new Error(`line ${line} changed between the passes over the file`);
      yield { row, line, rows, bytes };
    }
  }
}
