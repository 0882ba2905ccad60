import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { applyDecorators } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  validateSync,
  type ValidationArguments,
} from 'class-validator';
import { isWellFormedToken } from './token-format.js';

/** "true"/"false" (any case) and nothing else; anything else stays a string so that @IsBoolean names the variable. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : value;
};

/** Whole decimal numbers only: "3000" -> 3000, while "3e3", "30.5" or "abc" stay strings and fail @IsInt. */
const toInteger = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);

/**
 * A whole number in [min, max]. class-validator checks in the order the checks were registered
 * (applyDecorators registers in the order given): the type first, so "must be an integer number"
 * comes before the range.
 */
const IntegerSetting = (min: number, max: number) => applyDecorators(IsInt(), Max(max), Min(min), Transform(toInteger));

/** true or false (see toBoolean). */
const BooleanSetting = () => applyDecorators(IsBoolean(), Transform(toBoolean));

/** The contract's body limit: 16 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 16_384;

/**
 * Every setting the service reads, with its default. `.env.example` lists the same
 * variables; a bad value stops start-up with a message naming the variable.
 */
export class EnvironmentVariables {
  /**
   * `development`, `production` or `test`. With `NODE_ENV=test` in the environment (the test suite
   * sets it) `.env` is not read.
   */
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  /** HTTP port. */
  @IntegerSetting(0, 65535)
  PORT = 3000;

  /** Interface to listen on (`127.0.0.1`: this machine only). */
  @IsString()
  @MinLength(1)
  HOST = '0.0.0.0';

  /**
   * Port of the Prometheus endpoint `GET /metrics`, a listener of its own (never the public port, no
   * token); `0`: metrics off. A port that cannot be bound stops start-up naming `METRICS_PORT`:
   * instances side by side on one host each need their own (or `0`). See [Metrics and
   * traces](operations.md#metrics-and-traces).
   */
  @IntegerSetting(0, 65535)
  METRICS_PORT = 9464;

