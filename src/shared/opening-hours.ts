import { DAY, MINUTE, zoneOffsets } from './zone-offsets.js';
import { hoursRanges, type MinuteRange } from './business-hours.js';
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
 * Opening periods that touch are one period: a store open until 12:00 AM that opens again at
 * 12:00 AM the next day has no change at midnight, and a store open 12:00 AM - 12:00 AM every
 * day never changes. `nextChange` is the next real change, open to closed or closed to open.
 * Because the week repeats, any store that changes at all changes again within a week of wall-
 * clock time (7 days, give or take the daylight-saving hour), so `nextChange` is null exactly
 * when the store never changes: closed every day, or open around the clock all week.
 */
export interface OpeningState {
  open: boolean;
  /** The instant of the next change, RFC 3339 with the store's UTC offset at that instant: 2026-03-08T09:00:00-04:00. */
  nextChange: string | null;
}

/** A store's week parsed once (the search asks about the same stores again and again): ranges per day, Monday first. */
export interface WeeklyHours {
  readonly days: readonly (readonly MinuteRange[])[];
}

/** The week of a store (or anything with the seven day columns); throws on hours that hoursProblem refuses. */
export function weeklyHours(store: Readonly<Record<Weekday, string>>): WeeklyHours {
  return { days: WEEKDAYS.map((day) => dayRanges(store[day])) };
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

/** Whether a store with these hours in `timeZone` (IANA, e.g. America/Denver) is open at `at`; a RangeError for an unknown zone. */
export function openingState(hours: WeeklyHours, timeZone: string, at: Date | number): OpeningState {
  const t = +at;
  if (!Number.isFinite(t)) throw new RangeError('openingState needs a valid instant');
  const zone = zoneOffsets(timeZone, t);
  const today = Math.floor((t + zone.offsetAt(t)) / DAY); // the local date, as days since 1970-01-01
  const monday = (((today + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday: weekday of today, Monday = 0

  // Walk the opening periods from the start of today onwards, joining those that touch or overlap,
  // and stop at the first joined period that ends after `t`. Today and the next 8 days are enough:
  // the week repeats, so the next change is at most a week of wall-clock time away.
  let start = NaN;
  let end = NaN;
  for (let d = 0; d <= 8; d++) {
    const midnight = (today + d) * DAY;
    for (const [open, close] of hours.days[(monday + d) % 7]) {
      const opens = zone.instantOf(midnight + open * MINUTE);
      const closes = zone.instantOf(midnight + close * MINUTE);
      if (closes <= opens) continue; // all of it in the hour skipped when clocks spring forward
      if (opens <= end) {
        end = Math.max(end, closes); // touches the period before: no change in between
        continue;
      }
      if (end > t) return settled(start, end); // the period before ends after t and nothing joins it
      start = opens;
      end = closes;
    }
  }
  // The last period reaches the end of the days walked: if it holds t, the store was open all the
  // way (around the clock every day), so it never closes.
  if (end > t && start <= t) return { open: true, nextChange: null };
  if (end > t) return settled(start, end);
  return { open: false, nextChange: null };

  function settled(from: number, until: number): OpeningState {
    return from <= t ? { open: true, nextChange: zone.format(until) } : { open: false, nextChange: zone.format(from) };
  }
}
