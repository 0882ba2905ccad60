import { registerAs } from '@nestjs/config';
import { IsIn, Matches, ValidateBy, ValidateIf } from 'class-validator';
import { IntegerSetting, NumberSetting, validateSettings } from '../config/environment.js';

/** The engines ROUTER may name; router.ts implements each. */
export const ROUTER_ENGINES = ['pgrouting', 'osrm', 'valhalla'] as const;
export type RouterEngineName = (typeof ROUTER_ENGINES)[number];

/** Drive times: the engine that routes a search's `travel_mode`, and how long to wait for it. */
export class RouterSettings {
  /**
   * The routing engine behind `travel_mode`: `off` (every such search answers in straight-line
   * order, `Travel-Source: straight-line`), `pgrouting` (PostgreSQL with PostGIS and pgRouting,
   * holding a road network loaded by scripts/load-roads.sh), `osrm` or `valhalla` (their HTTP
   * servers). See [Drive times](routing.md).
   */
  @IsIn(['off', ...ROUTER_ENGINES], { message: `ROUTER must be off, ${ROUTER_ENGINES.slice(0, -1).join(', ')} or ${ROUTER_ENGINES.at(-1)}` })
  ROUTER: 'off' | RouterEngineName = 'off';

  /**
   * For `pgrouting`: the PostgreSQL URL (`postgres://user:password@host:5432/roads`) of the database
   * holding the road network. Required with `ROUTER=pgrouting`. Or `ROUTER_DATABASE_URL_FILE`.
   */
  @ValidateIf((router: RouterSettings) => router.ROUTER === 'pgrouting' || router.ROUTER_DATABASE_URL !== undefined)
  @ValidateBy({
    name: 'isRouterDatabaseUrl',
    validator: {
      validate: (value) => typeof value === 'string' && /^postgres(ql)?:\/\/[^/]+\/[^/?]+/.test(value),
      defaultMessage: () => 'ROUTER_DATABASE_URL must be set for ROUTER=pgrouting: a PostgreSQL URL such as postgres://user:password@host:5432/roads',
    },
  })
  ROUTER_DATABASE_URL?: string;

  /**
   * For `osrm` and `valhalla`: the server's base URL (`http://osrm:5000`, `http://valhalla:8002`).
   * Required with them.
   */
  @ValidateIf((router: RouterSettings) => router.ROUTER === 'osrm' || router.ROUTER === 'valhalla' || router.ROUTER_URL !== undefined)
  @ValidateBy({
    name: 'isRouterUrl',
    validator: {
      validate: (value) => typeof value === 'string' && /^https?:\/\/[^/\s]+/.test(value),
      defaultMessage: (args) => `ROUTER_URL must be set for ROUTER=${(args?.object as RouterSettings).ROUTER}: an http(s) base URL such as http://osrm:5000`,
    },
  })
  ROUTER_URL?: string;

  /** For `pgrouting`: the schema scripts/load-roads.sh loaded the network into (its `--schema`). */
  @Matches(/^[a-z_][a-z0-9_]{0,50}$/, { message: 'ROUTER_SCHEMA must be a plain lower-case name (letters, digits, _)' })
  ROUTER_SCHEMA = 'roads';

  /** Longest wait for the engine per search (100–10000 ms); past it the search answers in straight-line order. */
  @IntegerSetting(100, 10_000)
  ROUTER_TIMEOUT_MS = 800;

  /** A customer or store further than this from the nearest road (0.01–50 miles) is not reached by road: its times are null. */
  @NumberSetting(0.01, 50)
  ROUTER_SNAP_MILES = 1;

  /**
   * The most stores one search asks travel times for (1–1000; a `limit` above it is asked for
   * instead): the nearest ones in a straight line of those the search finds, before they are ordered
   * by time and `limit` is applied. An OSRM server refuses a table above the square of its
   * `--max-table-size` (10,000 points with one source at its default of 100), a Valhalla server
   * above its `max_matrix_location_pairs` (2,500 for `auto`); a table refused as too big is asked
   * again in smaller parts.
   */
  @IntegerSetting(1, 1000)
  ROUTER_MAX_STORES = 100;

  /**
   * Memory per instance for the travel times kept (0–1024 MiB; 0: none kept), by where the customer
   * was moved onto a road and the store's point, and for each customer's point, by where it was
   * moved (a tenth of it). Least recently used go first; a travel time takes about 440 bytes.
   */
  @IntegerSetting(0, 1024)
  ROUTER_CACHE_MB = 32;

  /**
   * How long travel times, and the answers made of them, are kept (0–86400 s; 0: not kept): a road
   * network reloaded by scripts/load-roads.sh is in every answer after this long.
   */
  @IntegerSetting(0, 86_400)
  ROUTER_CACHE_SECONDS = 3600;

  /**
   * The engine's failures in a row (unreachable, timeouts, 429 and 5xx statuses, unreadable answers)
   * after which it is skipped (1–1000); a refusal of the request (HTTP 400) is not counted.
   */
  @IntegerSetting(1, 1000)
  ROUTER_BREAKER_FAILURES = 5;

  /** How long the engine is skipped then, before one search tries it again (1–3600 s). */
  @IntegerSetting(1, 3600)
  ROUTER_BREAKER_SECONDS = 30;
}

export const routerConfig = registerAs('router', () => validateSettings(RouterSettings));