  /**
   * Interface of the metrics listener. Unset: the same as `HOST` (in a container, `0.0.0.0`, so that
   * Prometheus can scrape the pod).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  METRICS_HOST?: string;

  /**
   * Whether to believe `X-Forwarded-For` (Express "trust proxy"): `false` (the socket address is the
   * client), `true` (any proxy), a hop count, or a comma list of proxy addresses/CIDRs. Decides the
   * client address of the rate limits and in the logs.
   */
  @Matches(/^(true|false|\d{1,2}|[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*)$/, {
    message: 'TRUST_PROXY must be true, false, a hop count or a comma list of addresses',
  })
  TRUST_PROXY = 'false';

  /**
   * `mysql://user:password@host:3306/dbname` or `mariadb://…` selects MySQL/MariaDB (no `?options`).
   * Unset: embedded SQLite. Or `DATABASE_URL_FILE` ([secrets from files](#secrets-from-files)).
   */
  @IsOptional()
  // No ?options: TypeORM's URL parsing drops them, and a silently ignored ?ssl=… is worse than an error.
  @Matches(/^(mysql|mariadb):\/\/[^/?#]+\/[^/?#]+$/, {
    message: 'DATABASE_URL must look like mysql://user:password@host:3306/dbname (without ?options; TLS is set with DATABASE_TLS)',
  })
  DATABASE_URL?: string;

  /**
   * TLS to MySQL: `off`, `verify-ca` or `verify-full` (see [TLS to the
   * database](deployment.md#tls-to-the-database)).
   */
  // No "encrypted but unverified" mode: anyone on the path could then pose as the database.
  @ValidateIf((env: EnvironmentVariables) => env.DATABASE_TLS !== 'off')
  @ValidateBy({
    name: 'tlsNeedsHostName',
    validator: {
      // mysql2 checks an IP address host against the name "localhost" (it sends no SNI for IPs), so verify-full cannot work by IP.
      validate: (_value, args) =>
        (args?.object as EnvironmentVariables).DATABASE_TLS !== 'verify-full' || !isIP(databaseHost(args?.object as EnvironmentVariables) ?? ''),
      defaultMessage: () =>
        'DATABASE_TLS=verify-full checks the host name of DATABASE_URL against the certificate: connect by the name the certificate lists, or use verify-ca with an IP address',
    },
  })
  @ValidateBy({
    name: 'tlsNeedsMysql',
    validator: {
      validate: (_value, args) => Boolean((args?.object as EnvironmentVariables).DATABASE_URL),
      defaultMessage: () => 'DATABASE_TLS applies to MySQL only: set DATABASE_URL (or DATABASE_TLS=off for the embedded database)',
    },
  })
  @IsIn(['off', 'verify-ca', 'verify-full'], { message: 'DATABASE_TLS must be off, verify-ca or verify-full' })
  DATABASE_TLS: 'off' | 'verify-ca' | 'verify-full' = 'off';

  /**
   * PEM file of the CA(s) the database server's certificate must be signed by. Unset: Node's public
   * CAs.
   */
  @IsOptional()
  @PemFile('certificate')
  @TlsOn()
  DATABASE_TLS_CA_FILE?: string;

  /** A client certificate and its unencrypted key (PEM), both or neither. */
  @ValidateIf((env: EnvironmentVariables) => env.DATABASE_TLS_CERT_FILE !== undefined || env.DATABASE_TLS_KEY_FILE !== undefined)
  @PemFile('certificate')
  @TlsOn()
  @IsString({ message: 'DATABASE_TLS_CERT_FILE must be set when DATABASE_TLS_KEY_FILE is set' })
  DATABASE_TLS_CERT_FILE?: string;

  /** A client certificate and its unencrypted key (PEM), both or neither. */
  @ValidateIf((env: EnvironmentVariables) => env.DATABASE_TLS_CERT_FILE !== undefined || env.DATABASE_TLS_KEY_FILE !== undefined)
  @ValidateBy({
    name: 'keyMatchesCertificate',
    validator: {
      validate: (value, args) => keyMatchesCertificate(value as string, (args?.object as EnvironmentVariables).DATABASE_TLS_CERT_FILE),
      defaultMessage: () => 'DATABASE_TLS_KEY_FILE is not the private key of the certificate in DATABASE_TLS_CERT_FILE',
    },
  })
  @PemFile('private key')
  @TlsOn()
  @IsString({ message: 'DATABASE_TLS_KEY_FILE must be set when DATABASE_TLS_CERT_FILE is set' })
  DATABASE_TLS_KEY_FILE?: string;

  /**
   * Directory of the SQLite file `plant-store.sqlite` (created if missing). Unused with
   * `DATABASE_URL`.
   */
  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  /** Connections in the MySQL pool (1–1000). */
  @IntegerSetting(1, 1000)
  DB_POOL_SIZE = 10;

  /**
   * MySQL: longest time to open a connection, and to wait for a free one in the pool; then 503.
   */
  @IntegerSetting(100, 60_000)
  DB_CONNECT_TIMEOUT_MS = 3000;

  /**
   * MySQL: a query running longer is abandoned and its connection closed; the request gets 503.
   */
  @IntegerSetting(100, 600_000)
  DB_QUERY_TIMEOUT_MS = 5000;

  /**
   * How long the server retries an unreachable database at start-up (every 2 s) before it exits with
   * code 1.
   */
  @IntegerSetting(0, 3_600_000)
  DB_STARTUP_TIMEOUT_MS = 60_000;

  /** Apply pending migrations when the server or the command line starts. */
  @BooleanSetting()
  MIGRATIONS_RUN = true;

  /** Serve Swagger UI (`/docs`) and the OpenAPI document (`/docs-json`), production included. */
  @BooleanSetting()
  DOCS_ENABLED = true;

  /**
   * Serve the operator's console (`/console`): static files only, a client of the /admin API that
   * signs in with an admin token. Off, `/console` answers 404 like any unknown path.
   */
  @BooleanSetting()
  CONSOLE_ENABLED = true;

  /**
   * Embedded SQLite only: on the first start (no stores and no tokens yet) load the demo stores and
   * log a token for team `demo`. Never on MySQL.
   */
  @BooleanSetting()
  DEMO_SEED = true;

  /**
   * How often each instance checks whether the store list changed elsewhere and reloads its
   * in-memory search index (250–3600000). See [Store
   * search](operations.md#store-search-at-chain-scale).
   */
  @IntegerSetting(250, 3_600_000)
  STORE_INDEX_REFRESH_MS = 5000;

  /**
   * How often each instance deletes `Idempotency-Key`s older than 24 hours, in batches of 1000
   * (1000–86400000). See [Idempotent creates](api.md#idempotent-creates).
   */
  @IntegerSetting(1000, 86_400_000)
  IDEMPOTENCY_CLEANUP_INTERVAL_MS = 600_000;

  /**
   * Lowest level logged: `fatal`, `error`, `warn`, `log`, `debug`, `verbose`. The demo token is
   * logged at `warn`, so it shows unless the level is `error` or `fatal`.
   */
  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';

  /**
   * How log lines are written: `json` (one JSON object per line, for a log collector), `pretty`
   * (one human-readable line each, coloured on a terminal; the demo token's curl line pastes as
   * printed) or `auto`: `pretty` when standard output is a terminal, `json` otherwise.
   */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: 'auto' | 'json' | 'pretty' = 'auto';

  /**
   * Lifetime of a token issued without `--expires-in-days` (0–3650; `0`: such tokens never expire).
   */
  @IntegerSetting(0, 3650)
  TOKEN_DEFAULT_TTL_DAYS = 90;

  /**
   * How long an instance reuses a token look-up (0–5; `0`: a database look-up on every request). A
   * revocation reaches every instance within this time.
   */
  @IntegerSetting(0, 5)
  TOKEN_CACHE_SECONDS = 2;

  /**
   * Failed authentications per client address per minute; past it, every request from that address
   * gets 429 until the minute is over (`0`: no limit).
   */
  @IntegerSetting(0, 1_000_000)
  AUTH_FAILURE_LIMIT_PER_MINUTE = 30;

  /** Requests per token (or SSO subject) per minute before 429 (`0`: no limit). */
  @IntegerSetting(0, 100_000_000)
  TOKEN_RATE_LIMIT_PER_MINUTE = 60_000;

  /**
   * `redis://[:password@]host:6379[/db]` (`rediss://` for TLS): the rate-limit counters live there,
   * shared by every instance. Unset: in memory, per instance. Or `REDIS_URL_FILE`.
   */
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must look like redis://host:6379 (or rediss:// for TLS)' })
  REDIS_URL?: string;

  /** Prefix of every Redis key the service writes. */
  @IsString()
  @MinLength(1)
  REDIS_KEY_PREFIX = 'plant-store:';

  /** Single sign-on: also accept JWT access tokens of this OIDC issuer (its `iss`, exactly). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https', 'http'] }, { message: 'OIDC_ISSUER must be an http(s) URL' })
  OIDC_ISSUER?: string;

  /** Required `aud` of those JWTs; must be set with `OIDC_ISSUER`. */
  @ValidateIf((env: EnvironmentVariables) => env.OIDC_ISSUER !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_AUDIENCE must be set when OIDC_ISSUER is set' })
  OIDC_AUDIENCE?: string;

  /**
   * The issuer's key set. Unset: the `jwks_uri` of `<OIDC_ISSUER>/.well-known/openid-configuration`.
   */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https', 'http'] }, { message: 'OIDC_JWKS_URL must be an http(s) URL' })
  OIDC_JWKS_URL?: string;

  /** The JWT claim that names the caller's team (a team slug). */
  @IsString()
  @MinLength(1)
  OIDC_TEAM_CLAIM = 'team';

  /**
   * A JWT claim that makes its holder an administrator (scope `admin`: the /admin routes only), e.g.
   * `roles`; with `OIDC_ADMIN_VALUE`. The claim may be a string (space-separated values) or an array.
   */
  @ValidateIf((env: EnvironmentVariables) => env.OIDC_ADMIN_VALUE !== undefined || env.OIDC_ADMIN_CLAIM !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_ADMIN_CLAIM must be set when OIDC_ADMIN_VALUE is set' })
  OIDC_ADMIN_CLAIM?: string;

  /** The value of `OIDC_ADMIN_CLAIM` that grants the admin scope, e.g. `plant-store-admin`. */
  @ValidateIf((env: EnvironmentVariables) => env.OIDC_ADMIN_VALUE !== undefined || env.OIDC_ADMIN_CLAIM !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_ADMIN_VALUE must be set when OIDC_ADMIN_CLAIM is set' })
  OIDC_ADMIN_VALUE?: string;

  /**
   * A file holding one token (`pst_…`, as `tokens create` prints it) that the service accepts as an
   * admin token, for container platforms where nobody runs the command line: mount it from a secret.
   * Only its digest is kept; audit lines name it `admin-file`. An unreadable file or one that holds no
   * well-formed token stops start-up.
   */
  @IsOptional()
  @ValidateBy({
    name: 'adminTokenFile',
    validator: {
      validate: (value) => adminTokenProblem(value as string) === undefined,
      defaultMessage: (args) => `ADMIN_TOKEN_FILE: ${adminTokenProblem(args?.value as string)}`,
    },
  })
  ADMIN_TOKEN_FILE?: string;

  /**
   * On `SIGTERM`: how long `/health/ready` answers 503 while requests are still served, before the
   * listener closes.
   */
  @IntegerSetting(0, 600_000)
  SHUTDOWN_DRAIN_MS = 5000;

  /**
   * After the listener closed: how long in-flight requests may still run before their connections
   * are cut, then, in what is left of it, how long the change-event relay's holder publishes what
   * waits before it hands its lease on.
   */
  @IntegerSetting(0, 600_000)
  SHUTDOWN_GRACE_MS = 10_000;

  /** Largest request body (2–10485760 bytes); larger → 413. */
  @IntegerSetting(2, 10_485_760)
  BODY_LIMIT_BYTES = DEFAULT_BODY_LIMIT_BYTES;

  /**
   * Largest store list `POST /admin/stores.csv` takes, in bytes; larger → 413. The upload is
   * streamed to a temporary file, so memory does not grow with it; the JSON body limit above stays.
   */
  @IntegerSetting(1024, 1_073_741_824)
  STORE_IMPORT_MAX_BYTES = 52_428_800;

  /**
   * The share of the catalogue, in percent, that an import's `prune` may remove without the
   * caller stating how many removals it expects (`expected_removals`, `--expect-removals`); more
   * is refused with 409 and nothing is written. 0: every removal must be confirmed; 100: never asked.
   */
  @IntegerSetting(0, 100)
  STORE_IMPORT_MAX_PRUNE_PERCENT = 10;

  /**
   * NATS server(s) with JetStream that change events are published to (`nats://host:4222`, a comma
   * list for a cluster; credentials in the URL). Unset: no events, no outbox rows. Or
   * `EVENTS_NATS_URL_FILE`. See [Change events](events.md).
   */
  @IsOptional()
  @Matches(/^(nats|tls):\/\/\S+$/, { message: 'EVENTS_NATS_URL must look like nats://host:4222 (a comma list for several servers)' })
  EVENTS_NATS_URL?: string;

  /** The JetStream stream of the events, created if missing with the subjects `<EVENTS_SUBJECT_PREFIX>.>`. */
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'EVENTS_STREAM must be 1 to 64 letters, digits, _ or -' })
  EVENTS_STREAM = 'PLANTSTORE';

  /** First token of every event subject: `plantstore.<team>.plant.created`, `plantstore.stores.changed`. */
  @Matches(/^[a-z0-9_-]{1,32}$/, { message: 'EVENTS_SUBJECT_PREFIX must be 1 to 32 lowercase letters, digits, _ or -' })
  EVENTS_SUBJECT_PREFIX = 'plantstore';

  /**
   * Most events waiting in the outbox (the broker unreachable): at this many, writes that would add
   * one are refused with 503 rather than dropping events.
   */
  @IntegerSetting(100, 100_000_000)
  EVENTS_OUTBOX_MAX_ROWS = 100_000;

  /** How often the relay looks for events to publish (it also starts at once after a write of this instance). */
  @IntegerSetting(50, 60_000)
  EVENTS_RELAY_INTERVAL_MS = 1000;

  /**
   * The engine that places a customer's street address (`POST /locations/nearest` measures from
   * it): `off` (the ZIP code's point, nothing leaves the machine), `postgis` (PostGIS's TIGER
   * geocoder), `census` (US Census Geocoder), `nominatim` or `pelias`. See [Geocoding](geocoding.md).
   */
  @IsIn(['off', 'postgis', 'census', 'nominatim', 'pelias'], { message: 'GEOCODER must be off, postgis, census, nominatim or pelias' })
  GEOCODER: 'off' | 'postgis' | 'census' | 'nominatim' | 'pelias' = 'off';

  /**
   * The engine's address: for `postgis` a PostgreSQL URL (`postgres://user:password@host:5432/gis`)
   * of the database where `postgis_tiger_geocoder` is loaded; for the others the base URL their
   * documentation gives (`https://geocoding.geo.census.gov`, `https://nominatim.example.org`,
   * `http://pelias:4000`). Required unless `GEOCODER=off`. Or `GEOCODER_URL_FILE`.
   */
  @ValidateIf((env: EnvironmentVariables) => env.GEOCODER !== 'off' || env.GEOCODER_URL !== undefined)
  @ValidateBy({
    name: 'isGeocoderUrl',
    validator: {
      validate: (value, args) => geocoderUrlProblem((args?.object as EnvironmentVariables).GEOCODER, value) === undefined,
      defaultMessage: (args) => geocoderUrlProblem((args?.object as EnvironmentVariables).GEOCODER, args?.value) ?? '',
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

  /**
   * Comma list of browser origins allowed to call the API
   * (`https://shop.example.com,http://localhost:8080`). Unset: CORS off, no CORS headers.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*$/, {
    message: 'CORS_ORIGINS must be a comma list of origins such as https://shop.example.com,http://localhost:8080',
  })
  CORS_ORIGINS?: string;
}

/** Used by ConfigModule.validate and by the TypeORM CLI's data source: one reading of the environment. */
export function validateEnvironment(raw: Record<string, unknown>): EnvironmentVariables {
  // Empty strings count as unset, the way a blank line in .env is usually meant.
  const present = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''));
  const env = plainToInstance(EnvironmentVariables, present, { exposeDefaultValues: true });
  const errors = validateSync(env, { skipMissingProperties: false, stopAtFirstError: true });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}=${shown(e.property, e.value)}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return env;
}

/** Settings that may carry a password, hence may come from a file (`<NAME>_FILE`) and are never echoed whole. */
export const SECRET_SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'EVENTS_NATS_URL', 'GEOCODER_URL'] as const;

/** What is wrong with GEOCODER_URL for this engine, if anything. */
function geocoderUrlProblem(engine: EnvironmentVariables['GEOCODER'], value: unknown): string | undefined {
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

/** A URL's password is replaced in error messages, which end up in logs. */
function shown(name: string, value: unknown): string {
  const text = JSON.stringify(value);
  return (SECRET_SETTINGS as readonly string[]).includes(name) && typeof text === 'string' ? text.replace(/(\/\/[^/:@]*:)[^/@]*@/, '$1***@') : text;
}

/**
 * `<NAME>_FILE` names a file holding the value of a secret setting, the way container platforms
 * mount secrets (Docker/Kubernetes secrets): the file's content, its trailing newline trimmed,
 * becomes NAME in `env`, and NAME_FILE is removed. Both set, an unreadable or an empty file stop start-up.
 */
export function readSecretFiles(env: Record<string, string | undefined>): void {
  const problems: string[] = [];
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: ${name} and ${name}_FILE are both set; set one of them`);
      continue;
    }
    let value: string;
    try {
      value = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: cannot read the file (${(error as Error).message})`);
      continue;
    }
    if (value === '') {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: the file is empty`);
      continue;
    }
    env[name] = value;
    delete env[`${name}_FILE`];
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}

/** Why ADMIN_TOKEN_FILE cannot serve, or undefined when it can. */
function adminTokenProblem(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    return `cannot read the file (${(error as Error).message})`;
  }
  return isWellFormedToken(text) ? undefined : 'the file must hold one token as `tokens create` prints it (pst_ and 49 letters and digits)';
}

/** The admin token of ADMIN_TOKEN_FILE (checked at start-up), or undefined. */
export function readAdminToken(path: string | undefined): string | undefined {
  return path ? readFileSync(path, 'utf8').replace(/\r?\n$/, '') : undefined;
}

function databaseHost(env: EnvironmentVariables): string | undefined {
  if (!env.DATABASE_URL) return undefined;
  try {
    // WHATWG URL keeps IPv6 hosts in brackets.
    return new URL(env.DATABASE_URL).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

/** Why a PEM file cannot serve, or undefined when it can. */
function pemFileProblem(path: string, kind: 'certificate' | 'private key'): string | undefined {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    return `cannot read the file (${(error as Error).message})`;
  }
  try {
    if (kind === 'certificate') new X509Certificate(pem);
    else createPrivateKey(pem);
    return undefined;
  } catch (error) {
    const encrypted = kind === 'private key' && /ENCRYPTED/.test(pem.toString('latin1'));
    return encrypted ? 'the private key is encrypted; give an unencrypted key (mounted as a secret)' : `not a PEM ${kind} (${(error as Error).message})`;
  }
}

function PemFile(kind: 'certificate' | 'private key') {
  return ValidateBy({
    name: 'pemFile',
    validator: {
      validate: (value) => typeof value === 'string' && pemFileProblem(value, kind) === undefined,
      defaultMessage: (args?: ValidationArguments) => `${args?.property}: ${pemFileProblem(String(args?.value), kind)}`,
    },
  });
}

/** A TLS file with DATABASE_TLS=off would be silently ignored: an error instead. */
function TlsOn() {
  return ValidateBy({
    name: 'tlsOn',
    validator: {
      validate: (_value, args) => (args?.object as EnvironmentVariables).DATABASE_TLS !== 'off',
      defaultMessage: (args?: ValidationArguments) => `${args?.property} is set but DATABASE_TLS is off: set DATABASE_TLS=verify-full (or verify-ca)`,
    },
  });
}

function keyMatchesCertificate(keyFile: string, certFile: string | undefined): boolean {
  if (certFile === undefined) return true;
  try {
    return new X509Certificate(readFileSync(certFile)).checkPrivateKey(createPrivateKey(readFileSync(keyFile)));
  } catch {
    return false;
  }
}

/**
 * Reads `.env` into the environment (variables already set win; skipped under NODE_ENV=test),
 * then the secret files (`<NAME>_FILE`), and validates it. The server, the command line and the
 * TypeORM CLI all start here. The secrets go into process.env, as @nestjs/config reads them from there too.
 */
export function loadEnvironment(): EnvironmentVariables {
  if (process.env.NODE_ENV !== 'test') {
    try {
      process.loadEnvFile();
    } catch {
      // No .env file: the environment alone.
    }
  }
  readSecretFiles(process.env);
  return validateEnvironment(process.env);
}
