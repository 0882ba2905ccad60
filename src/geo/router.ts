import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { BrokenCircuitError, circuitBreaker, CircuitState, ConsecutiveBreaker, handleAll, timeout, TimeoutStrategy, wrap, type IPolicy } from 'cockatiel';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { Metrics } from '../metrics/metrics.js';
import type { Point } from '../shared/great-circle.js';
import { routerConfig, type RouterEngineName } from './router.config.js';

/** The way to a store: seconds and metres by road. */
export interface Leg {
  seconds: number;
  metres: number;
}

/** A search's travel times: each store's leg (null when no road reaches it), from `source`; or none to be had. */
export type TravelTimes = { source: RouterEngineName; legs: Array<Leg | null> } | { source: 'straight-line' };

/** A store to route to: its point, and the key its leg is kept under (its code). */
export interface RouteTarget {
  key: string;
  point: Point;
}

const METRES_PER_MILE = 1609.344;
/** A point this close to an end of its road piece is moved onto it (pgRouting leaves out a point at fraction 0 or 1). */
const END_FRACTION = 1e-6;

/**
 * The travel times of POST /locations/nearest's `travel_mode`, through the engine of ROUTER, from the
 * customer's position to each store the search found: one engine request per search (one origin,
 * many stores). Never a 5xx and never a wait past ROUTER_TIMEOUT_MS: a failure, a timeout, or an
 * engine skipped by the breaker (ROUTER_BREAKER_FAILURES failures in a row skip it for
 * ROUTER_BREAKER_SECONDS) answers `straight-line`, and the search keeps its straight-line order.
 *
 * Legs are kept per instance (ROUTER_CACHE_SIZE) by the customer's point to about a metre, the
 * store's code and the catalogue version (a moved store is a new version), so a repeated search asks
 * the engine nothing, and a search that found one more store asks for that one only.
 *
 * The customer's position is personal data: it goes to the engine and nowhere else (no log line,
 * metric label or error message carries it).
 */
@Injectable()
export class Router implements OnApplicationShutdown {
  private readonly logger = new Logger('Router');
  private readonly engine?: PgRoutingEngine;
  private readonly policy?: IPolicy;
  private readonly cache?: LRUCache<string, Leg | 'none'>;

  constructor(
    @Inject(routerConfig.KEY) settings: ConfigType<typeof routerConfig>,
    private readonly metrics: Metrics,
  ) {
    if (settings.ROUTER === 'off') return;
    this.engine = new PgRoutingEngine(
      settings.ROUTER_DATABASE_URL!,
      settings.ROUTER_SCHEMA,
      settings.ROUTER_SNAP_MILES * METRES_PER_MILE,
      settings.ROUTER_TIMEOUT_MS,
    );
    if (settings.ROUTER_CACHE_SIZE > 0 && settings.ROUTER_CACHE_SECONDS > 0)
      this.cache = new LRUCache({ max: settings.ROUTER_CACHE_SIZE, ttl: settings.ROUTER_CACHE_SECONDS * 1000 });
    const breaker = circuitBreaker(handleAll, {
      halfOpenAfter: settings.ROUTER_BREAKER_SECONDS * 1000,
      breaker: new ConsecutiveBreaker(settings.ROUTER_BREAKER_FAILURES),
    });
    breaker.onStateChange((state) => {
      if (state === CircuitState.Open)
        this.logger.warn(
          `${settings.ROUTER} is skipped for ${settings.ROUTER_BREAKER_SECONDS} s after ${settings.ROUTER_BREAKER_FAILURES} failures in a row; searches answer in straight-line order`,
        );
      if (state === CircuitState.Closed) this.logger.log(`${settings.ROUTER} answers again`);
    });
    // Aggressive: the search stops waiting at the deadline; the engine's own statement timeout ends its work.
    this.policy = wrap(breaker, timeout(settings.ROUTER_TIMEOUT_MS, TimeoutStrategy.Aggressive));
  }

  get enabled(): boolean {
    return this.engine !== undefined;
  }

  /** The legs from `origin` to each target, in the targets' order, for catalogue `version`. */
  async times(origin: Point, targets: readonly RouteTarget[], version: number): Promise<TravelTimes> {
    const engine = this.engine;
    if (!engine) return { source: 'straight-line' };
    const prefix = `${version}:${origin.lat.toFixed(5)},${origin.lng.toFixed(5)}:`;
    const legs: Array<Leg | null | undefined> = targets.map(({ key }) => {
      const kept = this.cache?.get(prefix + key);
      return kept === 'none' ? null : kept;
    });
    const missing = targets.filter((_, i) => legs[i] === undefined);
    if (missing.length > 0) {
      const stop = this.metrics.routerDuration.startTimer({ engine: engine.name });
      let found: Array<Leg | null>;
      try {
        // A signal of its own per call (see AddressGeocoder.ask).
        found = await this.policy!.execute(
          ({ signal }) =>
            engine.table(
              origin,
              missing.map((target) => target.point),
              signal,
            ),
          new AbortController().signal,
        );
        stop();
        this.metrics.routerRequests.inc({ engine: engine.name, outcome: 'ok' });
      } catch (error) {
        const outcome = error instanceof BrokenCircuitError ? 'breaker_open' : error instanceof RouterFailure ? error.reason : 'timeout';
        if (outcome !== 'breaker_open') stop();
        this.metrics.routerRequests.inc({ engine: engine.name, outcome });
        // The engine's failure, never the position.
        this.logger.debug(`${engine.name}: ${outcome}; the search answers in straight-line order`);
        return { source: 'straight-line' };
      }
      let next = 0;
      legs.forEach((leg, i) => {
        if (leg !== undefined) return;
        legs[i] = found[next++];
        this.cache?.set(prefix + targets[i].key, legs[i] ?? 'none');
      });
    }
    return { source: engine.name, legs: legs as Array<Leg | null> };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine?.close();
  }
}

/** How the engine failed: `error` (refused, unreachable, a query error) or `malformed` (an answer it cannot read). */
export class RouterFailure extends Error {
  constructor(
    readonly reason: 'error' | 'malformed',
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * pgRouting over osm2pgrouting's tables (`ways`, `ways_vertices_pgr`) in `schema`: each point moved
 * onto its nearest road piece (none within `snapMetres`: unreachable), then one pgr_withPoints from
 * the customer's point to every store's, directed (one-way streets), costs in seconds (`cost_s`,
 * `reverse_cost_s`), over the road pieces in a box around them all with a margin: a route that
 * leaves the box far behind is not found (the box is half again as wide as the points' own, and at
 * least 0.1° more on each side).
 */
class PgRoutingEngine {
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

  async table(origin: Point, targets: readonly Point[], signal: AbortSignal): Promise<Array<Leg | null>> {
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
      const legs: Array<Leg | null> = targets.map(() => null);
      const ends = targets.map((_, i) => i + 2).filter((pid) => on.has(pid));
      if (!on.has(1) || ends.length === 0) return legs;
      if (![...on.values()].every(({ edge, fraction }) => Number.isSafeInteger(edge) && Number.isFinite(fraction)))
        throw new RouterFailure('malformed', 'a snapped point without a road piece');
      const pointsSql = `SELECT * FROM (VALUES ${[...on].map(([pid, { edge, fraction }]) => `(${pid}, ${edge}::bigint, ${fraction}::float8)`).join(', ')}) AS p(pid, edge_id, fraction)`;
      const lngs = points.map((p) => p.lng);
      const lats = points.map((p) => p.lat);
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
      return legs;
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
