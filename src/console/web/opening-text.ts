import { DAY, zoneOffsets } from '../../shared/zone-offsets.js';
import { closureDays, datedHours, openingState, weeklyHours, type OpeningState } from '../../shared/opening-hours.js';
import type { Closure, SpecialDay } from '../../shared/special-days.js';
import type { Weekday } from '../../shared/weekdays.js';

// Whether a store is open, in words, worked out in the browser by the service's own code
// (opening-hours.ts, Intl and arithmetic only), so that the console and the search's `open`
// and `next_change` never disagree. No DOM here: the unit specs run it in Node.

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** "Open now" and "closes 6:00 PM"; `until` is absent when the store never changes. */
export interface OpeningText {
  open: boolean;
  headline: string;
  until?: string;
}

/** A store's week and, when it has them, its special days, temporary closure and state (for the chain's holidays). */
export type StoreHours = Readonly<Record<Weekday, string>> & { special_hours?: readonly SpecialDay[]; temporarily_closed?: Closure | null; state?: string };

/** A holiday of the chain, as GET /admin/holidays lists it: `states` null for every store. */
export interface ChainHoliday {
  readonly date: string;
  readonly name: string;
  readonly hours: string;
  readonly states: readonly string[] | null;
}

/**
 * A store's state at `at` in its own time zone: "Open now · closes 6:00 PM", "Closed · opens Thu
 * 9:00 AM", "Open around the clock", "Closed all week" or "Temporarily closed". Its closure, its
 * special days and the `holidays` of its state count, in that order, as in the search. The time of the change is the store's wall clock, with its weekday unless
 * it falls today there; undefined when the hours or the zone cannot be read here (a browser whose
 * tz data lacks a zone newer than the service's).
 */
export function openingText(store: StoreHours, timeZone: string, at: number, holidays: readonly ChainHoliday[] = []): OpeningText | undefined {
  let state: OpeningState;
  try {
    const ours = holidays.filter((holiday) => holiday.states === null || (store.state !== undefined && holiday.states.includes(store.state)));
    const rules = {
      ...weeklyHours(store),
      special: datedHours(store.special_hours ?? []),
      holidays: datedHours(ours),
      closure: closureDays(store.temporarily_closed ?? null),
    };
    state = openingState(rules, timeZone, at);
  } catch {
    return undefined;
  }
  if (state.nextChange === null) {
    if (state.open) return { open: true, headline: 'Open around the clock' };
    return { open: false, headline: store.temporarily_closed ? 'Temporarily closed' : 'Closed all week' };
  }
  const offset = zoneOffsets(timeZone, at).offsetAt(at);
  const today = new Date(at + offset).toISOString().slice(0, 10);
  const when = changeWords(state.nextChange, today, state.open);
  return state.open ? { open: true, headline: 'Open now', until: `closes ${when}` } : { open: false, headline: 'Closed', until: `opens ${when}` };
}

/**
 * The local time of a change, read off its RFC 3339 text (2026-03-12T09:00:00-06:00, already in
 * the store's wall clock), against `today`, the local date now (2026-03-11): "6:00 PM" today,
 * "Thu 9:00 AM" on another day, "next Wed 9:00 AM" a week on (on a Wednesday, "Wed" alone would
 * read as today), and the date two weeks on or more ("2027-01-11 9:00 AM": the end of a closure). A closing at midnight that ends today reads "12:00 AM" without tomorrow's
 * weekday: that is how the hours themselves write the end of a day (9:00 AM - 12:00 AM).
 */
export function changeWords(nextChange: string, today: string, closing: boolean): string {
  const date = nextChange.slice(0, 10);
  const hour = Number(nextChange.slice(11, 13));
  const minute = nextChange.slice(14, 16);
  const time = `${hour % 12 || 12}:${minute} ${hour < 12 ? 'AM' : 'PM'}`;
  const days = (Date.parse(date) - Date.parse(today)) / DAY; // both UTC midnights: whole days apart
  if (days === 0 || (closing && days === 1 && hour === 0 && minute === '00')) return time;
  if (days >= 14) return `${date} ${time}`;
  const weekday = new Date(Date.parse(date)).getUTCDay();
  return `${days >= 7 ? 'next ' : ''}${DAY_NAMES[weekday]} ${time}`;
}
