import { createHash } from 'node:crypto';
import type { MinuteRange } from '../shared/business-hours.js';
import { hoursOfDay, localDay, openingState, type DayHours, type DayRules } from '../shared/opening-hours.js';
import { dateOfDay } from '../shared/special-days.js';
import { DAY, zoneOffsets } from '../shared/zone-offsets.js';
import type { IndexView } from './nearest-response.js';
import { codeOf, locationBytes, storeDetails, storeOfCode, writeLocation, type Snapshot, type StoreDetails } from './store-snapshot.js';

/** How many days of special days a page lists: today (the store's date) and the 29 after it. */
export const PAGE_DAYS = 30;

/**
 * The longest a cache may keep a page (`Cache-Control: max-age`): an edit of the store shows in a
 * cache within this, and `open` is never wrong for longer (the max-age also stops at `next_change`).
 */
export const PAGE_MAX_AGE_SECONDS = 60;

/** A store's Location as the search shows it, without `distance`. */
export interface PageLocation {
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  business_hours: Record<'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday' | 'Sunday', string>;
  lat: string;
  lng: string;
}

/** A day of the page's PAGE_DAYS whose hours are not the weekday's: the store's special day, or the chain's holiday. */
export interface PageDay extends DayHours {
  kind: 'special' | 'holiday';
  /** Its hours as ranges of minutes (the JSON-LD's opens and closes). */
  ranges: readonly MinuteRange[];
}

/**
 * Everything a store's page says, worked out from the index at one instant: both of its forms
 * (storePageJson, storeJsonLd) are written from it.
 */
export interface StorePage {
  code: string;
  location: PageLocation;
  zone: string;
  details: StoreDetails;
  /** The week's ranges, Monday first. */
  week: ReadonlyArray<readonly MinuteRange[]>;
  /** The special days and holidays of the next PAGE_DAYS days, by date (a day a closure covers is the closure's). */
  days: PageDay[];
  /** A closure that has not ended yet, in the store's calendar; `until` null: until further notice. */
  closure: { from: string; until: string | null } | null;
  open: boolean;
  nextChange: string | null;
  today: DayHours;
  /** The next instant (ms) at which the JSON form's date-dependent parts change: `next_change`, or the store's next midnight (the days move on). */
  changesAt: number;
  /** The next instant at which the JSON-LD form's change: the store's next midnight. */
  daysChangeAt: number;
}

/**
 * The store with `code` in the index's view (its base snapshot less the changed stores, and the
 * changed stores as they now are): a binary search of each part's codes, no database.
 */
export function findStore(view: IndexView, code: string): { snapshot: Snapshot; store: number } | undefined {
  for (const { snapshot, hidden } of view.parts) {
    const store = storeOfCode(snapshot, code);
    if (store !== undefined && hidden?.[store] !== 1) return { snapshot, store };
  }
  return undefined;
}

/** The page of store `store` of `snapshot` at instant `at` (ms). */
export function storePage(snapshot: Snapshot, store: number, at: number): StorePage {
  // The Location as the search writes it (its JSON kept in the snapshot), closed where the search adds `distance`.
  const bytes = Buffer.allocUnsafe(locationBytes(snapshot, store));
  writeLocation(snapshot, store, bytes, 0);
  const location = JSON.parse(`${bytes.toString('utf8')}}`) as PageLocation;
  const { hours: rules, zone } = snapshot.schedules[snapshot.scheduleOf[store]];
  const today = localDay(zone, at);
  const state = openingState(rules, zone, at);
  const offsetsOfZone = zoneOffsets(zone, at);
  const midnight = offsetsOfZone.instantOf((today + 1) * DAY);
  const next = state.nextChange === null ? Infinity : Date.parse(state.nextChange);
  return {
    code: codeOf(snapshot, store),
    location,
    zone,
    details: storeDetails(snapshot, store),
    week: rules.days,
    days: daysOf(rules, today),
    closure: closureOf(rules, today),
    open: state.open,
    nextChange: state.nextChange,
    today: hoursOfDay(rules, today),
    changesAt: Math.min(next, midnight),
    daysChangeAt: midnight,
  };
}

/**
 * The special days and holidays among the PAGE_DAYS days from `today`, as the search's `hours_today`
 * would say them: only the dated days are looked at (a day's date text costs microseconds; a
 * page of 30 days of them cost more than the whole search).
 */
function daysOf(rules: DayRules, today: number): PageDay[] {
  const dated = new Set<number>();
  for (const list of [rules.special, rules.holidays]) for (const day of list?.days ?? []) if (day >= today && day < today + PAGE_DAYS) dated.add(day);
  const days: PageDay[] = [];
  for (const day of [...dated].sort((a, b) => a - b)) {
    const hours = hoursOfDay(rules, day);
    // A day a closure covers is the closure's.
    if (hours.kind !== 'special' && hours.kind !== 'holiday') continue;
    const list = hours.kind === 'special' ? rules.special! : rules.holidays!;
    days.push({ ...hours, kind: hours.kind, ranges: list.ranges[list.days.indexOf(day)] });
  }
  return days;
}

/** The store's closure unless it ended before `today`. */
function closureOf({ closure }: DayRules, today: number): StorePage['closure'] {
  if (!closure || closure.until < today) return null;
  return { from: dateOfDay(closure.from), until: closure.until === Infinity ? null : dateOfDay(closure.until) };
}

/** The JSON form: the Location's fields, then the store's own, each detail only when the store has it. */
export function storePageJson(page: StorePage): string {
  const { details } = page;
  return JSON.stringify({
    ...page.location,
    code: page.code,
    time_zone: page.zone,
    phone: details.phone,
    website: details.website,
    email: details.email,
    services: details.services?.map(({ slug, label }) => ({ slug, label })),
    special_days: page.days.map(({ date, hours, kind, holiday }) => ({ date, hours, kind, holiday })),
    temporarily_closed: page.closure,
    open: page.open,
    next_change: page.nextChange,
    hours_today: page.today,
  });
}

/** A strong entity tag of a representation: its bytes' digest, so that it changes exactly when they do (RFC 9110 §8.8.3). */
export const entityTag = (body: string) => `"${createHash('sha256').update(body).digest('base64url')}"`;

/**
 * Whether `If-None-Match` matches `tag`: `*` (the store exists), or one of its entity tags by the
 * weak comparison (RFC 9110 §13.1.2: `W/` aside, the same opaque tag). Our tags have no comma, so a
 * list splits at commas without mistaking a part of another tag for ours.
 */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((part) => {
    const candidate = part.trim();
    return (candidate.startsWith('W/') ? candidate.slice(2) : candidate) === tag;
  });
}

/**
 * `Cache-Control` of a page until `changesAt`: private (the request carried a token), for as long
 * as it stays right but at most PAGE_MAX_AGE_SECONDS, then revalidated (a 304 when it is the same).
 */
export function pageCacheControl(changesAt: number, now: number): string {
  const seconds = Math.max(0, Math.min(PAGE_MAX_AGE_SECONDS, Math.floor((changesAt - now) / 1000)));
  return `private, max-age=${seconds}, must-revalidate`;
}
