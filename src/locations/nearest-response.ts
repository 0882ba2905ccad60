import { around } from 'geokdbush';
import type KDBush from 'kdbush';
import { DISTANCE_UNITS, SEARCH_SCOPES } from '../common/api-headers.js';
import { EARTH_RADIUS_MILES, haversineMiles, KM_PER_MILE, type Point } from '../shared/great-circle.js';
import { hoursOfDay, localDay, openingState } from '../shared/opening-hours.js';
import type { IncludeName } from '../shared/store-fields.js';
import {
  cityKey,
  codeOf,
  compareText,
  hasServices,
  includedJson,
  locationBytes,
  nameOf,
  servicesMask,
  writeLocation,
  type Snapshot,
} from './store-snapshot.js';

/** A search's `services` names a service the index's vocabulary does not have; the entry points word it (a 400). */
export class UnknownSearchServiceError extends Error {
  constructor(readonly slug: string) {
    super(`services: "${slug}" is not a service of the chain`);
  }
}

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
/** Whether the search keeps store `store` of part `part` (open_only, services). */
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

export type DistanceUnit = (typeof DISTANCE_UNITS)[number];

/** What a search looked through, as its `Search-Scope` header says. */
export type SearchScope = (typeof SEARCH_SCOPES)[number];

/** A state, or a city of it: the request's `region`, its state in capitals. */
export interface Region {
  state: string;
  city?: string;
}

/**
 * Where a search looks: within `maxDistance` (in the plan's unit, boundary included); the same,
 * or else the single nearest store at any distance (`nearest_if_none`); or every store of a state
 * or city (`region`), at any distance.
 */
export type Area = { kind: 'radius'; maxDistance: number } | { kind: 'nearest'; maxDistance: number } | { kind: 'region'; region: Region };

/** A store's way by road, as the router gives it. */
export interface TravelLeg {
  seconds: number;
  metres: number;
}

/** A store the route step is asked about: its point (the router keeps legs by it). */
export interface RouteStop {
  point: Point;
}

/** The route step's answer: each store's leg, in the order asked (null: no road reaches it), or none (the straight-line answer). */
export interface Routed {
  legs?: ReadonlyArray<TravelLeg | null>;
  /** The `Travel-Source` header. */
  source: string;
  /** How long an answer made of it may be kept, in ms: 0 not at all (a failure is tried again), Infinity until the catalogue changes. */
  keepMs: number;
}

/**
 * A `travel_mode` search's road leg: `route` is asked about the nearest `candidates` stores found (or
 * `limit`, if more); with its legs the stores are ordered by them. A
 * route that answers no legs (ROUTER=off, an engine that failed) gives the straight-line answer.
 */
export interface Travel {
  candidates: number;
  /** `max_travel_time`: stores further in minutes are left out (legs only). */
  maxMinutes?: number;
  route: (stores: RouteStop[]) => Routed | Promise<Routed>;
}

/**
 * A search, as POST /locations/nearest asks it: from `center`, through `area`, distances in `unit`,
 * at most `limit` stores; at a `moment` (open_at, open_only), and by road (`travel`) when asked.
 * An option added to the search goes here, and into StoreIndex's answer key.
 */
export interface SearchPlan {
  center: Point;
  area: Area;
  unit: DistanceUnit;
  limit: number;
  moment?: Moment;
  travel?: Travel;
  /** Only the stores that have every one of these services (slugs, sorted, each once). */
  services?: readonly string[];
  /** The fields `include` adds to each Location, in INCLUDE_NAMES' order (each once). */
  include?: readonly IncludeName[];
}

/** A search's answer: the whole 200 response, what it looked through, where its times came from, and what may change it. */
export interface SearchAnswer {
  body: Buffer;
  scope: SearchScope;
  /** Miles from the centre beyond which no store's change alters the answer (StoreIndex forgets answers by it). */
  reach: number;
  /** With `travel`: the route's source. */
  travel?: string;
  /** How long the answer may be kept (see Routed.keepMs); Infinity without `travel`. */
  keepMs: number;
}

/**
 * A search's answer, in one pipeline: find (the stores of the area, nearest first) → with travel,
 * route (their legs) and order and filter (by the legs) → slice (`limit`) → write. The whole 200
 * response of POST /locations/nearest, `{"Code":"Success","locations":[…]}` in UTF-8: each store's
 * JSON was written once when the snapshot was built; a search only copies it and adds the distance
 * (no objects built, no JSON.stringify). With a `moment`, each location also says whether it is
 * open then, its time zone and its next change; with `openOnly`, closed stores are passed over in
 * the tree walk, so `limit` counts open ones. With travel, each location also says its
 * `travel_time` and `travel_distance`. Synchronous unless the route step is not.
 */
