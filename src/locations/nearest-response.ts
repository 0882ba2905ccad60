import { around } from 'geokdbush';
import type KDBush from 'kdbush';
import { DISTANCE_UNITS, SEARCH_SCOPES } from '../common/api-headers.js';
import { EARTH_RADIUS_MILES, haversineMiles, KM_PER_MILE, type Point } from '../shared/great-circle.js';
import { hoursOfDay, localDay, openingState } from '../shared/opening-hours.js';
import { cityKey, codeOf, compareText, nameOf, type Snapshot } from './store-snapshot.js';

/** geokdbush measures in kilometres on a sphere of this radius; only the angle matters. */
const GEOKDBUSH_EARTH_RADIUS_KM = 6371;

const RESPONSE_HEAD = Buffer.from('{"Code":"Success","locations":[');
const RESPONSE_TAIL = Buffer.from(']}');
const COMMA = 0x2c;

interface Nearby {
  /** The part of the view the store is in (IndexView.parts). */
  part: number;
  /** The store's number in that part's snapshot. */
  store: number;
  distance: number;
}

/**
 * What a search looks through: a snapshot, or several (the parts) searched as one catalogue. A
 * StoreIndex that applied changes has two: the snapshot it last built with the changed stores
 * `hidden` (a 1 at their numbers), and a small snapshot of the changed stores as they now are.
 * A store is in at most one part, unhidden.
 */
export interface IndexView {
  parts: ReadonlyArray<{ snapshot: Snapshot; hidden?: Uint8Array }>;
}

type Part = IndexView['parts'][number];
/** Whether the search keeps store `store` of part `part` (open_only). */
type Keep = (part: number, store: number) => boolean;

const partsOf = (source: Snapshot | IndexView): IndexView['parts'] => ('parts' in source ? source.parts : [{ snapshot: source }]);

/** A search's `open_at` (milliseconds since 1970) and `open_only`. */
export interface Moment {
  at: number;
  openOnly: boolean;
}

/**
 * Each schedule's state at one instant, worked out the first time a store of that schedule is
 * met: a search over thousands of stores computes a handful of states. `fields` is the JSON
 * the locations of that schedule carry after `distance`.
 */
class Openings {
  private readonly open: Uint8Array; // 0: not worked out yet, 1: open, 2: closed
  private readonly fields: string[] = [];

  constructor(
    private readonly snapshot: Snapshot,
    private readonly at: number,
  ) {
    this.open = new Uint8Array(snapshot.schedules.length);
  }

  isOpen(store: number): boolean {
    const id = this.snapshot.scheduleOf[store];
    if (this.open[id] === 0) this.workOut(id);
    return this.open[id] === 1;
  }

  fieldsOf(store: number): string {
    const id = this.snapshot.scheduleOf[store];
    if (this.open[id] === 0) this.workOut(id);
    return this.fields[id];
  }

  private workOut(id: number): void {
    const { hours, zone } = this.snapshot.schedules[id];
    const state = openingState(hours, zone, this.at);
    const today = hoursOfDay(hours, localDay(zone, this.at));
    this.open[id] = state.open ? 1 : 2;
    this.fields[id] =
      `,"open":${state.open},"time_zone":${JSON.stringify(zone)},"next_change":${state.nextChange === null ? 'null' : `"${state.nextChange}"`}` +
      `,"hours_today":${JSON.stringify(today)}`;
  }
}

/**
 * At most `limit` stores within `maxMiles` of `center` (boundary included), nearest first,
 * ties by name then code, as the whole 200 response of POST /locations/nearest,
 * `{"Code":"Success","locations":[…]}` in UTF-8: each store's JSON was written once when the
 * snapshot was built; a search only copies it and adds the distance (no objects built, no
 * JSON.stringify). With a `moment`, each location also says whether it is open then, its time
 * zone and its next change; with `openOnly`, closed stores are passed over in the tree walk, so
 * `limit` counts open ones.
 */
