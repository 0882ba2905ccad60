import { createHash } from 'node:crypto';
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
import { geoConfig } from './geo.config.js';
import { Metrics } from '../metrics/metrics.js';
import { haversineMiles, type Point } from '../shared/great-circle.js';
import { createEngine, EngineFailure, FAILURE_REASONS, type AddressQuery, type EngineMatch, type GeocoderEngine } from './geocoder-engines.js';

/**
 * Why a search with a street address measured from the ZIP code's point after all. Written here
 * only: the OpenAPI document's enum (AdminCustomerPosition.fallback) is this list, and the
 * console's words for each are keyed by the type generated from it, so a new reason fails the
 * console's type check until it is worded.
 */
export const FALLBACK_REASONS = ['no_match', 'implausible', ...FAILURE_REASONS, 'breaker_open'] as const;
export type FallbackReason = (typeof FALLBACK_REASONS)[number];

export type AddressAnswer = { point: Point } | { fallback: FallbackReason };

/** A circuit breaker's state as the status page says it: null when there is none (the engine is off). */
export function breakerState(breaker: { state: CircuitState } | undefined): 'closed' | 'open' | 'half_open' | null {
  if (!breaker) return null;
  return breaker.state === CircuitState.Closed ? 'closed' : breaker.state === CircuitState.HalfOpen ? 'half_open' : 'open';
}

/** What the status page shows of the geocoder. */
export interface GeocoderState {
  engine: 'off' | GeocoderEngine['name'];
  /** `closed` (in use), `open` (skipped after failures), `half_open` (one request is trying it again). */
  breaker: 'closed' | 'open' | 'half_open' | null;
  cached: number;
}

/** A cached answer: the engine's match, or its "no match" (kept shorter). */
type Cached = EngineMatch | 'no_match';

const CONTROL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;
/** The address as a cache key compares it: control characters blanked, white space collapsed, case folded. */
const normal = (value: string | undefined) => (value ?? '').replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();

/**
 * The customer's street address as a point, through the engine of GEOCODER, for a search to
 * measure from. Never a 5xx and never a wait past GEOCODER_TIMEOUT_MS: every failure is a
 * fallback reason, and the search uses the ZIP code's point. After GEOCODER_BREAKER_FAILURES
 * failures in a row the engine is skipped for GEOCODER_BREAKER_SECONDS (cockatiel's circuit
 * breaker; then one request tries it again), so that a dead engine costs nothing per request.
 *
 * Answers are kept in memory per instance (GEOCODER_CACHE_SIZE, GEOCODER_CACHE_SECONDS; "no
 * match" a tenth as long) under a SHA-256 digest of engine and address, and one look-up runs per
 * address at a time: a repeated search costs what a ZIP search costs. A match is believed only
 * within GEOCODER_MAX_ZIP_MILES of the request's ZIP code point and in the request's state.
 *
 * The address is personal data: it goes to the engine and nowhere else (no log line, metric label,
 * trace attribute or error message here or in the engines carries it).
 */
@Injectable()
export class AddressGeocoder implements OnApplicationShutdown {
  private readonly logger = new Logger('Geocoder');
  private readonly engine?: GeocoderEngine;
  private readonly policy?: IPolicy;
  private readonly breaker?: ReturnType<typeof circuitBreaker>;
  private readonly cache?: LRUCache<string, Cached>;
  private readonly inFlight = new Map<string, Promise<Cached | EngineFailure | 'breaker_open'>>();
  private readonly noMatchTtlMs: number;
  private readonly maxZipMiles: number;