export function answer(source: Snapshot | IndexView, plan: SearchPlan & { travel?: undefined }): SearchAnswer;
export function answer(source: Snapshot | IndexView, plan: SearchPlan): SearchAnswer | Promise<SearchAnswer>;
export function answer(source: Snapshot | IndexView, plan: SearchPlan): SearchAnswer | Promise<SearchAnswer> {
  const parts = partsOf(source);
  const { limit, moment, travel, include } = plan;
  const openings = moment && parts.map(({ snapshot }) => new Openings(snapshot, moment.at));
  const { found, scope, reach } = find(parts, openings, plan, travel ? Math.max(limit, travel.candidates) : limit);
  if (!travel) return { body: write(parts, found, openings, undefined, include), scope, reach, keepMs: Infinity };
  const metresPerUnit = plan.unit === 'km' ? 1000 : 1000 * KM_PER_MILE;
  const routed = travel.route(found.map(stopOf(parts)));
  const ordered = ({ legs, source: from, keepMs }: Routed): SearchAnswer => {
    const { chosen, legOf } = legs ? byLegs(parts, found, legs, travel.maxMinutes) : { chosen: found, legOf: undefined };
    return { body: write(parts, chosen.slice(0, limit), openings, { legOf, metresPerUnit }, include), scope, reach, travel: from, keepMs };
  };
  return routed instanceof Promise ? routed.then(ordered) : ordered(routed);
}

/** Where a store's change stops mattering to an answer of `found`: beyond the last store of a full answer, or else beyond what was searched. */
const reachOf = (found: Nearby[], limit: number, otherwise: number) => (limit > 0 && found.length >= limit ? found[found.length - 1].distance : otherwise);

const stopOf =
  (parts: IndexView['parts']) =>
  ({ part, store }: Nearby): RouteStop => {
    const { snapshot } = parts[part];
    return { point: { lng: snapshot.points[2 * store], lat: snapshot.points[2 * store + 1] } };
  };

/**
 * The find step: at most `wanted` stores of the plan's area, nearest first (ties by name then
 * code), their distances in its unit; what it looked through, and its reach. A radius in
 * kilometres is walked in miles a hair wider and compared in kilometres. `nearest`: the single
 * nearest store (open store with `openOnly`) when none is in range, found by the same walk of
 * the tree without a radius. `region`: every store of the state (or city), nearest first,
 * walked in the state's own tree (Snapshot.states).
 */
function find(
  parts: IndexView['parts'],
  openings: Openings[] | undefined,
  { center, area, unit, moment, services }: SearchPlan,
  wanted: number,
): { found: Nearby[]; scope: SearchScope; reach: number } {
  const open: Keep | undefined = moment?.openOnly ? (part, store) => openings![part].isOpen(store) : undefined;
  const keep = withServices(parts, services, open);
  if (area.kind === 'region') {
    const found = regionSearch(parts, center, area.region, wanted, keep);
    const reach = reachOf(found, wanted, Infinity);
    return { found: inUnit(found, unit), scope: 'region', reach };
  }
  const { maxDistance } = area;
  if (area.kind === 'nearest') {
    // The single nearest store (open store) first: beyond max_distance, it is the answer, found by one
    // walk. A radius walk with nothing in range costs what this one does (geokdbush opens nodes until a
    // store comes out of its queue, in range or not), so walking both would pay twice far from the stores.
    const nearest = search(parts, center, Infinity, 1, keep);
    if (nearest.length === 0) return { found: nearest, scope: 'radius', reach: Infinity };
    if (nearest[0].distance * (unit === 'km' ? KM_PER_MILE : 1) > maxDistance) {
      // A store nearer than the one found would change the answer.
      const reach = nearest[0].distance;
      return { found: inUnit(nearest, unit), scope: 'nearest', reach };
    }
  }
  if (unit === 'km') {
    // Walked in miles a hair wider than asked; the exact comparison is made in kilometres, so that
    // a store whose distance in kilometres equals max_distance counts, as it does in miles.
    const maxMiles = (maxDistance / KM_PER_MILE) * (1 + 1e-9);
    const found = search(parts, center, maxMiles, wanted, keep).filter(({ distance }) => distance * KM_PER_MILE <= maxDistance);
    const reach = reachOf(found, wanted, maxMiles);
    return { found: inUnit(found, unit), scope: 'radius', reach };
  }
  const found = search(parts, center, maxDistance, wanted, keep);
  return { found, scope: 'radius', reach: reachOf(found, wanted, maxDistance) };
}

/**
 * `keep` and the services filter: a store is kept when it has every service asked for (a few ANDs
 * of its mask, store-snapshot.ts), then when `keep` keeps it. The parts share one vocabulary (a
 * snapshot of changed stores is built with its base's), so one mask serves them all.
 */