export function nearestResponse(source: Snapshot | IndexView, center: Point, maxMiles: number, limit: number, moment?: Moment): Buffer {
  return nearestAnswer(source, center, maxMiles, limit, moment).body;
}

/**
 * nearestResponse, and its reach: the distance in miles from `center` beyond which no store's
 * change can change the answer (see StoreIndex's answers).
 */
export function nearestAnswer(source: Snapshot | IndexView, center: Point, maxMiles: number, limit: number, moment?: Moment): { body: Buffer; reach: number } {
  const parts = partsOf(source);
  const openings = moment && parts.map(({ snapshot }) => new Openings(snapshot, moment.at));
  const found = search(parts, center, maxMiles, limit, moment?.openOnly ? (part, store) => openings![part].isOpen(store) : undefined);
  return { body: write(parts, found, openings), reach: reachOf(found, limit, maxMiles) };
}

/** Where a store's change stops mattering to an answer of `found`: beyond the last store of a full answer, or else beyond what was searched. */
const reachOf = (found: Nearby[], limit: number, otherwise: number) => (limit > 0 && found.length >= limit ? found[found.length - 1].distance : otherwise);

export type DistanceUnit = (typeof DISTANCE_UNITS)[number];

/** What a search looked through, as its `Search-Scope` header says. */
export type SearchScope = (typeof SEARCH_SCOPES)[number];

/** A state, or a city of it: the request's `region`, its state in capitals. */
export interface Region {
  state: string;
  city?: string;
}

/** The search's `distance_unit`, `nearest_if_none`, `region` and `travel_mode`: what a plain search (nearestResponse) does not ask. */
export interface Scope {
  unit: DistanceUnit;
  nearestIfNone: boolean;
  region?: Region;
  /**
   * The answer to a `travel_mode` request without travel times (no routing engine, or none in
   * time): the straight-line answer, each location with `travel_time` and `travel_distance` null.
   */
  straightLineTravel?: boolean;
}

/** What each location of a straight-line answer to `travel_mode` carries after the rest. */
const NO_TRAVEL_TIMES = ',"travel_time":null,"travel_distance":null';

/**
 * nearestResponse with a scope: `maxDistance` and each `distance` in `scope.unit`; with
 * `nearestIfNone`, the single nearest store (open store with `openOnly`) at any distance when
 * none is in range, found by the same walk of the tree without a radius; with a `region`, every
 * store of the state (or city), nearest first, walked in the state's own tree (Snapshot.states),
 * `maxDistance` unused. Also says which it answered.
 */
export function scopedResponse(
  source: Snapshot | IndexView,
  center: Point,
  maxDistance: number,
  limit: number,
  moment: Moment | undefined,
  scope: Scope,
): { body: Buffer; scope: SearchScope; reach: number } {
  const parts = partsOf(source);
  const openings = moment && parts.map(({ snapshot }) => new Openings(snapshot, moment.at));
  const { found, scope: answered, reach } = scopedFound(parts, openings, center, maxDistance, limit, moment, scope);
  return { body: write(parts, found, openings, scope.straightLineTravel ? () => NO_TRAVEL_TIMES : undefined), scope: answered, reach };
}

