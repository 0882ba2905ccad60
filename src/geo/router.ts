import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  handleWhen,
  TaskCancelledError,
  timeout,
  TimeoutStrategy,
  wrap,
  type IPolicy,
} from 'cockatiel';
import { LRUCache } from 'lru-cache';
import { Metrics } from '../metrics/metrics.js';
import { KM_PER_MILE, type Point } from '../shared/great-circle.js';
import { routerConfig, type RouterEngineName } from './router.config.js';
import { breakerState } from './address-geocoder.js';
import { createRouterEngine, RouterFailure, type Leg, type RouterEngine, type Table } from './router-engines.js';

export type { Leg } from './router-engines.js';

/** A search's travel times: each store's leg (null when no road reaches it), from `source`; or none to be had. */
export type TravelTimes = { source: RouterEngineName; legs: Array<Leg | null> } | { source: 'straight-line' };

/** What the status page shows of the router. */
export interface RouterState {
  engine: 'off' | RouterEngineName;
  /** `closed` (in use), `open` (skipped after failures), `half_open` (one search is trying it again); null when off. */
  breaker: 'closed' | 'open' | 'half_open' | null;
  cached: number;
}

/** A store to route to: its point, which its leg is kept by. */
export interface RouteTarget {
  point: Point;
}

/** Where a customer with no road within ROUTER_SNAP_MILES is "moved": every leg from there is null. */
const OFF_ROAD = 'off-road';

/**
 * A leg's key: where the customer was moved onto a road, and the store's point (to 6 decimals,
 * about 10 cm). Not the store's code or the catalogue's version: a write to another store, a
 * holiday or a store's other fields leave the way to it as it was, and a moved store is a new point.
 */
const legKey = (at: string, to: Point) => `${at}|${to.lat.toFixed(6)},${to.lng.toFixed(6)}`;

/**
 * What an entry of the kept legs and points costs in the heap, by its key's and value's length:
 * measured on node 24 with `--expose-gc` as the heap used after gc() by 200,000 entries of each
 * shape in an LRUCache with a ttl, over the heap before: 241 bytes for a 21-character key with the
 * 'none' marker, 368 for 41 characters (an OSRM or Valhalla leg's key), 528 for 62, so about 110
 * bytes and 6.5 a character; a leg's `{seconds, metres}` instead of the marker adds 72 (440 for
 * 41 characters), a moved point's string about as much as its key's characters do. Checked whole:
 * a 16 MiB bound filled with 200,000 legs of 2,000 searches (a tenth of them none) kept 37,974 in
 * 14.65 MiB of heap, so the bound is a little above what is held, never below.
 */
const ENTRY_BYTES = 110;
const BYTES_PER_CHARACTER = 6.5;
const LEG_BYTES = 72;
const legBytes = (leg: Leg | 'none', key: string) => Math.ceil(ENTRY_BYTES + BYTES_PER_CHARACTER * key.length + (leg === 'none' ? 0 : LEG_BYTES));
const pointBytes = (at: string, key: string) => Math.ceil(ENTRY_BYTES + BYTES_PER_CHARACTER * (key.length + at.length));

/** The share of ROUTER_CACHE_MB for the customers' points (one per search from a new point); the rest is for legs. */
const ORIGINS_SHARE = 0.1;

/** A refusal of the request (an HTTP 400) says nothing of the engine's health: the breaker counts the rest only. */
const engineFailure = handleWhen((error) => !(error instanceof RouterFailure && error.reason === 'refused'));

/**
 * The travel times of POST /locations/nearest's `travel_mode`, through the engine of ROUTER, from the
 * customer's position to each store the search found: one engine request per search (one origin,
 * many stores; an HTTP engine splits a table its server refuses as too big). Never a 5xx and never
 * a wait past ROUTER_TIMEOUT_MS: a failure, a refusal, a timeout, or an engine skipped by the
 * breaker answers `straight-line`, and the search keeps its straight-line order. The breaker skips
 * the engine for ROUTER_BREAKER_SECONDS after ROUTER_BREAKER_FAILURES failures of its own in a row
 * (unreachable, a timeout, an error status, an unreadable answer); a refusal of the request (HTTP
 * 400: Valhalla's stores in unconnected regions) is no failure of the engine and is not counted.
 *
 * Legs are kept per instance (ROUTER_CACHE_MB, ROUTER_CACHE_SECONDS) by where the engine moved the
 * customer's point onto a road and the store's point (see legKey), and each customer's point (to
 * about a metre) by where it was moved: a repeated search asks the engine nothing, a search that
 * found one more store (or a store moved) asks for that one only. pgRouting
 * moves the point in a query of its own before routing, so a new customer moved to a point already
 * routed from is not routed again; OSRM and Valhalla say where they moved it only with their
 * answer, so with them a new point is asked once (finding where it is moved first would be a
 * second request per search).
 *
 * The customer's position is personal data: it goes to the engine and nowhere else (no log line,
 * metric label or error message carries it).
 */