function withServices(parts: IndexView['parts'], services: readonly string[] | undefined, keep: Keep | undefined): Keep | undefined {
  if (!services || services.length === 0) return keep;
  const required = servicesMask(parts[0].snapshot, services);
  if ('unknown' in required) throw new UnknownSearchServiceError(required.unknown);
  const { mask } = required;
  const snapshots = parts.map(({ snapshot }) => snapshot);
  if (keep) return (part, store) => hasServices(snapshots[part], store, mask) && keep(part, store);
  // One word (up to 32 services) is the common case: the test written out, without a loop.
  if (mask.length === 1) {
    const word = mask[0];
    const masks = snapshots.map(({ serviceMasks }) => serviceMasks);
    return (part, store) => (masks[part][store] & word) >>> 0 === word;
  }
  return (part, store) => hasServices(snapshots[part], store, mask);
}

/** The distances of `found` in `unit` (found in miles; a reach stays in miles). */
function inUnit(found: Nearby[], unit: DistanceUnit): Nearby[] {
  if (unit === 'km') for (const nearby of found) nearby.distance *= KM_PER_MILE;
  return found;
}

/**
 * The order and filter step of a search by road: the reachable stores by travel time (then
 * straight-line distance, name and code), those longer than `maxMinutes` left out, then the
 * unreachable ones in straight-line order (left out too under `maxMinutes`); and each one's leg.
 */
function byLegs(
  parts: IndexView['parts'],
  found: Nearby[],
  legs: ReadonlyArray<TravelLeg | null>,
  maxMinutes: number | undefined,
): { chosen: Nearby[]; legOf: Map<Nearby, TravelLeg> } {
  const order = acrossParts(parts);
  const reachable = found
    .map((nearby, i) => ({ nearby, leg: legs[i] }))
    .filter((entry): entry is { nearby: Nearby; leg: TravelLeg } => entry.leg !== null && (maxMinutes === undefined || entry.leg.seconds <= maxMinutes * 60))
    .sort((a, b) => a.leg.seconds - b.leg.seconds || order(a.nearby, b.nearby));
  const unreachable = maxMinutes === undefined ? found.filter((_, i) => legs[i] === null) : [];
  return { chosen: [...reachable.map(({ nearby }) => nearby), ...unreachable], legOf: new Map(reachable.map(({ nearby, leg }) => [nearby, leg])) };
}

/**
 * The write step: the response for the stores found, in order, their distances in the unit asked;
 * with `openings`, each one's state at the moment; with `travel`, each one's `travel_time`
 * (minutes, one decimal) and `travel_distance` (road distance in the unit asked, two decimals),
 * both null for a store without a leg (unreachable, or no legs at all: the straight-line answer).
 */
function write(
  parts: IndexView['parts'],
  found: Nearby[],
  openings: Openings[] | undefined,
  travel?: { legOf: Map<Nearby, TravelLeg> | undefined; metresPerUnit: number },
  include?: readonly IncludeName[],
): Buffer {
  const tails = found.map(({ part, store, distance }) => `,"distance":${Math.round(distance * 100) / 100}${openings ? openings[part].fieldsOf(store) : ''}}`);
  // Apart, so that the searches without travel build their tails exactly as before.
  if (travel) {
    for (let i = 0; i < found.length; i++) {
      const leg = travel.legOf?.get(found[i]);
      const times = leg
        ? `,"travel_time":${Math.round(leg.seconds / 6) / 10},"travel_distance":${Math.round((leg.metres / travel.metresPerUnit) * 100) / 100}`
        : ',"travel_time":null,"travel_distance":null';
      tails[i] = `${tails[i].slice(0, -1)}${times}}`;
    }
  }
  // The fields `include` asks for, last: a search without it writes exactly what it wrote before.
  // They are the catalogue's text (any Unicode), where the other tails are ASCII: written as UTF-8.
  let encoding: 'latin1' | 'utf8' = 'latin1';
  if (include && include.length > 0) {
    encoding = 'utf8';
    for (let i = 0; i < found.length; i++) {
      const { part, store } = found[i];
      tails[i] = `${tails[i].slice(0, -1)}${includedJson(parts[part].snapshot, store, include)}}`;
    }
  }
  let size = RESPONSE_HEAD.length + RESPONSE_TAIL.length + Math.max(0, found.length - 1);
  for (let i = 0; i < found.length; i++)
    size += locationBytes(parts[found[i].part].snapshot, found[i].store) + (encoding === 'utf8' ? Buffer.byteLength(tails[i]) : tails[i].length);
  const body = Buffer.allocUnsafe(size);
  let at = RESPONSE_HEAD.copy(body, 0);
  for (let i = 0; i < found.length; i++) {
    if (i > 0) body[at++] = COMMA;
    at += writeLocation(parts[found[i].part].snapshot, found[i].store, body, at);
    at += body.write(tails[i], at, encoding);
  }
  RESPONSE_TAIL.copy(body, at);
  return body;
}

/**
 * The stores within `maxMiles` of `center`, nearest first, at most `limit`: a k-nearest walk of each part's tree, never a scan,
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
