import { around } from 'geokdbush';
import type KDBush from 'kdbush';
import { DISTANCE_UNITS, SEARCH_SCOPES } from '../common/api-headers.js';
import { EARTH_RADIUS_MILES, haversineMiles, KM_PER_MILE, type Point } from '../shared/great-circle.js';
import { openingState } from '../shared/opening-hours.js';
import { cityKey, type Snapshot } from './store-snapshot.js';

/** geokdbush measures in kilometres on a sphere of this radius; only the angle matters. */
const GEOKDBUSH_EARTH_RADIUS_KM = 6371;

const RESPONSE_HEAD = Buffer.from('{"Code":"Success","locations":[');
const RESPONSE_TAIL = Buffer.from(']}');
const COMMA = 0x2c;

interface Nearby {
  /** The store's number in the snapshot the search ran on. */
  store: number;
  distance: number;
}

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
    this.open[id] = state.open ? 1 : 2;
    this.fields[id] = `,"open":${state.open},"time_zone":${JSON.stringify(zone)},"next_change":${state.nextChange === null ? 'null' : `"${state.nextChange}"`}`;
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
export function nearestResponse(snapshot: Snapshot, center: Point, maxMiles: number, limit: number, moment?: Moment): Buffer {
  const openings = moment && new Openings(snapshot, moment.at);
  const found = search(snapshot, center, maxMiles, limit, moment?.openOnly ? (store) => openings!.isOpen(store) : undefined);
  return write(snapshot, found, openings);
}

export type DistanceUnit = (typeof DISTANCE_UNITS)[number];

/** What a search looked through, as its `Search-Scope` header says. */
export type SearchScope = (typeof SEARCH_SCOPES)[number];

/** A state, or a city of it: the request's `region`, its state in capitals. */
export interface Region {
  state: string;
  city?: string;
}

/** The search's `distance_unit`, `nearest_if_none` and `region`: what a plain search (nearestResponse) does not ask. */
export interface Scope {
  unit: DistanceUnit;
  nearestIfNone: boolean;
  region?: Region;
}

/**
 * nearestResponse with a scope: `maxDistance` and each `distance` in `scope.unit`; with
 * `nearestIfNone`, the single nearest store (open store with `openOnly`) at any distance when
 * none is in range, found by the same walk of the tree without a radius; with a `region`, every
 * store of the state (or city), nearest first, walked in the state's own tree (Snapshot.states),
 * `maxDistance` unused. Also says which it answered.
 */
export function scopedResponse(
  snapshot: Snapshot,
  center: Point,
  maxDistance: number,
  limit: number,
  moment: Moment | undefined,
  scope: Scope,
): { body: Buffer; scope: SearchScope } {
  const openings = moment && new Openings(snapshot, moment.at);
  const keep = moment?.openOnly ? (store: number) => openings!.isOpen(store) : undefined;
  let answered: SearchScope = 'radius';
  let found: Nearby[];
  const perUnit = scope.unit === 'km' ? KM_PER_MILE : 1;
  // The single nearest store (open store) first: beyond max_distance, it is the answer, found by one
  // walk. A radius walk with nothing in range costs what this one does (geokdbush opens nodes until a
  // store comes out of its queue, in range or not), so walking both would pay twice far from the stores.
  const nearest = scope.nearestIfNone && !scope.region ? search(snapshot, center, Infinity, 1, keep) : undefined;
  if (scope.region) {
    answered = 'region';
    found = regionSearch(snapshot, center, scope.region, limit, keep);
  } else if (nearest && (nearest.length === 0 || nearest[0].distance * perUnit > maxDistance)) {
    found = nearest;
    if (found.length > 0) answered = 'nearest';
  } else if (scope.unit === 'km') {
    // Walked in miles a hair wider than asked; the exact comparison is made in kilometres, so that
    // a store whose distance in kilometres equals max_distance counts, as it does in miles.
    found = search(snapshot, center, (maxDistance / KM_PER_MILE) * (1 + 1e-9), limit, keep).filter(({ distance }) => distance * KM_PER_MILE <= maxDistance);
  } else {
    found = search(snapshot, center, maxDistance, limit, keep);
  }
  if (scope.unit === 'km') for (const nearby of found) nearby.distance *= KM_PER_MILE;
  return { body: write(snapshot, found, openings), scope: answered };
}

/** The response of nearestResponse for the stores found, in order, their distances in the unit asked. */
function write(snapshot: Snapshot, found: Nearby[], openings: Openings | undefined): Buffer {
  const { json, offsets, splits, hours, hoursOf } = snapshot;
  const tails = found.map(({ store, distance }) => `,"distance":${Math.round(distance * 100) / 100}${openings ? openings.fieldsOf(store) : ''}}`);
  let size = RESPONSE_HEAD.length + RESPONSE_TAIL.length + Math.max(0, found.length - 1);
  for (let i = 0; i < found.length; i++) {
    const n = found[i].store;
    size += offsets[n + 1] - offsets[n] + hours[hoursOf[n]].length + tails[i].length;
  }
  const body = Buffer.allocUnsafe(size);
  let at = RESPONSE_HEAD.copy(body, 0);
  for (let i = 0; i < found.length; i++) {
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

/** The stores of `nearestResponse`, in order: a k-nearest walk of the tree, never a scan; `keep` passes over the stores it refuses. */
function search(snapshot: Snapshot, center: Point, maxMiles: number, limit: number, keep?: (store: number) => boolean): Nearby[] {
  return snapshot.index ? walk(snapshot, snapshot.index, undefined, center, maxMiles, limit, keep) : [];
}

/**
 * The region's stores, nearest first, at most `limit`: a walk of the state's (or the city's) own
 * tree without a radius, or, for a group too small to have one, each of its stores measured.
 * A state or city without stores is an empty answer.
 */
function regionSearch(snapshot: Snapshot, center: Point, region: Region, limit: number, keep?: (store: number) => boolean): Nearby[] {
  const state = snapshot.states.get(region.state);
  const group = region.city === undefined ? state : state?.cities.get(cityKey(region.city));
  if (!group) return [];
  if (group.index) return walk(snapshot, group.index, group.stores, center, Infinity, limit, keep);
  const found: Nearby[] = [];
  for (const store of group.stores) if (!keep || keep(store)) found.push({ store, distance: distanceFrom(snapshot, center, store) });
  return found.sort(byDistanceNameCode(snapshot)).slice(0, limit);
}

const distanceFrom = ({ points }: Snapshot, center: Point, store: number) => haversineMiles(center, { lng: points[2 * store], lat: points[2 * store + 1] });
const byDistanceNameCode =
  ({ rank }: Snapshot) =>
  (a: Nearby, b: Nearby) =>
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
): Nearby[] {
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
