import pg from 'pg';
import type { Point } from '../shared/great-circle.js';
import type { GeocoderEngineName } from './geo.config.js';

/**
 * The engines behind GEOCODER: each turns one US street address into a street-level point, or
 * says it has none. Everything else (a timeout, an error status, a body that is not the engine's
 * documented format) is an EngineFailure, which the caller counts against the engine and answers
 * with the ZIP code's point. No engine logs, and no failure carries the address or the URL (which
 * holds the address): the message names the engine and what went wrong only.
 */

export interface AddressQuery {
  /** House number and street, as the customer gave it (control characters already blanked). */
  street: string;
  city?: string;
  /** Two letters, upper case. */
  state?: string;
  /** Five digits. */
  zip: string;
}

/** A street-level match, with the ZIP code and state the engine placed it in when it says. */
export interface EngineMatch extends Point {
  zip?: string;
  state?: string;
}

/** What an engine answers: a street-level match, or none (`undefined`). */
export type EngineAnswer = EngineMatch | undefined;

/** How an engine failed: each is also a fallback reason (FALLBACK_REASONS). */
export const FAILURE_REASONS = ['timeout', 'error', 'rate_limited', 'malformed'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export class EngineFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    detail: string,
  ) {
    super(detail);
  }
}

export interface GeocoderEngine {
  readonly name: GeocoderEngineName;
  geocode(query: AddressQuery, signal: AbortSignal): Promise<EngineAnswer>;
  close(): Promise<void>;
}

