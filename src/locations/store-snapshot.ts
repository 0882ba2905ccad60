import KDBush from 'kdbush';
import { isKnownZone, zoneOf } from '../geo/time-zones.js';
import { CLOSED, hoursProblem } from '../shared/business-hours.js';
import { closureDays, datedHours, weeklyHours, type DatedHours, type DayRules, type WeeklyHours } from '../shared/opening-hours.js';
import { servicesOf } from '../shared/services.js';
import { parseClosure, parseSpecialDays } from '../shared/special-days.js';
import { INCLUDE_FIELDS, type IncludeName } from '../shared/store-fields.js';
import type { CatalogHoliday, CatalogStore } from '../stores/store-catalog.js';
import { WEEKDAYS, type Weekday } from '../stores/store.entity.js';

/**
 * A week of hours with the days that differ from it (special days, a closure, the holidays of the
 * store's state), in a time zone: what `open_at` asks about, shared by every store that keeps it (a
 * chain has few weeks; a store with special days of its own has a schedule of its own).
 */
export interface Schedule {
  hours: DayRules;
  zone: string;
}

/**
 * One loaded catalogue, kept off the JavaScript heap: a few typed arrays and one buffer,
 * whatever the number of stores, so the garbage collector never walks 100,000 store objects
 * and the process stays small (about 20 MB for 100,000 stores instead of about 150 MB of
 * objects; docs/performance.md).
 */
export interface Snapshot {
  version: number;
  /** k-d tree over (lng, lat); store n is item n. */
  index?: KDBush;
  /** Store n's longitude and latitude at 2n and 2n + 1 (the tree reorders its own copy). */
  points: Float64Array;
  /** Store n's place in (name, code) order: breaks distance ties. Its length is the number of stores. */
  rank: Uint32Array;
  /**
   * Every store's Location as UTF-8 JSON, back to back, without its business_hours value,
   * `distance` and the closing brace: store n's is bytes offsets[n] .. offsets[n + 1] of the
   * stores' JSON, and its business_hours value, hours[hoursOf[n]], goes in at splits[n]. The
   * JSON is held in pieces of JSON_PIECE stores (piece p starts at byte jsonStarts[p]), not in
   * one buffer: joining the pieces took a second copy of the whole, 28 MB at 100,000 stores,
   * while the snapshot it replaces still served (writeLocation reads it).
   */
  json: Buffer[];
  jsonStarts: Uint32Array;
  offsets: Uint32Array;
  splits: Uint32Array;
  /** Each distinct week of hours once: a chain has few (about half of a store's JSON). */
  hours: Buffer[];
  hoursOf: Uint32Array;
  /** Each distinct (week of hours, time zone) once, and store n's at scheduleOf[n]. */
  schedules: Schedule[];
  scheduleOf: Uint32Array;
  /** The stores of each state (by its code in capitals), and of each of its cities (by cityKey): a region search walks these. */
  states: Map<string, StateGroup>;
  /**
   * Store n's name and code in UTF-8, at keys[keyOffsets[2n] .. keyOffsets[2n + 1]) and
   * [keyOffsets[2n + 1] .. keyOffsets[2n + 2]): what orders a distance tie with a store of
   * another snapshot (an index's changes, see StoreView) and finds a store by code.
   */
  keys: Buffer;
  keyOffsets: Uint32Array;
  /** The stores in code order. */
  byCode: Uint32Array;
  /** The chain's holidays the schedules were built with: a snapshot of changed stores is built with the same. */
  holidays: readonly CatalogHoliday[];
  /** The chain's services, sorted: service i is bit i of a store's mask. A snapshot of changed stores is built with the same. */
  services: readonly string[];
  /** Service i's label (a store's page shows it). */
  serviceLabels: readonly string[];
  /** Words (32 services each) of a store's mask: store n's services are the bits of serviceMasks[n * serviceWords .. (n + 1) * serviceWords). */
  serviceWords: number;
  serviceMasks: Uint32Array;
  /**
   * The text fields a search's `include` can add (INCLUDE_TEXT, the code among them), each as its
   * JSON value (a string, or null when empty): store n's field f is
   * extras[extraOffsets[n * F + f] .. extraOffsets[n * F + f + 1]), F being INCLUDE_TEXT's length.
   */
  extras: Buffer;
  extraOffsets: Uint32Array;
}

