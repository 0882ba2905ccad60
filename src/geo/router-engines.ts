import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { haversineMiles, KM_PER_MILE, type Point } from '../shared/great-circle.js';
import type { RouterEngineName } from './router.config.js';

/**
 * The engines behind ROUTER: each gives the way by road from one point (the customer's) to each of
 * several (the stores'), a store no road reaches (none within the snap distance of it or of the
 * customer, or no route) as null, and where it moved the customer's point onto a road. Anything else
 * is a RouterFailure, which the router answers with the straight-line order; it counts against the
 * engine's health (its breaker) unless the engine refused the request itself (`refused`: an HTTP
 * 400, the engines' answer to a request they will not answer, such as Valhalla's "locations are in
 * unconnected regions", error 170). A table larger than the server takes (OSRM's `TooBig`,
 * Valhalla's 150) is no failure: it is asked again in smaller requests (HttpRouterEngine.table). No
 * engine logs, and no failure carries a position or a URL (which holds the positions): the engine's
 * name and what went wrong only.
 */

/** The way to a store: seconds and metres by road. */
export interface Leg {
  seconds: number;
  metres: number;
}

/**
 * An engine's answer. `origin` is the customer's point as the engine moved it onto a road, as a key
 * (the same key, the same legs from it): null when no road is within the snap distance of it (every
 * leg null), undefined when the engine did not say.
 */
export interface Table {
  origin: string | null | undefined;
  legs: Array<Leg | null>;
}

/**
 * The legs already kept from a moved origin (`Table.origin`), one per target, undefined for the ones
 * not kept: an engine that moves the customer's point in a step of its own (pgRouting) asks this
 * before routing, and routes only to the rest.
 */
export type KeptLegs = (origin: string) => ReadonlyArray<Leg | null | undefined>;

export interface RouterEngine {
  readonly name: RouterEngineName;
  table(origin: Point, targets: readonly Point[], signal: AbortSignal, kept?: KeptLegs): Promise<Table>;
  close(): Promise<void>;
}

/**
 * How the engine failed: `error` (unreachable, an error status, a query error), `rate_limited`
 * (429), `malformed` (an answer it cannot read), all of them the engine's health; or `refused` (HTTP
 * 400: the engine will not answer this request, whatever its health).
 */
export class RouterFailure extends Error {
  constructor(
    readonly reason: 'error' | 'rate_limited' | 'malformed' | 'refused',
    detail: string,
    /** The engine's own error code, where its error status carried one (Valhalla's `error_code`, OSRM's `code`). */
    readonly code?: number | string,
  ) {
    super(detail);
  }
}

/** A point this close to an end of its road piece is moved onto it (pgRouting leaves out a point at fraction 0 or 1). */
const END_FRACTION = 1e-6;

/** The engine ROUTER names, at its address. */
export function createRouterEngine(
  name: RouterEngineName,
  settings: { url: string; schema: string; snapMetres: number; timeoutMs: number; cacheSeconds: number },
): RouterEngine {
  if (name === 'pgrouting') return new PgRoutingEngine(settings.url, settings.schema, settings.snapMetres, settings.timeoutMs);
  if (name === 'osrm') return new OsrmEngine(settings.url, settings.snapMetres);
  return new ValhallaEngine(settings.url, settings.snapMetres, settings.cacheSeconds);
}

/** A moved point as a key: to 6 decimals of a degree, about 10 cm. */
const pointKey = (lat: number, lng: number) => `${lat.toFixed(6)},${lng.toFixed(6)}`;

/** How far an engine moved a point onto a road, in metres. */
const movedMetres = (from: Point, to: Point) => haversineMiles(from, to) * KM_PER_MILE * 1000;

/**
 * pgRouting over osm2pgrouting's tables (`ways`, `ways_vertices_pgr`) in `schema`: each point moved
 * onto its nearest road piece (none within `snapMetres`: unreachable). The customer's moved point
 * (the piece and the fraction along it) is the origin's key: the legs kept from it (`kept`) are not
 * routed again. Then one pgr_withPoints from the customer's point to each other store's, directed
 * (one-way streets), costs in seconds (`cost_s`, `reverse_cost_s`), over the road pieces in a box
 * around those points with a margin: a route that leaves the box far behind is not found (the box
 * is half again as wide as the points' own, and at least 0.1° more on each side).
 */
class PgRoutingEngine implements RouterEngine {
  readonly name = 'pgrouting' as const;
  private readonly pool: pg.Pool;