/** A latitude and longitude as an engine sends them (numbers, or numeric strings for Nominatim). */
function point(lat: unknown, lng: unknown): Point | undefined {
  const y = typeof lat === 'string' && lat.trim() !== '' ? Number(lat) : lat;
  const x = typeof lng === 'string' && lng.trim() !== '' ? Number(lng) : lng;
  if (typeof y !== 'number' || typeof x !== 'number' || !Number.isFinite(y) || !Number.isFinite(x) || Math.abs(y) > 90 || Math.abs(x) > 180) return undefined;
  return { lat: y, lng: x };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
const zip5 = (value: unknown): string | undefined => /^[0-9]{5}/.exec(text(value) ?? '')?.[0];

/**
 * The HTTP engines share the request: a GET with the configured User-Agent, the caller's abort
 * signal for the timeout, and a JSON body. 429 is `rate_limited`, any other non-2xx `error`.
 */
abstract class HttpEngine implements GeocoderEngine {
  abstract readonly name: Exclude<GeocoderEngineName, 'postgis'>;
  protected readonly base: string;

  constructor(
    base: string,
    private readonly userAgent: string,
  ) {
    this.base = base.replace(/\/+$/, '');
  }

  protected abstract url(query: AddressQuery): string;
  protected abstract read(body: unknown): EngineAnswer;

  async geocode(query: AddressQuery, signal: AbortSignal): Promise<EngineAnswer> {
    let response: Response;
    try {
      response = await fetch(this.url(query), { signal, headers: { Accept: 'application/json', 'User-Agent': this.userAgent }, redirect: 'error' });
    } catch (error) {
      if (signal.aborted) throw new EngineFailure('timeout', `${this.name}: no answer within the timeout`);
      throw new EngineFailure('error', `${this.name}: the request failed (${(error as Error).name})`);
    }
    if (response.status === 429) {
      await response.body?.cancel();
      throw new EngineFailure('rate_limited', `${this.name}: 429, too many requests`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new EngineFailure('error', `${this.name}: HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      if (signal.aborted) throw new EngineFailure('timeout', `${this.name}: no answer within the timeout`);
      throw new EngineFailure('malformed', `${this.name}: the answer is not JSON`);
    }
    return this.read(body);
  }

  protected query(path: string, params: Record<string, string | undefined>): string {
    const search = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));
    return `${this.base}${path}?${search.toString()}`;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The US Census Geocoder's one-line-per-field address look-up (`/geocoder/locations/address`,
 * current benchmark): `result.addressMatches[]`, each an interpolated point on a TIGER address
 * range, so any match is street-level; `coordinates.x` is the longitude.
 */
export class CensusEngine extends HttpEngine {
  readonly name = 'census';

  protected url(query: AddressQuery): string {
    return this.query('/geocoder/locations/address', {
      street: query.street,
      city: query.city,
      state: query.state,
      zip: query.zip,
      benchmark: 'Public_AR_Current',
      format: 'json',
    });
  }

  protected read(body: unknown): EngineAnswer {
    const matches = (body as { result?: { addressMatches?: unknown } } | null)?.result?.addressMatches;
    if (!Array.isArray(matches)) throw new EngineFailure('malformed', 'census: no result.addressMatches in the answer');
    if (matches.length === 0) return undefined;
    const first = matches[0] as { coordinates?: { x?: unknown; y?: unknown }; addressComponents?: { zip?: unknown; state?: unknown } };
    const at = point(first.coordinates?.y, first.coordinates?.x);
    if (!at) throw new EngineFailure('malformed', 'census: a match without coordinates');
    return { ...at, zip: zip5(first.addressComponents?.zip), state: text(first.addressComponents?.state)?.toUpperCase() };
  }
}

/** Nominatim's address rank of a house or building: anything coarser (a street, a town) is not the customer's door. */
const NOMINATIM_HOUSE_RANK = 30;

/**
 * Nominatim's structured search (`/search?street=…&city=…&state=…&postalcode=…`, `format=jsonv2`,
 * one result, addresses only in the US): a match is street-level when its `place_rank` is a
 * house's (30), as an address point or an interpolation; the state comes as `ISO3166-2-lvl4`.
 */
export class NominatimEngine extends HttpEngine {
  readonly name = 'nominatim';

  protected url(query: AddressQuery): string {
    return this.query('/search', {
      street: query.street,
      city: query.city,
      state: query.state,
      postalcode: query.zip,
      countrycodes: 'us',
      format: 'jsonv2',
      addressdetails: '1',
      limit: '1',
    });
  }

  protected read(body: unknown): EngineAnswer {
    if (!Array.isArray(body)) throw new EngineFailure('malformed', 'nominatim: the answer is not a list of places');
    if (body.length === 0) return undefined;
    const first = body[0] as { lat?: unknown; lon?: unknown; place_rank?: unknown; address?: Record<string, unknown> };
    const at = point(first.lat, first.lon);
    if (!at || typeof first.place_rank !== 'number') throw new EngineFailure('malformed', 'nominatim: a place without lat, lon or place_rank');
    if (first.place_rank < NOMINATIM_HOUSE_RANK) return undefined;
    const iso = text(first.address?.['ISO3166-2-lvl4']);
    return { ...at, zip: zip5(first.address?.postcode), state: iso?.startsWith('US-') ? iso.slice(3) : undefined };
  }
}

/**
 * Pelias's structured search (`/v1/search/structured?address=…&locality=…&region=…&postalcode=…`,
 * one result): GeoJSON, `[lng, lat]`; street-level when the feature's layer is `address` (an
 * address point, or one interpolated on a street), not a street's or a place's centroid.
 */
export class PeliasEngine extends HttpEngine {
  readonly name = 'pelias';

  protected url(query: AddressQuery): string {
    return this.query('/v1/search/structured', {
      address: query.street,
      locality: query.city,
      region: query.state,
      postalcode: query.zip,
      country: 'USA',
      size: '1',
    });
  }

  protected read(body: unknown): EngineAnswer {
    const features = (body as { features?: unknown } | null)?.features;
    if (!Array.isArray(features)) throw new EngineFailure('malformed', 'pelias: no features in the answer');
    if (features.length === 0) return undefined;
    const first = features[0] as { geometry?: { coordinates?: unknown }; properties?: Record<string, unknown> };
    const coordinates = first.geometry?.coordinates;
    const at = Array.isArray(coordinates) ? point(coordinates[1], coordinates[0]) : undefined;
    if (!at || !first.properties) throw new EngineFailure('malformed', 'pelias: a feature without coordinates or properties');
    if (first.properties.layer !== 'address' || first.properties.match_type === 'fallback') return undefined;
    return { ...at, zip: zip5(first.properties.postalcode), state: text(first.properties.region_a)?.toUpperCase() };
  }
}

/**
 * The worst `rating` of PostGIS's geocode() taken as the customer's street address: 0 is an exact
 * match, each mismatch (a street type, a direction, a fuzzy name, another ZIP code) adds to it, and
 * the answers built from a ZIP code or a city alone rate far higher.
 */
export const POSTGIS_MAX_RATING = 20;

/** The geocoder's SQL, one call: the best candidate only (`geocode(address, 1)`), its point in NAD83 degrees. */
const GEOCODE_SQL =
  'SELECT g.rating, ST_Y(g.geomout) AS lat, ST_X(g.geomout) AS lng, (g.addy).zip AS zip, (g.addy).stateabbrev AS state FROM tiger.geocode($1, 1) AS g';

/**
 * PostGIS's TIGER geocoder (extension `postgis_tiger_geocoder`) in the database of GEOCODER_URL,
 * as its loader leaves it. Its own small pool (node-postgres), opened at the first address and
 * never by the command line; each connection gets the search path the extension's functions
 * need (`public` and `tiger`: a database's own default is lost in a copy or a restore, see
 * docs/geocoding-tiger.md) and a statement timeout of
 * GEOCODER_TIMEOUT_MS, so that the database gives up when the service does.
 */
export class PostgisEngine implements GeocoderEngine {
  readonly name = 'postgis';
  private pool?: pg.Pool;

  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  private connection(): pg.Pool {
    if (this.pool) return this.pool;
    this.pool = new pg.Pool({
      connectionString: this.url,
      max: 4,
      idleTimeoutMillis: 60_000,
      connectionTimeoutMillis: this.timeoutMs,
      statement_timeout: this.timeoutMs,
      options: '-c search_path=public,tiger',
      application_name: 'plant-store-geocoder',
    });
    // An idle connection that breaks (a restart of the database) is dropped by the pool; nothing to do.
    this.pool.on('error', () => undefined);
    return this.pool;
  }

  async geocode(query: AddressQuery, signal: AbortSignal): Promise<EngineAnswer> {
    const line = `${query.street}, ${query.city ?? ''}, ${query.state ?? ''} ${query.zip}`;
    let rows: Array<{ rating: number; lat: number; lng: number; zip: string | null; state: string | null }>;
    try {
      rows = (await this.connection().query(GEOCODE_SQL, [line])).rows;
    } catch (error) {
      const code = (error as { code?: string }).code;
      // 57014: canceled by statement_timeout.
      if (signal.aborted || code === '57014') throw new EngineFailure('timeout', 'postgis: no answer within the timeout');
      throw new EngineFailure('error', `postgis: the query failed (${code ?? (error as Error).name})`);
    }
    const best = rows[0];
    if (!best || best.rating > POSTGIS_MAX_RATING) return undefined;
    const at = point(Number(best.lat), Number(best.lng));
    if (!at) throw new EngineFailure('malformed', 'postgis: a match without a point');
    return { ...at, zip: zip5(best.zip), state: text(best.state)?.toUpperCase() };
  }

  async close(): Promise<void> {
    await this.pool?.end();
  }
}

/** The engine GEOCODER names (geo.config.ts lists them): a name added there and not here fails to compile. */
export function createEngine(engine: GeocoderEngineName, url: string, { timeoutMs, userAgent }: { timeoutMs: number; userAgent: string }): GeocoderEngine {
  switch (engine) {
    case 'postgis':
      return new PostgisEngine(url, timeoutMs);
    case 'census':
      return new CensusEngine(url, userAgent);
    case 'nominatim':
      return new NominatimEngine(url, userAgent);
    case 'pelias':
      return new PeliasEngine(url, userAgent);
  }
}
