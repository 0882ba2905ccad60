import { registerAs } from '@nestjs/config';
import { IsIn, Matches, ValidateBy, ValidateIf } from 'class-validator';
import { IntegerSetting, validateSettings } from '../config/environment.js';

/** The engines GEOCODER may name; geocoder-engines.ts implements each. */
export const GEOCODER_ENGINES = ['postgis', 'census', 'nominatim', 'pelias'] as const;
export type GeocoderEngineName = (typeof GEOCODER_ENGINES)[number];

/** Street addresses: the engine that places them, and how long to wait for it and believe it. */
export class GeoSettings {
  /**
   * The engine that places a customer's street address (`POST /locations/nearest` measures from
   * it): `off` (the ZIP code's point, nothing leaves the machine), `postgis` (PostGIS's TIGER
   * geocoder), `census` (US Census Geocoder), `nominatim` or `pelias`. See [Geocoding](geocoding.md).
   */
  @IsIn(['off', ...GEOCODER_ENGINES], { message: `GEOCODER must be off, ${GEOCODER_ENGINES.slice(0, -1).join(', ')} or ${GEOCODER_ENGINES.at(-1)}` })
  GEOCODER: 'off' | GeocoderEngineName = 'off';

  /**
   * The engine's address: for `postgis` a PostgreSQL URL (`postgres://user:password@host:5432/gis`)
   * of the database where `postgis_tiger_geocoder` is loaded; for the others the base URL their
   * documentation gives (`https://geocoding.geo.census.gov`, `https://nominatim.example.org`,
   * `http://pelias:4000`). Required unless `GEOCODER=off`. Or `GEOCODER_URL_FILE`.
   */
  @ValidateIf((geo: GeoSettings) => geo.GEOCODER !== 'off' || geo.GEOCODER_URL !== undefined)
  @ValidateBy({
    name: 'isGeocoderUrl',
    validator: {
      validate: (value, args) => geocoderUrlProblem((args?.object as GeoSettings).GEOCODER, value) === undefined,
      defaultMessage: (args) => geocoderUrlProblem((args?.object as GeoSettings).GEOCODER, args?.value) ?? '',
    },
  })
  GEOCODER_URL?: string;

  /** Longest wait for the engine per address (100–10000 ms); past it the search uses the ZIP code's point. */
  @IntegerSetting(100, 10_000)
  GEOCODER_TIMEOUT_MS = 800;

  /** Addresses whose answer is kept in memory per instance (0–1000000; 0: no cache). Keys are digests, never the address. */
  @IntegerSetting(0, 1_000_000)
  GEOCODER_CACHE_SIZE = 50_000;

  /** How long an answer is kept (1–2592000 s); an engine's "no match" is kept a tenth of this. */
  @IntegerSetting(1, 2_592_000)
  GEOCODER_CACHE_SECONDS = 86_400;

  /** Failures in a row (timeouts, errors, unreadable answers) after which the engine is skipped (1–1000). */
  @IntegerSetting(1, 1000)
  GEOCODER_BREAKER_FAILURES = 5;

  /** How long the engine is skipped then, before one request tries it again (1–3600 s). */
  @IntegerSetting(1, 3600)
  GEOCODER_BREAKER_SECONDS = 30;

  /** A match further than this from the request's ZIP code point is not believed (1–200 miles); the ZIP's point is used. */
  @IntegerSetting(1, 200)
  GEOCODER_MAX_ZIP_MILES = 25;

  /**
   * The `User-Agent` of the HTTP engines' requests. Nominatim's usage policy asks for one that
   * names the application and a contact: set it to yours (`acme-stores/1.0 ops@acme.example`).
   */
  @Matches(/^[\x21-\x7e][\x20-\x7e]{0,254}$/, { message: 'GEOCODER_USER_AGENT must be 1 to 255 printable ASCII characters' })
  GEOCODER_USER_AGENT = 'plant-store-service/1.0';
}

export const geoConfig = registerAs('geo', () => validateSettings(GeoSettings));

/** What is wrong with GEOCODER_URL for this engine, if anything. */
function geocoderUrlProblem(engine: GeoSettings['GEOCODER'], value: unknown): string | undefined {
  if (engine === 'off') return undefined;
  const postgres = engine === 'postgis';
  const expected = postgres
    ? 'a PostgreSQL URL such as postgres://user:password@host:5432/gis'
    : 'an http(s) base URL such as https://geocoding.geo.census.gov';
  if (typeof value !== 'string') return `GEOCODER_URL must be set for GEOCODER=${engine}: ${expected}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `GEOCODER_URL must be ${expected}`;
  }
  const schemes = postgres ? ['postgres:', 'postgresql:'] : ['http:', 'https:'];
  return schemes.includes(url.protocol) && url.hostname ? undefined : `GEOCODER_URL must be ${expected}`;
}