  constructor(
    url: string,
    private readonly schema: string,
    private readonly snapMetres: number,
    timeoutMs: number,
  ) {
    // statement_timeout: the server stops the query too when the search has stopped waiting.
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      statement_timeout: timeoutMs,
      connectionTimeoutMillis: timeoutMs,
      application_name: 'plant-store-router',
    });
    this.pool.on('error', () => undefined);
  }

  async table(origin: Point, targets: readonly Point[], signal: AbortSignal, kept?: KeptLegs): Promise<Table> {
    const points = [origin, ...targets];
    const client = await this.pool.connect().catch((error: Error) => {
      throw new RouterFailure('error', `cannot connect: ${error.name}`);
    });
    const abort = () => client.release(new Error('aborted'));
    signal.addEventListener('abort', abort, { once: true });
    try {
      const snapped = await client
        .query<{ i: string; gid: string; fraction: number }>(
          `SELECT p.i, w.gid, least(greatest(ST_LineLocatePoint(w.the_geom, p.g), $4::float8), 1 - $4::float8) AS fraction
           FROM (SELECT i, ST_SetSRID(ST_Point(x, y), 4326) AS g FROM unnest($1::float8[], $2::float8[]) WITH ORDINALITY AS u(x, y, i)) p
           CROSS JOIN LATERAL (SELECT gid, the_geom FROM ${this.schema}.ways ORDER BY the_geom <-> p.g LIMIT 1) w
           WHERE ST_DWithin(w.the_geom::geography, p.g::geography, $3)`,
          [points.map((p) => p.lng), points.map((p) => p.lat), this.snapMetres, END_FRACTION],
        )
        .catch(failed);
      const on = new Map(snapped.rows.map((row) => [Number(row.i), { edge: Number(row.gid), fraction: Number(row.fraction) }]));
      const start = on.get(1);
      if (!start) return { origin: null, legs: targets.map(() => null) };
      if (![...on.values()].every(({ edge, fraction }) => Number.isSafeInteger(edge) && Number.isFinite(fraction)))
        throw new RouterFailure('malformed', 'a snapped point without a road piece');
      const from = `${start.edge}@${start.fraction.toFixed(6)}`;
      const known = kept?.(from);
      const legs = targets.map((_, i) => known?.[i] ?? null);
      const ends = targets.map((_, i) => i + 2).filter((pid) => on.has(pid) && known?.[pid - 2] === undefined);
      if (ends.length === 0) return { origin: from, legs };
      const routed = [1, ...ends];
      const pointsSql = `SELECT * FROM (VALUES ${routed.map((pid) => `(${pid}, ${on.get(pid)!.edge}::bigint, ${on.get(pid)!.fraction}::float8)`).join(', ')}) AS p(pid, edge_id, fraction)`;
      const lngs = routed.map((pid) => points[pid - 1].lng);
      const lats = routed.map((pid) => points[pid - 1].lat);
      const [west, east, south, north] = [Math.min(...lngs), Math.max(...lngs), Math.min(...lats), Math.max(...lats)];
      const margin = Math.max(0.1, (east - west) / 4, (north - south) / 4);
      const edgesSql = `SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ${this.schema}.ways WHERE the_geom && ST_MakeEnvelope(${west - margin}, ${south - margin}, ${east + margin}, ${north + margin}, 4326)`;
      const routes = await client
        .query<{ end_pid: string; seconds: number; metres: number }>(
          `SELECT r.end_pid, max(r.agg_cost + r.cost) AS seconds, coalesce(sum(r.cost * w.length_m / nullif(w.cost_s, 0)), 0) AS metres
           FROM pgr_withPoints($1, $2, -1, $3::bigint[], directed := true, details := false) r
           LEFT JOIN ${this.schema}.ways w ON w.gid = r.edge
           GROUP BY r.end_pid`,
          [edgesSql, pointsSql, ends.map((pid) => -pid)],
        )
        .catch(failed);
      for (const { end_pid, seconds, metres } of routes.rows) {
        const i = -Number(end_pid) - 2;
        if (!(i >= 0 && i < targets.length) || !Number.isFinite(Number(seconds)) || !Number.isFinite(Number(metres)))
          throw new RouterFailure('malformed', 'a route to no store asked for');
        legs[i] = { seconds: Number(seconds), metres: Number(metres) };
      }
      return { origin: from, legs };
    } finally {
      signal.removeEventListener('abort', abort);
      if (!signal.aborted) client.release();
    }
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** A query's error as a RouterFailure: its class and SQLSTATE, never the query (which holds the position). */
function failed(error: Error & { code?: string }): never {
  throw new RouterFailure('error', `query failed: ${error.name}${error.code ? ` ${error.code}` : ''}`);
}

/** A number an engine sent, or undefined for anything else (null, a string, NaN). */
const finite = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/**
 * The HTTP engines share the request: the caller's abort signal for the timeout, and a JSON body.
 * 429 is `rate_limited`, 400 `refused`, any other non-2xx `error`; of an error's body only the
 * engine's code is read (Valhalla's `error_code`, OSRM's `code`): its message may echo the positions.
 *
 * And they share the split: a server refuses a table larger than it is set to take (OSRM's
 * `TooBig`, Valhalla's error 150) without saying what it takes. The refused stores are then asked in
 * two halves, each with the customer, and so on until each request is taken, all within the one
 * timeout; the size taken is remembered, so that later searches are split from the start and cost
 * no refusal. A refusal is the request's, never the engine's health: a split table is as good an
 * answer as a whole one.
 */
abstract class HttpRouterEngine implements RouterEngine {
  abstract readonly name: 'osrm' | 'valhalla';
  protected readonly base: string;
  /** The most stores one request may hold: unlimited until the server refuses a table as too big. */
  private perRequest = Infinity;

  constructor(
    base: string,
    protected readonly snapMetres: number,
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  /** One request's table, from `origin` to every target. */
  protected abstract request(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Table>;

  /** Whether the engine refused the request for holding too many points. */
  protected abstract tooBig(failure: RouterFailure): boolean;

  async table(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Table> {
    if (targets.length <= this.perRequest) return this.whole(origin, targets, signal);
    const parts: Array<readonly Point[]> = [];
    for (let i = 0; i < targets.length; i += this.perRequest) parts.push(targets.slice(i, i + this.perRequest));
    const tables = await Promise.all(parts.map((part) => this.whole(origin, part, signal)));
    // Every request moved the customer the same way: where one found no road for it, none did.
    if (tables.some((table) => table.origin === null)) return { origin: null, legs: targets.map(() => null) };
    return { origin: tables.find((table) => table.origin !== undefined)?.origin, legs: tables.flatMap((table) => table.legs) };
  }

  /** The table in one request, or in parts when the server refuses it as too big (one store alone is never split). */
  private async whole(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Table> {
    try {
      return await this.request(origin, targets, signal);
    } catch (error) {
      if (!(error instanceof RouterFailure && this.tooBig(error)) || targets.length < 2) throw error;
      this.perRequest = Math.min(this.perRequest, Math.ceil(targets.length / 2));
      return this.table(origin, targets, signal);
    }
  }

  protected async fetchJson(url: string, signal: AbortSignal, init: RequestInit = {}): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal, headers: { Accept: 'application/json', ...init.headers }, redirect: 'error' });
    } catch (error) {
      throw new RouterFailure('error', `${this.name}: the request failed (${(error as Error).name})`);
    }
    if (response.status === 429) {
      await response.body?.cancel();
      throw new RouterFailure('rate_limited', `${this.name}: 429, too many requests`);
    }
    if (!response.ok) {
      const body = (await response.json().catch(() => undefined)) as { error_code?: unknown; code?: unknown } | null | undefined;
      // Only the engine's code is read, and OSRM's only as the word it is: the message may echo the positions.
      const code = finite(body?.error_code) ?? (typeof body?.code === 'string' && /^[A-Za-z]{1,40}$/.test(body.code) ? body.code : undefined);
      const detail = `${this.name}: HTTP ${response.status}${code === undefined ? '' : `, ${typeof code === 'number' ? `error ${code}` : code}`}`;
      throw new RouterFailure(response.status === 400 ? 'refused' : 'error', detail, code);
    }
    try {
      return await response.json();
    } catch {
      throw new RouterFailure('malformed', `${this.name}: the answer is not JSON`);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * OSRM's table service (`/table/v1/driving/{lng,lat;…}?sources=0&annotations=duration,distance`):
 * the first row of `durations` (s) and `distances` (m), null where no route; every coordinate is
 * moved onto the nearest road by OSRM, which says where to in `sources[].location` and how far in
 * `sources[].distance` and `destinations[].distance` (m): further than the snap distance is
 * unreachable. OSRM refuses a table whose sources × destinations exceed the square of its
 * `--max-table-size` (`TooBig`, src/engine/plugins/table.cpp): with the one source and the default
 * of 100, up to 10,000 points are taken; a server run with a size of 10 takes 100, and a larger
 * search is split (see HttpRouterEngine).
 */
class OsrmEngine extends HttpRouterEngine {
  readonly name = 'osrm' as const;

  protected tooBig(failure: RouterFailure): boolean {
    return failure.reason === 'refused' && failure.code === 'TooBig';
  }

  protected async request(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Table> {
    const coordinates = [origin, ...targets].map((p) => `${p.lng.toFixed(6)},${p.lat.toFixed(6)}`).join(';');
    const body = (await this.fetchJson(`${this.base}/table/v1/driving/${coordinates}?sources=0&annotations=duration,distance`, signal)) as {
      code?: unknown;
      durations?: unknown;
      distances?: unknown;
      sources?: Array<{ distance?: unknown; location?: unknown }>;
      destinations?: Array<{ distance?: unknown }>;
    } | null;
    const count = targets.length + 1;
    const durations = Array.isArray(body?.durations) ? (body.durations[0] as unknown) : undefined;
    const distances = Array.isArray(body?.distances) ? (body.distances[0] as unknown) : undefined;
    if (
      body?.code !== 'Ok' ||
      !Array.isArray(durations) ||
      durations.length !== count ||
      !Array.isArray(distances) ||
      distances.length !== count ||
      !Array.isArray(body.sources) ||
      !Array.isArray(body.destinations) ||
      body.destinations.length !== count
    )
      throw new RouterFailure('malformed', 'osrm: not a table of one source and every destination');
    const originSnap = finite(body.sources[0]?.distance);
    if (originSnap === undefined) throw new RouterFailure('malformed', 'osrm: no snap distance for the source');
    if (originSnap > this.snapMetres) return { origin: null, legs: targets.map(() => null) };
    const at = body.sources[0]?.location;
    const [lng, lat] = Array.isArray(at) ? at.map(finite) : [];
    const legs = targets.map((_, i) => {
      const seconds = durations[i + 1] as unknown;
      const metres = distances[i + 1] as unknown;
      const snap = finite(body.destinations![i + 1]?.distance);
      if (snap === undefined) throw new RouterFailure('malformed', 'osrm: no snap distance for a destination');
      if (seconds === null || metres === null || snap > this.snapMetres) return null;
      if (finite(seconds) === undefined || finite(metres) === undefined)
        throw new RouterFailure('malformed', 'osrm: a duration or distance that is not a number');
      return { seconds: seconds as number, metres: metres as number };
    });
    return { origin: lat !== undefined && lng !== undefined ? pointKey(lat, lng) : undefined, legs };
  }
}

/**
 * The errors of Valhalla's matrix that a point with no road within its `search_cutoff` causes:
 * before 3.7, 171 ("No suitable edges near location", 400); from 3.7 on, as its source reads, the
 * verbose answer's serializer fails on the null it writes for such a point (499, "Unknown", 500).
 */
const NO_ROAD_NEAR = new Set([171, 499]);

type ValhallaMatrix = { sources_to_targets?: unknown; sources?: unknown; targets?: unknown } | null;

/**
 * Valhalla's matrix service (`POST /sources_to_targets`, `costing: auto`, kilometres, `verbose`):
 * one row of `{time (s), distance (km)}`, null where no route. Each point's `search_cutoff` is the
 * snap distance, and since Valhalla 3.4 the answer's `sources` and `targets` say where each point
 * was moved onto a road (null: none within the cutoff), from which the engine measures the move
 * itself, as it takes OSRM's. Valhalla before 3.7 refuses the whole request instead when a point
 * has no road within its cutoff (400, error 171, not saying which), and 3.7's verbose answer may
 * fail on such a point (500, error 499; see NO_ROAD_NEAR): the engine then asks `/locate`
 * for every point, takes the ones it finds no road for as unreachable, and asks the matrix again
 * for the rest, all within the one timeout. It keeps those stores' points (ROUTER_CACHE_SECONDS,
 * the time a reloaded road network takes to show) and leaves them out of later requests, so that
 * one store off the roads costs those two more requests once, not every search. Stores in regions
 * no road joins (error 170, 400: the whole matrix refused) are the request's refusal: that search
 * answers in straight-line order, and the engine's breaker does not count it.
 */
class ValhallaEngine extends HttpRouterEngine {
  readonly name = 'valhalla' as const;
  private readonly offRoad?: LRUCache<string, true>;

  constructor(base: string, snapMetres: number, cacheSeconds: number) {
    super(base, snapMetres);
    if (cacheSeconds > 0) this.offRoad = new LRUCache({ max: 10_000, ttl: cacheSeconds * 1000 });
  }

  /** Error 150: sources × targets above the server's `max_matrix_location_pairs` (src/loki/matrix_action.cc). */
  protected tooBig(failure: RouterFailure): boolean {
    return failure.reason === 'refused' && failure.code === 150;
  }

  protected async request(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Table> {
    const legs: Array<Leg | null> = targets.map(() => null);
    let asked = targets.map((_, i) => i).filter((i) => !this.offRoad?.has(pointKey(targets[i].lat, targets[i].lng)));
    if (asked.length === 0) return { origin: undefined, legs };
    let body: ValhallaMatrix;
    try {
      body = await this.matrix(
        origin,
        asked.map((i) => targets[i]),
        signal,
      );
    } catch (error) {
      if (!(error instanceof RouterFailure && typeof error.code === 'number' && NO_ROAD_NEAR.has(error.code))) throw error;
      const onRoad = await this.locate([origin, ...asked.map((i) => targets[i])], signal);
      // Every point on a road: the matrix failed for a reason of its own (171 is still a refusal, 499 the engine's).
      if (onRoad.every(Boolean)) throw error;
      if (!onRoad[0]) return { origin: null, legs };
      for (const [j, i] of asked.entries()) if (!onRoad[j + 1]) this.offRoad?.set(pointKey(targets[i].lat, targets[i].lng), true);
      asked = asked.filter((_, j) => onRoad[j + 1]);
      if (asked.length === 0) return { origin: undefined, legs };
      body = await this.matrix(
        origin,
        asked.map((i) => targets[i]),
        signal,
      );
    }
    const row = Array.isArray(body?.sources_to_targets) ? (body.sources_to_targets[0] as unknown) : undefined;
    if (!Array.isArray(row) || row.length !== asked.length) throw new RouterFailure('malformed', 'valhalla: not a row of every target');
    const moved = (at: { lat?: unknown; lon?: unknown } | null | undefined, from: Point): { key: string } | null => {
      if (at === null) return null;
      const lat = finite(at?.lat);
      const lng = finite(at?.lon);
      if (lat === undefined || lng === undefined) throw new RouterFailure('malformed', 'valhalla: a moved point without a position');
      return movedMetres(from, { lat, lng }) > this.snapMetres ? null : { key: pointKey(lat, lng) };
    };
    // Valhalla before 3.4 sends the points as given (`[[{lat, lon}, …]]`), not where it moved them:
    // its search_cutoff alone is the snap distance then.
    type Moved = { lat?: unknown; lon?: unknown } | null;
    const said = (list: unknown, length: number) =>
      Array.isArray(list) && list.length === length && list.every((at) => at === null || (typeof at === 'object' && !Array.isArray(at)))
        ? (list as Moved[])
        : undefined;
    const sources = said(body!.sources, 1);
    const moves = said(body!.targets, asked.length);
    const start = sources ? moved(sources[0], origin) : undefined;
    if (start === null) return { origin: null, legs };
    for (const cell of row as Array<{ time?: unknown; distance?: unknown; to_index?: unknown } | null>) {
      const to = finite(cell?.to_index);
      if (to === undefined || !Number.isInteger(to) || to < 0 || to >= asked.length) throw new RouterFailure('malformed', 'valhalla: a cell for no target');
      if (cell!.time === null || cell!.distance === null) continue;
      const seconds = finite(cell!.time);
      const km = finite(cell!.distance);
      if (seconds === undefined || km === undefined) throw new RouterFailure('malformed', 'valhalla: a time or distance that is not a number');
      if (moves && moved(moves[to], targets[asked[to]]) === null) continue;
      legs[asked[to]] = { seconds, metres: km * 1000 };
    }
    return { origin: start?.key, legs };
  }

  private async matrix(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<ValhallaMatrix> {
    return (await this.fetchJson(`${this.base}/sources_to_targets`, signal, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        sources: [this.location(origin)],
        targets: targets.map((p) => this.location(p)),
        costing: 'auto',
        units: 'kilometers',
        verbose: true,
      }),
    })) as ValhallaMatrix;
  }

  /** Whether Valhalla finds a road within the snap distance of each point (`/locate`: `edges` null where none). */
  private async locate(points: readonly Point[], signal: AbortSignal): Promise<boolean[]> {
    const found = await this.fetchJson(`${this.base}/locate`, signal, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ locations: points.map((p) => this.location(p)), costing: 'auto', verbose: false }),
    });
    if (!Array.isArray(found) || found.length !== points.length) throw new RouterFailure('malformed', 'valhalla: not one place for every point');
    return found.map((place: { edges?: unknown } | null) => {
      if (place?.edges === null || (Array.isArray(place?.edges) && place.edges.length === 0)) return false;
      if (Array.isArray(place?.edges)) return true;
      throw new RouterFailure('malformed', 'valhalla: a place without edges');
    });
  }

  private location(p: Point) {
    return { lat: p.lat, lon: p.lng, search_cutoff: Math.round(this.snapMetres) };
  }
}
