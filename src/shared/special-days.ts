import { hoursProblem } from './business-hours.js';
import { DAY } from './zone-offsets.js';

/**
 * The days that differ from a store's week: its own special days (`special_hours`), a temporary
 * closure (`temporarily_closed`) and the chain's holidays. Their checks and their one text form,
 * shared by the CSV, the database column and the admin API (which shows them as JSON), and bundled
 * into the console's browser code like business-hours.ts.
 *
 * A date is a calendar date in the store's own time zone, YYYY-MM-DD, from 2000 to 2199: a store's
 * calendar has no use for others, and a typo such as 0226 is refused rather than kept.
 */

/** The most special days one store may carry: more than a year of them. */
export const SPECIAL_DAYS_MAX = 400;

/** The longest hours of one day, as a weekday's column holds them. */
export const DAY_HOURS_MAX = 200;

/** Why `hours` are not a day's hours: the weekly format, and no longer than a weekday's column. */
function dayHoursProblem(hours: string): string | null {
  return hours.length > DAY_HOURS_MAX ? `is longer than ${DAY_HOURS_MAX} characters` : hoursProblem(hours);
}

/** A store's own hours on one date, replacing its weekday's: `Closed` or ranges as the weekly format. */
export interface SpecialDay {
  date: string;
  hours: string;
}

/** A temporary closure, both dates inclusive; `until` null: until further notice. */
export interface Closure {
  from: string;
  until: string | null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const FIRST_YEAR = 2000;
const LAST_YEAR = 2199;

/** The day number (days since 1970-01-01) of a valid date YYYY-MM-DD, or undefined. */
export function dayNumber(text: string): number | undefined {
  const match = DATE.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < FIRST_YEAR || year > LAST_YEAR) return undefined;
  const t = Date.UTC(year, month - 1, day);
  const date = new Date(t);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return t / DAY;
}

/** A day number as YYYY-MM-DD. */
export const dateOfDay = (day: number): string => new Date(day * DAY).toISOString().slice(0, 10);

/** Why `text` is not a date this service takes, or null. */
export function dateProblem(text: unknown): string | null {
  if (typeof text !== 'string') return 'must be a date YYYY-MM-DD';
  if (dayNumber(text) !== undefined) return null;
  return DATE.test(text) ? `"${text}" is not a calendar date from ${FIRST_YEAR} to ${LAST_YEAR}` : `"${text}" is not a date like 2026-12-24 (YYYY-MM-DD)`;
}

/** A problem of a structured value, by its path (`[1].date`, `.until`), which the caller prefixes with the field's name. */
export interface PathProblem {
  path: string;
  reason: string;
}

/** What is wrong with a list of special days as the admin API takes it (every problem, 0-based paths), or none. */
export function specialDaysProblems(value: unknown): PathProblem[] {
  if (!Array.isArray(value)) return [{ path: '', reason: 'must be a list of {"date", "hours"}' }];
  if (value.length > SPECIAL_DAYS_MAX) return [{ path: '', reason: `has ${value.length} days, more than ${SPECIAL_DAYS_MAX}` }];
  const problems: PathProblem[] = [];
  const seen = new Map<string, number>();
  value.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push({ path: `[${i}]`, reason: 'must be an object {"date", "hours"}' });
      return;
    }
    const { date, hours, ...rest } = entry as Record<string, unknown>;
    for (const key of Object.keys(rest)) problems.push({ path: `[${i}].${key}`, reason: 'is not a field of a special day' });
    const badDate = dateProblem(date);
    if (badDate) problems.push({ path: `[${i}].date`, reason: badDate });
    else if (seen.has(date as string)) problems.push({ path: `[${i}].date`, reason: `${date as string} is already at [${seen.get(date as string)}]` });
    else seen.set(date as string, i);
    const badHours = typeof hours === 'string' ? dayHoursProblem(hours) : 'must be "Closed" or ranges like "9:00 AM - 2:00 PM"';
    if (badHours) problems.push({ path: `[${i}].hours`, reason: badHours });
  });
  return problems;
}