/** A service of the chain as the index keeps it: its slug, and the label a store's page shows. */
export interface CatalogServiceLabel {
  slug: string;
  label: string;
}

/** The services `snapshot` was built with, for a snapshot of changed stores built with the same. */
export const vocabularyOf = ({ services, serviceLabels }: Snapshot): CatalogServiceLabel[] => services.map((slug, i) => ({ slug, label: serviceLabels[i] }));

/** The include fields written as JSON text from the catalogue (every `include` field but the services, which are bits). */
const INCLUDE_TEXT = INCLUDE_FIELDS.filter((field) => field.kind !== 'services');
/** Each of INCLUDE_TEXT's fields' place among them: looked up once, not per store written. */
const INCLUDE_TEXT_PLACE = new Map<string, number>(INCLUDE_TEXT.map((field, place) => [field.name, place]));

/**
 * The services a filter asks for as a mask over `snapshot`'s vocabulary (serviceWords words), or
 * the first slug the vocabulary does not have.
 */
export function servicesMask(snapshot: Snapshot, slugs: readonly string[]): { mask: Uint32Array } | { unknown: string } {
  const mask = new Uint32Array(snapshot.serviceWords);
  for (const slug of slugs) {
    const bit = binarySearch(snapshot.services, slug);
    if (bit < 0) return { unknown: slug };
    mask[bit >>> 5] |= 1 << (bit & 31);
  }
  return { mask };
}

