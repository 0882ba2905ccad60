import { DAY, MINUTE, ZoneOffsets, zoneOffsets } from './zone-offsets.js';
import { CLOSED, hoursRanges, type MinuteRange } from './business-hours.js';
import { dateOfDay, dayNumber, type Closure, type SpecialDay } from './special-days.js';
import { WEEKDAYS, type Weekday } from './weekdays.js';

/**
 * Whether a store is open at an instant, and when that next changes.
 *
 * A day's ranges are wall-clock times on that day in the store's time zone, daylight saving
 * included, and a closing time of 12:00 AM is midnight at the end of the day. A wall-clock time
 * is placed as Temporal's "compatible" disambiguation does (see ZoneOffsets.instantOf): one that
 * does not exist when clocks spring forward moves later by the gap (a 2:30 AM opening in New
 * York on 2026-03-08 is 3:30 AM EDT), one that occurs twice when clocks fall back is the earlier
 * (a 1:30 AM closing on 2026-11-01 is 1:30 AM EDT). A range that ends up closing before it opens
 * that way (2:30 AM - 3:00 AM on the spring-forward day: 3:30 EDT to 3:00 EDT) does not open.
 *
 * A day's hours are, in this order of precedence: none while a temporary closure holds, the
 * store's own special day, the chain's holiday (DayRules), else the weekday's.
 *
 * Opening periods that touch are one period: a store open until 12:00 AM that opens again at
 * 12:00 AM the next day has no change at midnight, and a store open 12:00 AM - 12:00 AM every
 * day never changes. `nextChange` is the next real change, open to closed or closed to open.
 * After the last special day, holiday and closure the week repeats, so any store that changes
 * at all changes again within a week of wall-clock time after them; the walk looks no further
 * than NEXT_CHANGE_DAYS ahead, so `nextChange` is null when the store never changes (closed every
 * day, open around the clock, closed until further notice) or changes only further ahead.
 */
export interface OpeningState {
  open: boolean;
  /** The instant of the next change, RFC 3339 with the store's UTC offset at that instant: 2026-03-08T09:00:00-04:00. */
  nextChange: string | null;
}

/** How far ahead `nextChange` looks: the end of a closure within this many days is found. */
export const NEXT_CHANGE_DAYS = 400;

/** A store's week parsed once (the search asks about the same stores again and again): ranges per day, Monday first, and their text. */
export interface WeeklyHours {
  readonly days: readonly (readonly MinuteRange[])[];
  readonly texts?: readonly string[];
}

/** Dates (day numbers, ascending) and their hours: a store's special days, or the holidays of its state. */
export interface DatedHours {
  readonly days: Int32Array;
  readonly texts: readonly string[];
  readonly ranges: readonly (readonly MinuteRange[])[];
  /** A holiday's name, at the same index. */
  readonly names?: readonly string[];
}

/** A week with the days that differ from it. */
export interface DayRules extends WeeklyHours {
  readonly special?: DatedHours;
  readonly holidays?: DatedHours;
  /** Day numbers, both inclusive; `until` Infinity until further notice. */
  readonly closure?: { readonly from: number; readonly until: number };
}

/** What decides a day's hours, as `hours_today.kind` says. */
export type DayKind = 'weekly' | 'special' | 'holiday' | 'temporarily_closed';

/** A store's hours on one of its dates, and what decided them. */
export interface DayHours {
  date: string;
  hours: string;
  kind: DayKind;
  holiday: string | null;
}

/** The week of a store (or anything with the seven day columns); throws on hours that hoursProblem refuses. */
export function weeklyHours(store: Readonly<Record<Weekday, string>>): WeeklyHours {
  return { days: WEEKDAYS.map((day) => dayRanges(store[day])), texts: WEEKDAYS.map((day) => store[day]) };
}

/** Special days or holidays as DatedHours, by date; undefined for none. Throws on a date or hours the checks refuse. */
export function datedHours(entries: ReadonlyArray<SpecialDay & { name?: string }>): DatedHours | undefined {
  if (entries.length === 0) return undefined;
  const sorted = [...entries].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const days = Int32Array.from(sorted, ({ date }) => {
    const day = dayNumber(date);
    if (day === undefined) throw new RangeError(`not a date: ${date}`);
    return day;
  });
  const named = sorted.some((entry) => entry.name !== undefined);
  return {
    days,
    texts: sorted.map(({ hours }) => hours),
    ranges: sorted.map(({ hours }) => dayRanges(hours)),
    ...(named && { names: sorted.map(({ name }) => name ?? '') }),
  };
}

/** A closure as DayRules holds it; undefined for none. */
export function closureDays(closure: Closure | null): DayRules['closure'] {
  if (!closure) return undefined;
  const from = dayNumber(closure.from);
  const until = closure.until === null ? Infinity : dayNumber(closure.until);
  if (from === undefined || until === undefined) throw new RangeError(`not a closure: ${closure.from}/${closure.until}`);
  return { from, until };
}

/** A catalogue repeats a few day strings over and over: each is parsed once (the parsed ranges are shared, never changed). */
const parsedDays = new Map<string, readonly MinuteRange[]>();

function dayRanges(text: string): readonly MinuteRange[] {
  let ranges = parsedDays.get(text);
  if (!ranges) {
    ranges = hoursRanges(text);
    if (parsedDays.size >= 10_000) parsedDays.clear();
    parsedDays.set(text, ranges);
  }
  return ranges;
}