@Injectable()
export class Router implements OnApplicationShutdown {
  private readonly logger = new Logger('Router');
  private readonly engine?: RouterEngine;
  private readonly policy?: IPolicy;
  private readonly breaker?: ReturnType<typeof circuitBreaker>;
  private readonly cache?: LRUCache<string, Leg | 'none'>;
  /** Each customer's point (to about a metre) to where the engine moved it onto a road. */
  private readonly origins?: LRUCache<string, string>;

  constructor(
    @Inject(routerConfig.KEY) settings: ConfigType<typeof routerConfig>,
    private readonly metrics: Metrics,
  ) {
    if (settings.ROUTER === 'off') return;
    this.engine = createRouterEngine(settings.ROUTER, {
      url: settings.ROUTER === 'pgrouting' ? settings.ROUTER_DATABASE_URL! : settings.ROUTER_URL!,
      schema: settings.ROUTER_SCHEMA,
      snapMetres: settings.ROUTER_SNAP_MILES * KM_PER_MILE * 1000,
      timeoutMs: settings.ROUTER_TIMEOUT_MS,
      cacheSeconds: settings.ROUTER_CACHE_SECONDS,
    });
    if (settings.ROUTER_CACHE_MB > 0 && settings.ROUTER_CACHE_SECONDS > 0) {
      const bytes = settings.ROUTER_CACHE_MB * 1024 * 1024;
      const ttl = settings.ROUTER_CACHE_SECONDS * 1000;
      this.cache = new LRUCache<string, Leg | 'none'>({ maxSize: Math.round(bytes * (1 - ORIGINS_SHARE)), sizeCalculation: legBytes, ttl });
      this.origins = new LRUCache<string, string>({ maxSize: Math.round(bytes * ORIGINS_SHARE), sizeCalculation: pointBytes, ttl });
    }
    const breaker = (this.breaker = circuitBreaker(engineFailure, {
      halfOpenAfter: settings.ROUTER_BREAKER_SECONDS * 1000,
      breaker: new ConsecutiveBreaker(settings.ROUTER_BREAKER_FAILURES),
    }));
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

  state(): RouterState {
    return {
      engine: this.engine?.name ?? 'off',
      breaker: breakerState(this.breaker),
      cached: this.cache?.size ?? 0,
    };
  }

  /** The legs from `origin` to each target, in the targets' order. */
  async times(origin: Point, targets: readonly RouteTarget[]): Promise<TravelTimes> {
    const engine = this.engine;
    if (!engine) return { source: 'straight-line' };
    const from = `${origin.lat.toFixed(5)},${origin.lng.toFixed(5)}`;
    // Where the engine moved this point before: the legs kept from there, and only the rest asked.
    const moved = this.origins?.get(from);
    const legs = targets.map(({ point }) => (moved === undefined ? undefined : this.kept(moved, point)));
    const missing = targets.map((_, i) => i).filter((i) => legs[i] === undefined);
    if (missing.length === 0) return { source: engine.name, legs: legs as Array<Leg | null> };
    const stop = this.metrics.routerDuration.startTimer({ engine: engine.name });
    let found: Table;
    try {
      // A signal of its own per call (see AddressGeocoder.ask).
      found = await this.policy!.execute(
        ({ signal }) =>
          engine.table(
            origin,
            missing.map((i) => targets[i].point),
            signal,
            (at) => missing.map((i) => this.kept(at, targets[i].point)),
          ),
        new AbortController().signal,
      );
      stop();
      this.metrics.routerRequests.inc({ engine: engine.name, outcome: 'ok' });
    } catch (error) {
      const outcome =
        error instanceof BrokenCircuitError
          ? 'breaker_open'
          : error instanceof TaskCancelledError
            ? 'timeout'
            : error instanceof RouterFailure
              ? error.reason
              : 'error';
      if (outcome !== 'breaker_open') stop();
      this.metrics.routerRequests.inc({ engine: engine.name, outcome });
      // The engine's failure, never the position.
      this.logger.debug(`${engine.name}: ${outcome}; the search answers in straight-line order`);
      return { source: 'straight-line' };
    }
    // An engine that does not say where it moved the point: its legs kept by the point itself.
    const at = found.origin === undefined ? `at ${from}` : (found.origin ?? OFF_ROAD);
    this.origins?.set(from, at);
    missing.forEach((i, j) => {
      legs[i] = found.legs[j];
      if (at !== OFF_ROAD) this.cache?.set(legKey(at, targets[i].point), found.legs[j] ?? 'none');
    });
    return { source: engine.name, legs: legs as Array<Leg | null> };
  }

  /** The leg kept from moved point `at` to a store's point: null for none, undefined when not kept. */
  private kept(at: string, to: Point): Leg | null | undefined {
    if (at === OFF_ROAD) return null;
    const leg = this.cache?.get(legKey(at, to));
    return leg === 'none' ? null : leg;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine?.close();
  }
}
