import type { ProblemCode } from '../common/problem-codes.js';
import { haversineMiles, type Point } from '../shared/great-circle.js';
import { isKnownZone } from '../geo/time-zones.js';
import { US_STATE_CODES } from '../shared/us-states.js';
import { ZIP_PATTERN } from '../geo/zip-geocoder.js';
import { hoursProblem } from '../shared/business-hours.js';
import { unguardCell } from '../shared/csv-guard.js';
import { emailProblem, parsePhone, websiteProblem } from '../shared/contact-fields.js';
import { parseServices } from '../shared/services.js';
import { closureText, DAY_HOURS_MAX, parseClosure, parseSpecialDays, specialDaysText } from '../shared/special-days.js';
import { WEEKDAYS } from '../shared/weekdays.js';
import {
  GUARDED_FIELDS,
  KEPT_FIELDS,
  STORE_FIELD_NAMES,
  STORE_FIELDS,
  type StoreFieldName,
  type StoreFieldSpec,
  type StoreRow,
} from '../shared/store-fields.js';

/** The stores CSV header every file has, in this order (contract §4). */
export const STORE_CSV_REQUIRED_COLUMNS: readonly StoreFieldName[] = STORE_FIELDS.filter((field) => field.csv === 'required').map((field) => field.name);
/*
 * Every column is a field of the table in store-fields.ts, in its order (STORE_FIELD_NAMES): the
 * required ones and the optional ones (`time_zone`, `special_hours`, `temporarily_closed`, `phone`,
 * `website`, `email`, `services`), any of which a file may add after them, in this order (the export
 * writes them all, so that an export imports back unchanged). A row without a zone, or with an empty
 * cell, gets the zone at its coordinates; a file without one of the others leaves that field of
 * every store as it is (an empty cell clears it).
 */
export type { StoreRow };

const OPTIONAL_COLUMNS = STORE_FIELD_NAMES.slice(STORE_CSV_REQUIRED_COLUMNS.length);

export const STORE_CSV_HEADER_RULE = `the header must be exactly: ${STORE_CSV_REQUIRED_COLUMNS.join(',')} (optionally followed by any of ,${OPTIONAL_COLUMNS.join(',')}, in this order)`;

/** The columns of a header row (names trimmed, any case), or undefined when it breaks STORE_CSV_HEADER_RULE. */
export function headerColumns(record: readonly string[]): StoreFieldName[] | undefined {
  const names = record.map((name) => name.trim().toLowerCase());
  const required = STORE_CSV_REQUIRED_COLUMNS.length;
  if (names.length < required || names.slice(0, required).join(',') !== STORE_CSV_REQUIRED_COLUMNS.join(',')) return undefined;
  let next = 0;
  for (const name of names.slice(required)) {
    const at = OPTIONAL_COLUMNS.indexOf(name as StoreFieldName, next);
    if (at < 0) return undefined;
    next = at + 1;
  }
  return names as StoreFieldName[];
}

/** What is wrong with a line of a store file: its code is of the one vocabulary of admin refusals, the reason says it in words. */
export interface RowProblem {
  line: number;
  column?: string;
  code: ProblemCode;
  reason: string;
}

/**
 * What the import says about a row it takes all the same, for programs (the reason says it in
 * words). Written once: the OpenAPI document's enums of the warnings' `code` are this list.
 */
export const ROW_WARNING_CODES = [
  // The row's coordinates are more than ZIP_DISTANCE_WARNING_MILES from its ZIP code's point.
  'far_from_zip',
] as const;
export type RowWarningCode = (typeof ROW_WARNING_CODES)[number];

export interface RowWarning {
  line: number;
  column: string;
  code: RowWarningCode;
  reason: string;
}

/** When a row's ZIP point and its own coordinates are further apart than this, warn. */
export const ZIP_DISTANCE_WARNING_MILES = 100;

/** The free-text fields, their lengths and whether they may be empty (a column a file may leave out may have empty cells). */
const TEXT_LIMITS = (STORE_FIELDS as readonly StoreFieldSpec[])
  .filter((field) => field.kind === 'text')
  .map((field) => [field.name as StoreFieldName, field.length!, field.csv === 'optional'] as const);