/** What is wrong with a closure as the admin API takes it (null clears), or none. */
export function closureProblems(value: unknown): PathProblem[] {
  if (value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return [{ path: '', reason: 'must be null or {"from", "until"}' }];
  const { from, until, ...rest } = value as Record<string, unknown>;
  const problems: PathProblem[] = Object.keys(rest).map((key) => ({ path: `.${key}`, reason: 'is not a field of a closure' }));
  const badFrom = dateProblem(from);
  if (badFrom) problems.push({ path: '.from', reason: badFrom });
  if (until !== null && until !== undefined) {
    const badUntil = dateProblem(until);
    if (badUntil) problems.push({ path: '.until', reason: badUntil });
    else if (!badFrom && (until as string) < (from as string))
      problems.push({ path: '.until', reason: `${until as string} is before from (${from as string})` });
  } else if (until === undefined) problems.push({ path: '.until', reason: 'is required: a date, or null for until further notice' });
  return problems;
}

/*
 * The text form, as the CSV's cells and the database's columns hold it:
 *   special_hours       2026-12-24=9:00 AM - 2:00 PM; 2026-12-25=Closed   (by date; empty: none)
 *   temporarily_closed  2027-01-04/2027-01-31, or 2027-01-04/.. until further notice (ISO 8601-2's
 *                       open interval); empty: none
 * `;` and `=` never occur in hours, and `/` never in a date, so a cell splits without quoting rules.
 */
const ENTRIES = /\s*;\s*/;
const OPEN_END = '..';

/** The text of special days, ordered by date. */
export function specialDaysText(days: readonly SpecialDay[]): string {
  return [...days]
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
    .map(({ date, hours }) => `${date}=${hours}`)
    .join('; ');
}

/** The special days of a text (empty: none), or why it is not one; `reason` says which entry (1-based, as a person counts in a cell). */
export function parseSpecialDays(text: string): { days: SpecialDay[] } | { reason: string } {
  if (text.trim() === '') return { days: [] };
  const entries = text.trim().split(ENTRIES);
  if (entries.length > SPECIAL_DAYS_MAX) return { reason: `has ${entries.length} days, more than ${SPECIAL_DAYS_MAX}` };
  const days: SpecialDay[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of entries.entries()) {
    const equals = entry.indexOf('=');
    if (equals < 0) return { reason: `day ${i + 1} ("${entry}") is not like 2026-12-24=9:00 AM - 2:00 PM` };
    const date = entry.slice(0, equals).trim();
    const hours = entry.slice(equals + 1).trim();
    const badDate = dateProblem(date);
    if (badDate) return { reason: `day ${i + 1}: ${badDate}` };
    if (seen.has(date)) return { reason: `day ${i + 1}: ${date} appears twice` };
    seen.add(date);
    const badHours = dayHoursProblem(hours);
    if (badHours) return { reason: `day ${i + 1} (${date}): ${badHours}` };
    days.push({ date, hours });
  }
  return { days: days.sort((a, b) => (a.date < b.date ? -1 : 1)) };
}

/** A closure's text; empty for none. */
export const closureText = (closure: Closure | null): string => (closure ? `${closure.from}/${closure.until ?? OPEN_END}` : '');

/** The closure of a text (empty: none), or why it is not one. */
export function parseClosure(text: string): { closure: Closure | null } | { reason: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { closure: null };
  const slash = trimmed.indexOf('/');
  if (slash < 0) return { reason: `"${trimmed}" is not like 2027-01-04/2027-01-31, or 2027-01-04/.. until further notice` };
  const from = trimmed.slice(0, slash).trim();
  const rest = trimmed.slice(slash + 1).trim();
  const until = rest === OPEN_END ? null : rest;
  const problems = closureProblems({ from, until });
  if (problems.length > 0) return { reason: problems.map(({ path, reason }) => `${path.slice(1)} ${reason}`).join('; ') };
  return { closure: { from, until } };
}
