import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

/** `http_route` of a request no route matched (404s, /docs assets): one value, so a scan of random paths adds no series. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The OpenTelemetry semantic convention's advised buckets for http.server.request.duration, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The part of a mysql2 pool the pool gauges read (see poolStats). */
interface Mysql2Pool {
  config: { connectionLimit: number };
  _allConnections: { length: number };
  _freeConnections: { length: number };
  _connectionQueue: { length: number };
}

/**
 * mysql2 has no public pool statistics, and its pool events cannot count connections handed
 * straight to a waiting request (no 'acquire' then): its three queues are read instead.
 * test/metrics.e2e-spec.ts fails if an update renames them (the gauges then stay at 0 and a warning is logged).
 */
export function poolStats(pool: unknown): { inUse: number; idle: number; waiting: number; max: number } | undefined {
  const p = pool as Partial<Mysql2Pool> | undefined;
  if (typeof p?._allConnections?.length !== 'number' || typeof p._freeConnections?.length !== 'number' || typeof p._connectionQueue?.length !== 'number')
    return undefined;
  const idle = p._freeConnections.length;
  return { inUse: p._allConnections.length - idle, idle, waiting: p._connectionQueue.length, max: p.config?.connectionLimit ?? 0 };
}

/**
 * The service's Prometheus metrics, one registry per application (docs/operations.md, "Metrics").
 * Services count into it; only the server exposes it (metrics-server.ts, on METRICS_PORT).
 * The command line has its own, never read: a short-lived process is not scraped.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  private readonly logger = new Logger('Metrics');

  readonly httpDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests, from the first byte read to the response finished, by route template and status.',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly storeIndexStores = new Gauge({
    name: 'plant_store_search_index_stores',
    help: "Stores in this instance's in-memory search index (POST /locations/nearest).",
    registers: [this.registry],
  });

  /** Date.now() of the last successful index load; 0 before the first. */
  storeIndexLoadedAt = 0;

  readonly tokenCacheLookups = new Counter({
    name: 'plant_store_token_cache_lookups_total',
    help: 'Look-ups of well-formed opaque tokens by whether the in-process cache had them (hit), the database was asked (miss) or a read of the same token already in flight answered (shared).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'plant_store_rate_limit_rejections_total',
    help: 'Requests answered 429 by kind: auth_failures (too many failed authentications from one address), requests (one token over its per-minute limit).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly redisFallback = new Gauge({
    name: 'plant_store_redis_fallback_active',
    help: "1 while Redis (REDIS_URL) is unreachable and rate limits are counted in this instance's memory; 0 otherwise, and always 0 without REDIS_URL.",
    registers: [this.registry],
  });

  readonly storeImportRows = new Counter({
    name: 'plant_store_store_import_rows_total',
    help: 'Store rows written by imports run in this process (the demo seed, imports through the service), by outcome. The command line counts its own, unscraped.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** How long each write of the store catalogue holds its transaction (on SQLite, the one writer: plant writes wait meanwhile). */
  readonly storeCatalogWriteDuration = new Histogram({
    name: 'plant_store_store_catalog_write_seconds',
    help: 'Time a write of the store catalogue held its database transaction, from its first statement to its commit, by writer: admin (one store through the admin API), import (the apply of an import).',
    labelNames: ['writer'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  /** Change events: what waits in the outbox, as the relay of this instance last counted it. */
  readonly eventsBacklogRows = new Gauge({
    name: 'plant_store_events_backlog_rows',
    help: 'Change events written to the outbox and not yet acknowledged by the broker (EVENTS_NATS_URL), as this instance last counted them.',
    registers: [this.registry],
  });

  readonly eventsBacklogAge = new Gauge({
    name: 'plant_store_events_backlog_age_seconds',
    help: 'Age of the oldest change event still in the outbox; 0 when it is empty. A growing age: the broker does not take the events.',
    registers: [this.registry],
  });

  /** How long committed events wait for the broker's acknowledgement (their CloudEvents `time` to the ack). */
  readonly eventsDeliveryDelay = new Histogram({
    name: 'plant_store_events_delivery_delay_seconds',
    help: 'Time from a change event being written (its CloudEvents time, inside the transaction) to the broker acknowledging its publication by this instance.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly eventsPublished = new Counter({
    name: 'plant_store_events_published_total',
    help: 'Change events this instance published and the broker acknowledged.',
    registers: [this.registry],
  });

  /** 1 while this instance's relay cannot use its stream at all (the log and /admin/status say why); an unreachable broker is the backlog's age instead. */
  readonly eventsStreamProblem = new Gauge({
    name: 'plant_store_events_stream_problem',
    help: "Whether the JetStream stream (EVENTS_STREAM) cannot take this instance's events (1): another stream's subjects overlap, it takes other subjects, the broker refused its settings. See GET /admin/status.",
    registers: [this.registry],
  });

  // The street-address geocoder (GEOCODER): never an address in a label, only engines, outcomes and reasons.
  readonly searchPositions = new Counter({
    name: 'plant_store_search_positions_total',
    help: "Searches by where the customer position came from (the Customer-Position header): address (the geocoder), zip (the ZIP code's point), device (lat and lng of the request).",
    labelNames: ['source'] as const,
    registers: [this.registry],
  });
  readonly geocoderFallbacks = new Counter({
    name: 'plant_store_geocoder_fallbacks_total',
    help: "Searches with a street address that used the ZIP code's point instead, by reason: no_match, implausible (far from the ZIP code or in another state), timeout, error, rate_limited, malformed, breaker_open.",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly geocoderRequests = new Counter({
    name: 'plant_store_geocoder_requests_total',
    help: 'Requests to the geocoding engine by outcome: match, no_match, timeout, error, rate_limited, malformed.',
    labelNames: ['engine', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly geocoderDuration = new Histogram({
    name: 'plant_store_geocoder_request_duration_seconds',
    help: 'Time the geocoding engine took to answer (or to time out).',
    labelNames: ['engine'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly geocoderCache = new Counter({
    name: 'plant_store_geocoder_cache_lookups_total',
    help: "Street addresses looked up in the geocoder's in-memory cache, by result (hit, miss).",
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  // The routing engine (ROUTER): engines and outcomes only, never a position.
  readonly routerRequests = new Counter({
    name: 'plant_store_router_requests_total',
    help: 'Requests to the routing engine (one per search with travel_mode that is not answered from the cache), by outcome: ok, timeout, error, rate_limited, malformed, refused (the request, not the engine: not counted by the breaker), breaker_open.',
    labelNames: ['engine', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly routerDuration = new Histogram({
    name: 'plant_store_router_request_duration_seconds',
    help: 'Time the routing engine took to answer (or to time out).',
    labelNames: ['engine'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly geocoderBreakerOpen = new Gauge({
    name: 'plant_store_geocoder_breaker_open',
    help: '1 while the geocoding engine is skipped after GEOCODER_BREAKER_FAILURES failures in a row (the circuit breaker is open or half-open), 0 otherwise.',
    labelNames: ['engine'] as const,
    registers: [this.registry],
  });

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    const age: Gauge = new Gauge({
      name: 'plant_store_search_index_age_seconds',
      help: 'Seconds since this instance last changed its search index: a load (at start, after a change too big to apply) or a catalogue change applied.',
      registers: [this.registry],
      collect: () => {
        if (this.storeIndexLoadedAt > 0) age.set((Date.now() - this.storeIndexLoadedAt) / 1000);
      },
    });
    // MySQL only: SQLite is one synchronous in-process connection, nothing is pooled or waits.
    if (dataSource.options.type !== 'better-sqlite3') {
      const poolGauge = (name: string, help: string, pick: (s: NonNullable<ReturnType<typeof poolStats>>) => number) => {
        const gauge: Gauge = new Gauge({
          name,
          help,
          registers: [this.registry],
          collect: () => {
            const stats = this.pool();
            if (stats) gauge.set(pick(stats));
          },
        });
      };
      poolGauge('plant_store_db_pool_connections_in_use', 'MySQL pool connections running a query or transaction.', (s) => s.inUse);
      poolGauge('plant_store_db_pool_connections_idle', 'Open MySQL pool connections waiting for work.', (s) => s.idle);
      poolGauge('plant_store_db_pool_requests_waiting', 'Queries waiting for a free MySQL pool connection.', (s) => s.waiting);
      poolGauge('plant_store_db_pool_connections_max', 'Size of the MySQL pool (DB_POOL_SIZE).', (s) => s.max);
    }
  }

  /** Node's own metrics (process_*, nodejs_*: event-loop lag, GC, heap), only where they are served. */
  collectDefaults(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  private warned = false;

  private pool() {
    const stats = poolStats((this.dataSource.driver as { pool?: unknown }).pool);
    if (!stats && !this.warned && this.dataSource.isInitialized) {
      this.warned = true;
      this.logger.warn('mysql2 pool statistics not readable: the plant_store_db_pool_* gauges are missing');
    }
    return stats;
  }
}