/** The stores of scopedResponse, in order, their distances in the unit asked, what it answered and its reach. */
function scopedFound(
  parts: IndexView['parts'],
  openings: Openings[] | undefined,
  center: Point,
  maxDistance: number,
  limit: number,
  moment: Moment | undefined,
  scope: Scope,
): { found: Nearby[]; scope: SearchScope; reach: number } {
  const keep: Keep | undefined = moment?.openOnly ? (part, store) => openings![part].isOpen(store) : undefined;
  let answered: SearchScope = 'radius';
  let found: Nearby[];
  let reach: number;
  const perUnit = scope.unit === 'km' ? KM_PER_MILE : 1;
  // The single nearest store (open store) first: beyond max_distance, it is the answer, found by one
  // walk. A radius walk with nothing in range costs what this one does (geokdbush opens nodes until a
  // store comes out of its queue, in range or not), so walking both would pay twice far from the stores.
  const nearest = scope.nearestIfNone && !scope.region ? search(parts, center, Infinity, 1, keep) : undefined;
  if (scope.region) {
    answered = 'region';
    found = regionSearch(parts, center, scope.region, limit, keep);
    reach = reachOf(found, limit, Infinity);
  } else if (nearest && (nearest.length === 0 || nearest[0].distance * perUnit > maxDistance)) {
    found = nearest;
    if (found.length > 0) answered = 'nearest';
    // A store nearer than the one found (or any store, when none was) would change the answer.
    reach = found.length > 0 ? found[0].distance : Infinity;
  } else if (scope.unit === 'km') {
    // Walked in miles a hair wider than asked; the exact comparison is made in kilometres, so that
    // a store whose distance in kilometres equals max_distance counts, as it does in miles.
    const maxMiles = (maxDistance / KM_PER_MILE) * (1 + 1e-9);
    found = search(parts, center, maxMiles, limit, keep).filter(({ distance }) => distance * KM_PER_MILE <= maxDistance);
    reach = reachOf(found, limit, maxMiles);
  } else {
    found = search(parts, center, maxDistance, limit, keep);
    reach = reachOf(found, limit, maxDistance);
  }
  if (scope.unit === 'km') for (const nearby of found) nearby.distance *= KM_PER_MILE;
  return { found, scope: answered, reach };
}

/** A store's way by road, as the router gives it. */
export interface TravelLeg {
  seconds: number;
  metres: number;
}

/**
 * The first half of a `travel_mode` search: the stores scopedResponse would find with room for
 * `candidates` of them (the most the router is asked for, or `limit` if more), each with its code
 * and point for the router; and `answer`, which writes the response once their legs are known:
 * the reachable stores by travel time (then straight-line distance, name and code), those longer
 * than `maxMinutes` left out, then the unreachable ones in straight-line order (left out too under
 * `maxMinutes`), at most `limit`; each location with `travel_time` (minutes, one decimal) and
 * `travel_distance` (road distance in the unit asked, two decimals). Without legs (no engine, or
 * none in time) it writes the straight-line answer, times null and `maxMinutes` unused.
 */
export function travelCandidates(
  source: Snapshot | IndexView,
  center: Point,
  maxDistance: number,
  limit: number,
  candidates: number,
  moment: Moment | undefined,
  scope: Scope,
): {
  stores: Array<{ key: string; point: Point }>;
  scope: SearchScope;
  /** Miles from `center` beyond which no store's change alters the candidates (see nearestAnswer). */
  reach: number;
  answer: (legs: ReadonlyArray<TravelLeg | null> | undefined, maxMinutes: number | undefined) => Buffer;
} {
  const parts = partsOf(source);
  const openings = moment && parts.map(({ snapshot }) => new Openings(snapshot, moment.at));
  const { found, scope: answered, reach } = scopedFound(parts, openings, center, maxDistance, Math.max(limit, candidates), moment, scope);
  const stores = found.map(({ part, store }) => {
    const { snapshot } = parts[part];
    return { key: codeOf(snapshot, store), point: { lng: snapshot.points[2 * store], lat: snapshot.points[2 * store + 1] } };
  });
  const metresPerUnit = scope.unit === 'km' ? 1000 : 1000 * KM_PER_MILE;
  const answer = (legs: ReadonlyArray<TravelLeg | null> | undefined, maxMinutes: number | undefined): Buffer => {
    if (!legs) return write(parts, found.slice(0, limit), openings, () => NO_TRAVEL_TIMES);
    const order = acrossParts(parts);
    const reachable = found
      .map((nearby, i) => ({ nearby, leg: legs[i] }))
      .filter((entry): entry is { nearby: Nearby; leg: TravelLeg } => entry.leg !== null && (maxMinutes === undefined || entry.leg.seconds <= maxMinutes * 60))
      .sort((a, b) => a.leg.seconds - b.leg.seconds || order(a.nearby, b.nearby));
    const unreachable = maxMinutes === undefined ? found.filter((_, i) => legs[i] === null) : [];
    const chosen = [...reachable.map(({ nearby }) => nearby), ...unreachable].slice(0, limit);
    const legOf = new Map(reachable.map(({ nearby, leg }) => [nearby, leg]));
    return write(parts, chosen, openings, (nearby) => {
      const leg = legOf.get(nearby);
      return leg
        ? `,"travel_time":${Math.round(leg.seconds / 6) / 10},"travel_distance":${Math.round((leg.metres / metresPerUnit) * 100) / 100}`
        : NO_TRAVEL_TIMES;
    });
  };
  return { stores, scope: answered, reach, answer };
}