const DECIMAL = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/;

/**
 * The characters (code points) of `text`, as `[...text].length` counts them (a pair of surrogates
 * is one, a lone one is one), without building that array: it was a third of what a 100,000-row
 * import allocated (bench:import-allocations).
 */
export function characters(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

/** Every column empty: a record's values start from it (a column the file does not have stays ''). */
const EMPTY_RECORD = Object.fromEntries(STORE_FIELD_NAMES.map((column) => [column, ''])) as Readonly<Record<StoreFieldName, string>>;

function parseCoordinate(text: string, bound: number): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return Math.abs(value) <= bound ? Math.round(value * 1e6) / 1e6 : undefined;
}

export interface RecordLookups {
  /** The point of a ZIP code's first five digits. */
  zip: (zip5: string) => Point | undefined;
  /**
   * The IANA zone at a point, for a row without one. Left out by a pass that only checks (the
   * import's first): the row's `time_zone` then stays empty, and the lookup's cost is paid once.
   */
  zone?: (point: Point) => string;
  /** The slugs of the chain's services (the vocabulary a row's `services` must keep to). */
  services: ReadonlySet<string>;
}

/**
 * Checks one CSV record (already split into fields) and returns the store or the
 * problems found, every one of them, each naming its column. `columns` are the file's header's
 * (headerColumns): a column it leaves out is empty, or undefined in the row for a field kept as
 * stored (KEPT_FIELDS). Special days and a closure come out in their one text form, ordered.
 */
export function validateStoreRecord(
  fields: string[],
  line: number,
  lookups: RecordLookups,
  columns: readonly StoreFieldName[] = STORE_FIELD_NAMES,
): { row?: StoreRow; problems: RowProblem[]; warnings: RowWarning[] } {
  const problems: RowProblem[] = [];
  const warnings: RowWarning[] = [];
  const problem = (column: string, code: ProblemCode, reason: string) => problems.push({ line, column, code, reason });
  if (fields.length !== columns.length) {
    return { problems: [{ line, code: 'field_count', reason: `expected ${columns.length} fields, found ${fields.length}` }], warnings };
  }
  const value = { ...EMPTY_RECORD };
  columns.forEach((column, i) => (value[column] = fields[i].trim()));
  const lookupZip = lookups.zip;

  for (const [column, limit, mayBeEmpty] of TEXT_LIMITS) {
    const length = characters(value[column]);
    if (length === 0) {
      if (!mayBeEmpty) problem(column, 'empty', 'is empty');
    } else if (length > limit) problem(column, 'too_long', `is longer than ${limit} characters`);
    else if (!value[column].isWellFormed()) problem(column, 'not_unicode', 'is not well-formed Unicode text');
  }
  const state = value.state.toUpperCase();
  if (!US_STATE_CODES.has(state)) problem('state', 'bad_state', `"${value.state}" is not a US state or territory code`);

  let zipPoint: Point | undefined;
  if (!ZIP_PATTERN.test(value.zip)) problem('zip', 'bad_zip', `"${value.zip}" is not a ZIP code like 12345 or 12345-6789`);
  else zipPoint = lookupZip(value.zip.slice(0, 5));

  let point: Point | undefined;
  if (value.lat === '' && value.lng === '') {
    if (ZIP_PATTERN.test(value.zip) && !zipPoint) problem('zip', 'unknown_zip', `unknown ZIP code ${value.zip.slice(0, 5)}; give lat and lng`);
    point = zipPoint;
  } else {
    const lat = parseCoordinate(value.lat, 90);
    const lng = parseCoordinate(value.lng, 180);
    if (lat === undefined) problem('lat', 'bad_coordinate', `"${value.lat}" is not a latitude from -90 to 90`);
    if (lng === undefined) problem('lng', 'bad_coordinate', `"${value.lng}" is not a longitude from -180 to 180`);
    if (lat !== undefined && lng !== undefined) {
      point = { lat, lng };
      if (zipPoint && haversineMiles(zipPoint, point) > ZIP_DISTANCE_WARNING_MILES) {
        warnings.push({
          line,
          column: 'lat',
          code: 'far_from_zip',
          reason: `is more than ${ZIP_DISTANCE_WARNING_MILES} miles from ZIP ${value.zip.slice(0, 5)}`,
        });
      }
    }
  }

  // A day's hours fit their column (many short ranges can be valid and longer): MySQL would refuse them.
  for (const day of WEEKDAYS) {
    const reason = hoursProblem(value[day]);
    if (reason) problem(day, 'bad_hours', reason);
    else if (value[day].length > DAY_HOURS_MAX) problem(day, 'too_long', `is longer than ${DAY_HOURS_MAX} characters`);
  }

  if (value.time_zone !== '' && !isKnownZone(value.time_zone))
    problem('time_zone', 'bad_time_zone', `"${value.time_zone}" is not an IANA time zone name like America/Denver`);

  const special = parseSpecialDays(value.special_hours);
  if ('reason' in special) problem('special_hours', 'bad_special_hours', special.reason);
  const closure = parseClosure(value.temporarily_closed);
  if ('reason' in closure) problem('temporarily_closed', 'bad_closure', closure.reason);

  const phone = value.phone === '' ? { phone: '' } : parsePhone(value.phone);
  if ('reason' in phone) problem('phone', 'bad_phone', phone.reason);
  const website = value.website === '' ? null : websiteProblem(value.website);
  if (website) problem('website', 'bad_website', website);
  const email = value.email === '' ? null : emailProblem(value.email);
  if (email) problem('email', 'bad_email', email);

  const services = parseServices(value.services, lookups.services);
  if ('unknown' in services) problem('services', 'unknown_service', `"${services.unknown}" is not a service of the chain (GET /admin/services lists them)`);

  if (problems.length > 0 || !point || 'reason' in special || 'reason' in closure || 'reason' in phone || 'unknown' in services) return { problems, warnings };
  const zone = value.time_zone || (lookups.zone?.(point) ?? '');
  const row: StoreRow = {
    ...value,
    state,
    lat: point.lat,
    lng: point.lng,
    time_zone: zone,
    special_hours: specialDaysText(special.days),
    temporarily_closed: closureText(closure.closure),
    phone: phone.phone,
    services: services.text,
  };
  for (const field of KEPT_FIELDS) if (!columns.includes(field)) (row as Record<string, unknown>)[field] = undefined;
  return { row, problems, warnings };
}