/** The index of `day` in `dated`, or -1: a binary search (a store has at most 400 special days). */
function indexOfDay(dated: DatedHours | undefined, day: number): number {
  if (!dated) return -1;
  const { days } = dated;
  for (let low = 0, high = days.length - 1; low <= high;) {
    const middle = (low + high) >>> 1;
    if (days[middle] === day) return middle;
    if (days[middle] < day) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

const NO_RANGES: readonly MinuteRange[] = [];

/** The ranges of local day `day` (a day number) whose weekday is `weekday` (Monday 0), by the order of precedence. */
function rangesOf(rules: DayRules, day: number, weekday: number): readonly MinuteRange[] {
  const { closure } = rules;
  if (closure && day >= closure.from && day <= closure.until) return NO_RANGES;
  let i = indexOfDay(rules.special, day);
  if (i >= 0) return rules.special!.ranges[i];
  i = indexOfDay(rules.holidays, day);
  if (i >= 0) return rules.holidays!.ranges[i];
  return rules.days[weekday];
}

/** The hours of local day `day` and what decided them (`hours_today`). */
export function hoursOfDay(rules: DayRules, day: number): DayHours {
  const date = dateOfDay(day);
  const { closure } = rules;
  if (closure && day >= closure.from && day <= closure.until) return { date, hours: CLOSED, kind: 'temporarily_closed', holiday: null };
  let i = indexOfDay(rules.special, day);
  if (i >= 0) return { date, hours: rules.special!.texts[i], kind: 'special', holiday: null };
  i = indexOfDay(rules.holidays, day);
  if (i >= 0) return { date, hours: rules.holidays!.texts[i], kind: 'holiday', holiday: rules.holidays!.names?.[i] ?? null };
  const weekday = (((day + 3) % 7) + 7) % 7;
  return { date, hours: rules.texts?.[weekday] ?? '', kind: 'weekly', holiday: null };
}

/** The last day that differs from the week (a special day, a holiday, a closure's last), or -Infinity. */
function lastException(rules: DayRules): number {
  let last = -Infinity;
  for (const dated of [rules.special, rules.holidays]) if (dated) last = Math.max(last, dated.days[dated.days.length - 1]);
  if (rules.closure) last = Math.max(last, rules.closure.until);
  return last;
}

/** The local date (a day number) at `at` in `timeZone`. */
export function localDay(timeZone: string, at: number): number {
  return Math.floor((at + zoneOffsets(timeZone, at).offsetAt(at)) / DAY);
}

/** Whether a store with these hours in `timeZone` (IANA, e.g. America/Denver) is open at `at`; a RangeError for an unknown zone. */
export function openingState(rules: DayRules, timeZone: string, at: Date | number): OpeningState {
  const t = +at;
  if (!Number.isFinite(t)) throw new RangeError('openingState needs a valid instant');
  let zone = zoneOffsets(timeZone, t);
  const today = Math.floor((t + zone.offsetAt(t)) / DAY); // the local date, as days since 1970-01-01
  const monday = (((today + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday: weekday of today, Monday = 0
  // Today and the next 8 days are enough for a week (the next change is at most a week of wall-clock
  // time away), and 8 days past the last exception for one with special days, holidays or a closure.
  const closedFor = rules.closure?.until === Infinity ? rules.closure.from : Infinity; // closed from this day on
  const lastDay = Math.min(today + NEXT_CHANGE_DAYS, Math.max(today + 8, lastException(rules) + 8));

  // Walk the opening periods from the start of today onwards, joining those that touch or overlap,
  // and stop at the first joined period that ends after `t`.
  let start = NaN;
  let end = NaN;
  let startZone = zone;
  let endZone = zone;
  for (let day = today; day <= lastDay && day < closedFor; day++) {
    const ranges = rangesOf(rules, day, (monday + day - today) % 7);
    if (ranges.length === 0) continue;
    const midnight = day * DAY;
    // A window of offsets covers some 40 days: a walk to the end of a long closure takes another.
    if (midnight + 2 * DAY > zone.to) zone = ZoneOffsets.around(timeZone, midnight);
    for (const [open, close] of ranges) {
      const opens = zone.instantOf(midnight + open * MINUTE);
      const closes = zone.instantOf(midnight + close * MINUTE);
      if (closes <= opens) continue; // all of it in the hour skipped when clocks spring forward
      if (opens <= end) {
        if (closes > end) [end, endZone] = [closes, zone]; // touches the period before: no change in between
        continue;
      }
      if (end > t) return settled(); // the period before ends after t and nothing joins it
      [start, startZone, end, endZone] = [opens, zone, closes, zone];
    }
  }
  // A period that holds t and lasts to the end of the walk never closes (open around the clock, or
  // for longer than the walk looks ahead), unless the walk stopped at a closure until further notice.
  if (end > t && start <= t && closedFor > lastDay) {
    const after = (lastDay + 1) * DAY;
    if (after + 2 * DAY > zone.to) zone = ZoneOffsets.around(timeZone, after);
    if (end >= zone.instantOf(after)) return { open: true, nextChange: null };
  }
  if (end > t) return settled();
  return { open: false, nextChange: null };

  function settled(): OpeningState {
    return start <= t ? { open: true, nextChange: endZone.format(end) } : { open: false, nextChange: startZone.format(start) };
  }
}