/** The response of nearestResponse for the stores found, in order, their distances in the unit asked; `more` after each location's other fields. */
function write(parts: IndexView['parts'], found: Nearby[], openings: Openings[] | undefined, more?: (nearby: Nearby) => string): Buffer {
  const tails = found.map(({ part, store, distance }) => `,"distance":${Math.round(distance * 100) / 100}${openings ? openings[part].fieldsOf(store) : ''}}`);
  // Apart, so that the searches without them build their tails exactly as before.
  if (more) for (let i = 0; i < found.length; i++) tails[i] = `${tails[i].slice(0, -1)}${more(found[i])}}`;
  let size = RESPONSE_HEAD.length + RESPONSE_TAIL.length + Math.max(0, found.length - 1);
  for (let i = 0; i < found.length; i++) {
    const { offsets, hours, hoursOf } = parts[found[i].part].snapshot;
    const n = found[i].store;
    size += offsets[n + 1] - offsets[n] + hours[hoursOf[n]].length + tails[i].length;
  }
  const body = Buffer.allocUnsafe(size);
  let at = RESPONSE_HEAD.copy(body, 0);
  for (let i = 0; i < found.length; i++) {
    const { json, offsets, splits, hours, hoursOf } = parts[found[i].part].snapshot;
    const n = found[i].store;
    if (i > 0) body[at++] = COMMA;
    at += json.copy(body, at, offsets[n], splits[n]);
    at += hours[hoursOf[n]].copy(body, at);
    at += json.copy(body, at, splits[n], offsets[n + 1]);
    at += body.write(tails[i], at, 'latin1');
  }
  RESPONSE_TAIL.copy(body, at);
  return body;
}

/**
 * The stores of `nearestResponse`, in order: a k-nearest walk of each part's tree, never a scan,
 * the nearest `limit` of each merged; `keep` passes over the stores it refuses.
 */
function search(parts: IndexView['parts'], center: Point, maxMiles: number, limit: number, keep?: Keep): Nearby[] {
  return merged(
    parts,
    parts.map((part, p) => (part.snapshot.index ? walk(part.snapshot, part.snapshot.index, undefined, center, maxMiles, limit, keepOf(part, p, keep)) : [])),
    limit,
  );
}

/** What a walk of `part` lets through: not its hidden stores, and what `keep` keeps. */
function keepOf({ hidden }: Part, p: number, keep: Keep | undefined): ((store: number) => boolean) | undefined {
  if (hidden) return keep ? (store) => hidden[store] === 0 && keep(p, store) : (store) => hidden[store] === 0;
  return keep && ((store) => keep(p, store));
}

/**
 * The nearest `limit` of each part's stores (each list nearest first, ties by rank), as one list
 * in the same order: within a part by rank, across parts by name then code, as a snapshot of
 * all of them would rank them.
 */
function merged(parts: IndexView['parts'], found: Array<Array<{ store: number; distance: number }>>, limit: number): Nearby[] {
  if (found.length === 1) return found[0].map(({ store, distance }) => ({ part: 0, store, distance }));
  const all = found.flatMap((list, part) => list.map(({ store, distance }) => ({ part, store, distance })));
  return all.sort(acrossParts(parts)).slice(0, limit);
}