/**
 * The columns whose cells a spreadsheet could take for a formula (OWASP "CSV Injection"): a value
 * starting with = + - @, a tab or a carriage return (GUARDED_FIELDS: free text, phone, email). The
 * other columns are checked formats that never start so (state, ZIP, hours, a website), or numbers
 * (a negative lat or lng is a number to a spreadsheet, not a formula).
 */
const GUARDED = new Set<StoreFieldName>(GUARDED_FIELDS);

/** A CSV record's guarded fields unguarded (guardCell), in place; `columns` are the file's (headerColumns). */
export function unguardRecord(record: string[], columns: readonly StoreFieldName[] = STORE_FIELD_NAMES): string[] {
  columns.forEach((column, i) => {
    if (GUARDED.has(column) && i < record.length) record[i] = unguardCell(record[i]);
  });
  return record;
}

const LINE_BREAK = /\r\n?|\n/g;

/**
 * Gives each CSV record the line it starts on, from csv-parse's records in file order with
 * its running count of skipped empty lines (`info.empty_lines`). csv-parse's own
 * `info.lines` is a record's last line, and in csv-parse 7 it counts a CRLF inside a quoted
 * field as two lines, so every line number after one would be one too high.
 */
export function recordFirstLines(): (record: string[], emptyLinesSoFar: number) => number {
  let next = 1;
  let emptyLinesBefore = 0;
  return (record, emptyLinesSoFar) => {
    const first = next + emptyLinesSoFar - emptyLinesBefore;
    emptyLinesBefore = emptyLinesSoFar;
    next = first + 1 + record.reduce((breaks, field) => breaks + (field.match(LINE_BREAK)?.length ?? 0), 0);
    return first;
  };
}

export function formatProblem({ line, column, reason }: Pick<RowProblem, 'line' | 'column' | 'reason'>): string {
  return column ? `line ${line}, ${column}: ${reason}` : `line ${line}: ${reason}`;
}