function binarySearch(sorted: readonly string[], value: string): number {
  for (let low = 0, high = sorted.length - 1; low <= high;) {
    const middle = (low + high) >>> 1;
    const order = compareText(sorted[middle], value);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** Whether store n has every service of `mask` (servicesMask). */
export function hasServices({ serviceMasks, serviceWords }: Snapshot, n: number, mask: Uint32Array): boolean {
  const at = n * serviceWords;
  // `>>> 0`: `&` gives a signed integer, the arrays hold unsigned ones (bit 31).
  for (let w = 0; w < serviceWords; w++) if ((serviceMasks[at + w] & mask[w]) >>> 0 !== mask[w]) return false;
  return true;
}

/** Store n's services, by slug, sorted. */
export function servicesOfStore({ serviceMasks, serviceWords, services }: Snapshot, n: number): string[] {
  const slugs: string[] = [];
  for (let w = 0; w < serviceWords; w++) {
    const word = serviceMasks[n * serviceWords + w];
    if (word === 0) continue;
    for (let bit = 0; bit < 32; bit++) if (word & (1 << bit)) slugs.push(services[w * 32 + bit]);
  }
  return slugs;
}

/** The JSON members (`,"code":"NY-0042"`) that `include` adds to store n's Location, in the order of `names` (INCLUDE_NAMES' order). */
export function includedJson(snapshot: Snapshot, n: number, names: readonly IncludeName[]): string {
  let text = '';
  for (const name of names) {
    if (name === 'services') {
      text += `,"services":${JSON.stringify(servicesOfStore(snapshot, n))}`;
      continue;
    }
    text += `,"${name}":${extraText(snapshot, n, name)}`;
  }
  return text;
}

/** Store n's `include` text field `name` as its JSON value (a string, or null when empty). */
function extraText({ extras, extraOffsets }: Snapshot, n: number, name: IncludeName): string {
  const at = n * INCLUDE_TEXT.length + INCLUDE_TEXT_PLACE.get(name)!;
  return extras.toString('utf8', extraOffsets[at], extraOffsets[at + 1]);
}

/**
 * What a store's page (GET /locations/{code}) shows beyond its Location, code, zone and days: its
 * contact fields and services, each only when the store has it. The page writes each of them in
 * both of its forms (store-page.ts, store-json-ld.ts); storeDetails reads them from the snapshot.
 */
export interface StoreDetails {
  /** E.164, as `+12125550142`. */
  phone?: string;
  /** An https URL. */
  website?: string;
  email?: string;
  /** The services the store offers, by slug, with the vocabulary's label. */
  services?: ReadonlyArray<{ slug: string; label: string }>;
}

/**
 * Store n's details, from what the snapshot keeps for the search's `include` (the contact fields'
 * JSON values, the services' bits, their labels from the vocabulary): each only when the store
 * has it, as the page leaves out what a store does not have.
 */
export function storeDetails(snapshot: Snapshot, n: number): StoreDetails {
  const details: { -readonly [K in keyof StoreDetails]: StoreDetails[K] } = {};
  for (const name of ['phone', 'website', 'email'] as const) {
    const value = JSON.parse(extraText(snapshot, n, name)) as string | null;
    if (value) details[name] = value;
  }
  const slugs = servicesOfStore(snapshot, n);
  if (slugs.length > 0) details.services = slugs.map((slug) => ({ slug, label: snapshot.serviceLabels[binarySearch(snapshot.services, slug)] }));
  return details;
}

/** Stores per piece of a snapshot's JSON (Snapshot.json): 2^JSON_PIECE_BITS. */
const JSON_PIECE_BITS = 11;
const JSON_PIECE = 1 << JSON_PIECE_BITS;

/** The bytes of store n's Location (writeLocation), without `distance` and the closing brace. */
export function locationBytes({ offsets, hours, hoursOf }: Snapshot, n: number): number {
  return offsets[n + 1] - offsets[n] + hours[hoursOf[n]].length;
}

/** Writes store n's Location into `target` at `at` (locationBytes of them), its week of hours in its place: the bytes written. */
export function writeLocation({ json, jsonStarts, offsets, splits, hours, hoursOf }: Snapshot, n: number, target: Buffer, at: number): number {
  const piece = n >>> JSON_PIECE_BITS;
  const start = jsonStarts[piece];
  let written = json[piece].copy(target, at, offsets[n] - start, splits[n] - start);
  written += hours[hoursOf[n]].copy(target, at + written);
  return written + json[piece].copy(target, at + written, splits[n] - start, offsets[n + 1] - start);
}

/** Store n's name. */
export const nameOf = ({ keys, keyOffsets }: Snapshot, n: number) => keys.toString('utf8', keyOffsets[2 * n], keyOffsets[2 * n + 1]);
/** Store n's code. */
export const codeOf = ({ keys, keyOffsets }: Snapshot, n: number) => keys.toString('utf8', keyOffsets[2 * n + 1], keyOffsets[2 * n + 2]);

/** The number of the store with `code`, if there is one: a binary search of byCode. */
export function storeOfCode(snapshot: Snapshot, code: string): number | undefined {
  const { byCode } = snapshot;
  for (let low = 0, high = byCode.length - 1; low <= high;) {
    const middle = (low + high) >>> 1;
    const order = compareText(codeOf(snapshot, byCode[middle]), code);
    if (order === 0) return byCode[middle];
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return undefined;
}

/** Some stores (their numbers, in catalogue order), with a k-d tree of their own when there are more than GROUP_TREE_MIN. */
export interface StoreGroup {
  stores: Uint32Array;
  /** Item i is store stores[i]. */
  index?: KDBush;
}

export interface StateGroup extends StoreGroup {
  cities: Map<string, StoreGroup>;
}

/**
 * Below this many stores a group has no tree: measuring each store costs less than a walk (a
 * leaf of the tree holds 64). A big state or city has one, so that a region search costs a walk
 * of `limit` stores whatever the region's size (docs/performance.md).
 */
export const GROUP_TREE_MIN = 64;

/** A city as a region search compares it: without regard to case or surrounding white space. */
export const cityKey = (city: string) => city.trim().toLowerCase();

export const EMPTY_SNAPSHOT: Snapshot = {
  version: -1,
  points: new Float64Array(0),
  rank: new Uint32Array(0),
  json: [],
  jsonStarts: new Uint32Array(0),
  offsets: new Uint32Array(1),
  splits: new Uint32Array(0),
  hours: [],
  hoursOf: new Uint32Array(0),
  schedules: [],
  scheduleOf: new Uint32Array(0),
  states: new Map(),
  keys: Buffer.alloc(0),
  keyOffsets: new Uint32Array(1),
  byCode: new Uint32Array(0),
  holidays: [],
  services: [],
  serviceLabels: [],
  serviceWords: 0,
  serviceMasks: new Uint32Array(0),
  extras: Buffer.alloc(0),
  extraOffsets: new Uint32Array(1),
};

const HOURS_SLOT = '"business_hours":0';

/** A store's Location in the response's field order, its hours and `distance` left out: [before the hours, after them]. */
function locationJson(s: CatalogStore, lat: number, lng: number): [string, string] {
  const text = JSON.stringify({
    name: s.name,
    address: s.address,
    city: s.city,
    state: s.state,
    zip: s.zip,
    business_hours: 0,
    lat: lat.toFixed(6),
    lng: lng.toFixed(6),
  });
  // The last match: only the fixed-format lat and lng follow it, never text from the catalogue.
  const slot = text.lastIndexOf(HOURS_SLOT) + HOURS_SLOT.length - 1;
  return [text.slice(0, slot), text.slice(slot + 1, -1)];
}

function hoursJson(s: CatalogStore): string {
  return JSON.stringify({
    Monday: s.monday,
    Tuesday: s.tuesday,
    Wednesday: s.wednesday,
    Thursday: s.thursday,
    Friday: s.friday,
    Saturday: s.saturday,
    Sunday: s.sunday,
  });
}

/**
 * Every write checks hours, zone, special days and closure, so only a row edited in the database
 * by hand can fail here; it must not stop the index from loading: hours that do not parse count as
 * closed that day, special days or a closure that do not parse as none, and a zone this runtime
 * does not know (an older Node's tz data) gives way to the zone at the store's coordinates.
 */
function scheduleOfRow(row: CatalogStore, lat: number, lng: number, holidays: DatedHours | undefined): Schedule {
  let week: WeeklyHours;
  try {
    week = weeklyHours(row);
  } catch {
    week = weeklyHours(Object.fromEntries(WEEKDAYS.map((day) => [day, hoursProblem(row[day]) ? CLOSED : row[day]])) as Record<Weekday, string>);
  }
  const special = parseSpecialDays(row.special_hours ?? '');
  const closure = parseClosure(row.temporarily_closed ?? '');
  const hours: DayRules = {
    ...week,
    special: 'days' in special ? datedHours(special.days) : undefined,
    closure: 'closure' in closure ? closureDays(closure.closure) : undefined,
    holidays,
  };
  return { hours, zone: isKnownZone(row.time_zone) ? row.time_zone : zoneOf({ lat, lng }) };
}

/**
 * The holidays of each state, worked out once per snapshot: a holiday without states is every
 * store's. `key` tells states with the same holidays apart in a schedule's key (one schedule for
 * every state when no holiday names states).
 */
function holidaysByState(holidays: readonly CatalogHoliday[]): (state: string) => { key: string; dated: DatedHours | undefined } {
  const everywhere = holidays.every((holiday) => holiday.states === '');
  const all = { key: '', dated: datedHours(holidays) };
  const byState = new Map<string, { key: string; dated: DatedHours | undefined }>();
  return (state) => {
    if (everywhere) return all;
    let found = byState.get(state);
    if (!found) {
      const kept = holidays.filter((holiday) => holiday.states === '' || holiday.states.split(',').includes(state));
      found = { key: kept.map((holiday) => holiday.date).join(','), dated: datedHours(kept) };
      byState.set(state, found);
    }
    return found;
  };
}

/** The order of names and codes in a distance tie: by UTF-16 code units, as JavaScript compares strings. */
export const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Numbers appended one at a time to a typed array, off the JavaScript heap, that grows by half
 * again when full. A load's per-store lists (100,000 stores) as JavaScript arrays grew by copies
 * in V8's large-object space, which only a full collection frees: some 20 MB of garbage beside
 * the index still serving, as the catalogue's reload after an import ran out of a 256 MiB limit.
 * Sized from the expected number of stores, the list is never copied.
 */
class Numbers<T extends Uint32Array | Float64Array> {
  length = 0;
  private array: T;

  constructor(
    private readonly make: (length: number) => T,
    capacity: number,
  ) {
    this.array = make(Math.max(capacity, 16));
  }

  push(value: number): void {
    if (this.length === this.array.length) {
      const grown = this.make(Math.ceil(this.array.length * 1.5));
      grown.set(this.array);
      this.array = grown;
    }
    this.array[this.length++] = value;
  }

  last(): number {
    return this.array[this.length - 1];
  }

  or(at: number, bits: number): void {
    this.array[at] |= bits;
  }

  /** The numbers, in an array of their own length (a copy only when the estimate was short or long). */
  done(): T {
    return this.length === this.array.length ? this.array : (this.array.slice(0, this.length) as T);
  }
}

const uint32s = (length: number) => new Uint32Array(length);
const float64s = (length: number) => new Float64Array(length);

/**
 * The snapshot of catalogue `version` from its stores, read page by page: each page's JSON
 * becomes one buffer at once, so only numbers (in typed arrays) and short strings outlive a page.
 * `expected` stores (the catalogue's count when it was read) size those arrays.
 */
export async function buildSnapshot(
  version: number,
  pages: AsyncIterable<CatalogStore[]> | Iterable<CatalogStore[]>,
  holidays: readonly CatalogHoliday[] = [],
  serviceList: ReadonlyArray<string | CatalogServiceLabel> = [],
  expected = 0,
): Promise<Snapshot> {
  const holidaysOf = holidaysByState(holidays);
  // The chain's services by slug (sorted), each with its label (a slug alone is its own label).
  const vocabulary = serviceList
    .map((service) => (typeof service === 'string' ? { slug: service, label: service } : service))
    .sort((a, b) => compareText(a.slug, b.slug));
  const services = vocabulary.map((service) => service.slug);
  // A store's services as bits over the vocabulary: a filter is a few ANDs per store, and 100,000 stores hold 400 KB per 32 services.
  const serviceWords = Math.ceil(services.length / 32);
  const bitOf = new Map(services.map((slug, bit) => [slug, bit]));
  const masks = new Numbers(uint32s, expected * serviceWords);
  const extraBuffers: Buffer[] = [];
  const extraOffsets = new Numbers(uint32s, expected * INCLUDE_TEXT.length + 1);
  extraOffsets.push(0);
  const points = new Numbers(float64s, 2 * expected);
  const names: string[] = [];
  const codes: string[] = [];
  const pieces: Buffer[] = [];
  let texts: string[] = [];
  // Store n's JSON is bytes offsets[n] .. offsets[n + 1], its week of hours going in at splits[n].
  const offsets = new Numbers(uint32s, expected + 1);
  offsets.push(0);
  const splits = new Numbers(uint32s, expected);
  const weeks = new Map<string, number>();
  const hoursOf = new Numbers(uint32s, expected);
  const scheduleIds = new Map<string, number>();
  const schedules: Schedule[] = [];
  const scheduleOf = new Numbers(uint32s, expected);
  // The stores of each state and city, gathered as they come (see groupByState).
  const members = new Map<string, { stores: number[]; cities: Map<string, number[]> }>();
  for await (const page of pages) {
    const extraTexts: string[] = [];
    for (const row of page) {
      const n = names.length;
      if (n % JSON_PIECE === 0 && texts.length > 0) {
        pieces.push(Buffer.from(texts.join('')));
        texts = [];
      }
      const lat = Number(row.lat);
      const lng = Number(row.lng);
      const [head, tail] = locationJson(row, lat, lng);
      texts.push(head, tail);
      const at = offsets.last();
      const headBytes = Buffer.byteLength(head);
      splits.push(at + headBytes);
      offsets.push(at + headBytes + Buffer.byteLength(tail));
      const week = hoursJson(row);
      if (!weeks.has(week)) weeks.set(week, weeks.size);
      hoursOf.push(weeks.get(week)!);
      const state = row.state.toUpperCase();
      const stateHolidays = holidaysOf(state);
      // Most stores have no special days or closure: their key is the week's, as before.
      const exceptions = row.special_hours || row.temporarily_closed ? ` ${row.special_hours} ${row.temporarily_closed}` : '';
      const schedule = `${row.time_zone} ${stateHolidays.key} ${week}${exceptions}`;
      if (!scheduleIds.has(schedule)) {
        scheduleIds.set(schedule, schedules.length);
        schedules.push(scheduleOfRow(row, lat, lng, stateHolidays.dated));
      }
      scheduleOf.push(scheduleIds.get(schedule)!);
      points.push(lng);
      points.push(lat);
      names.push(row.name);
      codes.push(row.code);
      let group = members.get(state);
      if (!group) members.set(state, (group = { stores: [], cities: new Map() }));
      group.stores.push(n);
      const city = cityKey(row.city);
      let cityStores = group.cities.get(city);
      if (!cityStores) group.cities.set(city, (cityStores = []));
      cityStores.push(n);
      const mask = masks.length;
      for (let w = 0; w < serviceWords; w++) masks.push(0);
      // A slug the vocabulary does not have (a row edited by hand) is left out: every write checks them.
      if (row.services)
        for (const slug of servicesOf(row.services)) {
          const bit = bitOf.get(slug);
          if (bit !== undefined) masks.or(mask + (bit >>> 5), 1 << (bit & 31));
        }
      for (const field of INCLUDE_TEXT) {
        const value = String(row[field.name] ?? '');
        const text = value === '' ? 'null' : JSON.stringify(value);
        extraTexts.push(text);
        extraOffsets.push(extraOffsets.last() + Buffer.byteLength(text));
      }
    }
    extraBuffers.push(Buffer.from(extraTexts.join('')));
  }
  if (texts.length > 0) pieces.push(Buffer.from(texts.join('')));
  const count = names.length;
  const storePoints = points.done();
  const storeOffsets = offsets.done();
  const rank = new Uint32Array(count);
  const order = Uint32Array.from({ length: count }, (_, n) => n).sort((a, b) => compareText(names[a], names[b]) || compareText(codes[a], codes[b]));
  order.forEach((store, place) => (rank[store] = place));
  const byCode = Uint32Array.from({ length: count }, (_, n) => n).sort((a, b) => compareText(codes[a], codes[b]));
  // Every name and code written once into one buffer, in place: no joined copy of them all as a string.
  const keyOffsets = new Uint32Array(2 * count + 1);
  for (let n = 0; n < count; n++) {
    keyOffsets[2 * n + 1] = keyOffsets[2 * n] + Buffer.byteLength(names[n]);
    keyOffsets[2 * n + 2] = keyOffsets[2 * n + 1] + Buffer.byteLength(codes[n]);
  }
  const keys = Buffer.allocUnsafe(keyOffsets[2 * count]);
  for (let n = 0; n < count; n++) {
    keys.write(names[n], keyOffsets[2 * n]);
    keys.write(codes[n], keyOffsets[2 * n + 1]);
  }
  let index: KDBush | undefined;
  if (count > 0) {
    index = new KDBush(count);
    for (let n = 0; n < count; n++) index.add(storePoints[2 * n], storePoints[2 * n + 1]);
    index.finish();
  }
  const jsonStarts = Uint32Array.from(pieces, (_, p) => storeOffsets[p * JSON_PIECE]);
  const hours = [...weeks.keys()].map((week) => Buffer.from(week));
  return {
    version,
    index,
    points: storePoints,
    rank,
    json: pieces,
    jsonStarts,
    offsets: storeOffsets,
    splits: splits.done(),
    hours,
    hoursOf: hoursOf.done(),
    schedules,
    scheduleOf: scheduleOf.done(),
    states: groupByState(members, storePoints),
    keys,
    keyOffsets,
    byCode,
    holidays,
    services: vocabulary.map((service) => service.slug),
    serviceLabels: vocabulary.map((service) => service.label),
    serviceWords,
    serviceMasks: masks.done(),
    extras: Buffer.concat(extraBuffers),
    extraOffsets: extraOffsets.done(),
  };
}

/** Each state's stores and each of its cities' (see StoreGroup), from their members' numbers. */
function groupByState(members: Map<string, { stores: number[]; cities: Map<string, number[]> }>, points: Float64Array): Map<string, StateGroup> {
  const group = (stores: number[]): StoreGroup => {
    if (stores.length <= GROUP_TREE_MIN) return { stores: Uint32Array.from(stores) };
    const index = new KDBush(stores.length);
    for (const n of stores) index.add(points[2 * n], points[2 * n + 1]);
    index.finish();
    return { stores: Uint32Array.from(stores), index };
  };
  return new Map(
    [...members].map(([code, { stores, cities }]) => [code, { ...group(stores), cities: new Map([...cities].map(([city, list]) => [city, group(list)])) }]),
  );
}