const acrossParts = (parts: IndexView['parts']) => (a: Nearby, b: Nearby) => {
  if (a.distance !== b.distance) return a.distance - b.distance;
  const [x, y] = [parts[a.part].snapshot, parts[b.part].snapshot];
  if (a.part === b.part) return x.rank[a.store] - y.rank[b.store];
  return compareText(nameOf(x, a.store), nameOf(y, b.store)) || compareText(codeOf(x, a.store), codeOf(y, b.store));
};

/**
 * The region's stores, nearest first, at most `limit`: a walk of the state's (or the city's) own
 * tree without a radius, or, for a group too small to have one, each of its stores measured.
 * A state or city without stores is an empty answer.
 */
function regionSearch(parts: IndexView['parts'], center: Point, region: Region, limit: number, keep?: Keep): Nearby[] {
  return merged(
    parts,
    parts.map((part, p) => {
      const { snapshot } = part;
      const state = snapshot.states.get(region.state);
      const group = region.city === undefined ? state : state?.cities.get(cityKey(region.city));
      if (!group) return [];
      const kept = keepOf(part, p, keep);
      if (group.index) return walk(snapshot, group.index, group.stores, center, Infinity, limit, kept);
      const found: Array<{ store: number; distance: number }> = [];
      for (const store of group.stores) if (!kept || kept(store)) found.push({ store, distance: distanceFrom(snapshot, center, store) });
      return found.sort(byDistanceNameCode(snapshot)).slice(0, limit);
    }),
    limit,
  );
}

const distanceFrom = ({ points }: Snapshot, center: Point, store: number) => haversineMiles(center, { lng: points[2 * store], lat: points[2 * store + 1] });
const byDistanceNameCode =
  ({ rank }: Snapshot) =>
  (a: { store: number; distance: number }, b: { store: number; distance: number }) =>
    a.distance - b.distance || rank[a.store] - rank[b.store];

/**
 * A k-nearest walk of `index` (the whole catalogue's tree, or a group's, whose item i is store
 * stores[i]) out to `maxMiles` (Infinity: no radius). Never a scan: it stops at the first store
 * out of range, or once it holds `limit` stores and every store tied with the last.
 */
function walk(
  snapshot: Snapshot,
  index: KDBush,
  stores: Uint32Array | undefined,
  center: Point,
  maxMiles: number,
  limit: number,
  keep?: (store: number) => boolean,
): Array<{ store: number; distance: number }> {
  const { points } = snapshot;
  const distanceTo = (store: number) => haversineMiles(center, { lng: points[2 * store], lat: points[2 * store + 1] });
  const ordered = byDistanceNameCode(snapshot);
  // A hair wider than asked, so rounding never drops a store on the boundary; the exact
  // haversine distance (R = 3958.8 miles) decides below. Half the globe is as far as a walk can go.
  const maxKm = Math.min(Math.PI, (maxMiles / EARTH_RADIUS_MILES) * (1 + 1e-9)) * GEOKDBUSH_EARTH_RADIUS_KM;
  // geokdbush stops at the first store it takes out of range, and takes only stores `keep` lets
  // through: refusing every store in range (open_only at night) walked the whole catalogue, whatever
  // max_distance. So a store out of range is let through: it ends the walk, and the filter below drops it.
  const admit = keep && ((store: number) => keep(store) || distanceTo(store) > maxMiles);
  const predicate = admit && stores ? (item: number) => admit(stores[item]) : admit;
  for (let wanted = limit + 8; ; wanted *= 2) {
    const items = around(index, center.lng, center.lat, wanted, maxKm, predicate);
    const ids = stores ? items.map((item) => stores[item]) : items;
    const found = ids
      .map((store) => ({ store, distance: distanceTo(store) }))
      .filter(({ distance }) => distance <= maxMiles)
      .sort(ordered);
    // The walk stopped at `wanted`: a store tied with the last one kept may lie beyond it.
    const complete = ids.length < wanted || (found.length >= limit && found[limit - 1].distance < found[found.length - 1].distance);
    if (complete) return found.slice(0, limit);
  }
}