  constructor(
    @Inject(geoConfig.KEY) geo: ConfigType<typeof geoConfig>,
    private readonly metrics: Metrics,
  ) {
    const engine = geo.GEOCODER;
    const ttlMs = geo.GEOCODER_CACHE_SECONDS * 1000;
    this.noMatchTtlMs = Math.max(1000, Math.round(ttlMs / 10));
    this.maxZipMiles = geo.GEOCODER_MAX_ZIP_MILES;
    if (engine === 'off') return;
    const timeoutMs = geo.GEOCODER_TIMEOUT_MS;
    this.engine = createEngine(engine, geo.GEOCODER_URL!, {
      timeoutMs,
      userAgent: geo.GEOCODER_USER_AGENT,
    });
    const size = geo.GEOCODER_CACHE_SIZE;
    if (size > 0) this.cache = new LRUCache<string, Cached>({ max: size, ttl: ttlMs });
    const breakerSeconds = geo.GEOCODER_BREAKER_SECONDS;
    const breakerFailures = geo.GEOCODER_BREAKER_FAILURES;
    this.breaker = circuitBreaker(
      handleWhen((error) => error instanceof EngineFailure || error instanceof TaskCancelledError),
      { halfOpenAfter: breakerSeconds * 1000, breaker: new ConsecutiveBreaker(breakerFailures) },
    );
    // Aggressive: the search stops waiting at the deadline even if the engine's call does not (its signal aborts it).
    this.policy = wrap(this.breaker, timeout(timeoutMs, TimeoutStrategy.Aggressive));
    const gauge = metrics.geocoderBreakerOpen.labels(engine);
    gauge.set(0);
    this.breaker.onStateChange((state) => {
      gauge.set(state === CircuitState.Closed ? 0 : 1);
      if (state === CircuitState.Open)
        this.logger.warn(`${engine} is skipped for ${breakerSeconds} s after ${breakerFailures} failures in a row; searches use the ZIP code's point`);
      if (state === CircuitState.Closed) this.logger.log(`${engine} answers again`);
    });
  }

  get enabled(): boolean {
    return this.engine !== undefined;
  }

  state(): GeocoderState {
    return {
      engine: this.engine?.name ?? 'off',
      breaker: breakerState(this.breaker),
      cached: this.cache?.size ?? 0,
    };
  }

  /**
   * The street-level point of the address, or why there is none to use. `zipPoint` is the
   * request's ZIP code point, which a believable match lies near. Only called when the request has
   * a street address and GEOCODER is on.
   */
  async locate(address: { address: string; city?: string; state?: string; zip5: string }, zipPoint: Point): Promise<AddressAnswer> {
    const query: AddressQuery = {
      street: normal(address.address),
      city: normal(address.city) || undefined,
      state: address.state?.toUpperCase(),
      zip: address.zip5,
    };
    if (!query.street || !this.engine) return { fallback: 'no_match' };
    const key = createHash('sha256')
      .update([this.engine.name, query.street.toLowerCase(), (query.city ?? '').toLowerCase(), query.state ?? '', query.zip].join('\u0000'))
      .digest('base64url');
    let answer: Cached | EngineFailure | 'breaker_open' | undefined = this.cache?.get(key);
    if (this.cache) this.metrics.geocoderCache.inc({ result: answer === undefined ? 'miss' : 'hit' });
    if (answer === undefined) {
      let pending = this.inFlight.get(key);
      if (!pending) {
        pending = this.ask(query, key).finally(() => this.inFlight.delete(key));
        this.inFlight.set(key, pending);
      }
      answer = await pending;
    }
    if (answer instanceof EngineFailure) return { fallback: answer.reason };
    if (answer === 'breaker_open' || answer === 'no_match') return { fallback: answer };
    const believable = haversineMiles(answer, zipPoint) <= this.maxZipMiles && (!answer.state || !query.state || answer.state === query.state);
    return believable ? { point: { lat: answer.lat, lng: answer.lng } } : { fallback: 'implausible' };
  }

  /** One request to the engine through the breaker and the timeout; its answer cached, its failure counted. */
  private async ask(query: AddressQuery, key: string): Promise<Cached | EngineFailure | 'breaker_open'> {
    const engine = this.engine!;
    const stop = this.metrics.geocoderDuration.startTimer({ engine: engine.name });
    try {
      // A signal of its own per call: without one, cockatiel hangs every call's timeout on one shared
      // signal, and more than ten calls in flight print a MaxListenersExceededWarning.
      const match = await this.policy!.execute(({ signal }) => engine.geocode(query, signal), new AbortController().signal);
      stop();
      const answer: Cached = match ?? 'no_match';
      this.metrics.geocoderRequests.inc({ engine: engine.name, outcome: match ? 'match' : 'no_match' });
      this.cache?.set(key, answer, match ? undefined : { ttl: this.noMatchTtlMs });
      return answer;
    } catch (error) {
      if (error instanceof BrokenCircuitError) return 'breaker_open';
      stop();
      const failure =
        error instanceof EngineFailure
          ? error
          : error instanceof TaskCancelledError
            ? new EngineFailure('timeout', `${engine.name}: no answer within the timeout`)
            : new EngineFailure('error', `${engine.name}: ${(error as Error).name}`);
      this.metrics.geocoderRequests.inc({ engine: engine.name, outcome: failure.reason });
      // The engine's failure, never the address (the message is the engine's name and a status).
      this.logger.debug(`${failure.message}; the search uses the ZIP code's point`);
      return failure;
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.engine?.close();
  }
}
