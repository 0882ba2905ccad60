import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, ValidateIf, validateSync } from 'class-validator';

/** "true"/"false" (any case) and nothing else; anything else stays a string so that @IsBoolean names the variable. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : value;
};

/** Whole decimal numbers only: "3000" -> 3000, while "3e3", "30.5" or "abc" stay strings and fail @IsInt. */
const toInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;

/**
 * Every setting the service reads, with its default. `.env.example` lists the same
 * variables; a bad value stops start-up with a message naming the variable.
 */
export class EnvironmentVariables {
  @IsIn(['development', 'production', 'test'])
  NODE_ENV: 'development' | 'production' | 'test' = 'development';

  // class-validator runs the decorator nearest the property first: the type check, then the range.
  @Transform(toInteger)
  @Min(0)
  @Max(65535)
  @IsInt()
  PORT = 3000;

  @IsString()
  @MinLength(1)
  HOST = '0.0.0.0';

  /** Port of the Prometheus metrics listener (GET /metrics, on HOST, never on PORT); 0 turns metrics off. */
  @Transform(toInteger)
  @Min(0)
  @Max(65535)
  @IsInt()
  METRICS_PORT = 9464;

  /**
   * Whether to believe X-Forwarded-For (Express "trust proxy"): false (default, the socket
   * address is the client), true (any proxy), a hop count, or a comma list of proxy addresses/CIDRs.
   */
  @Matches(/^(true|false|\d{1,2}|[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*)$/, { message: 'TRUST_PROXY must be true, false, a hop count or a comma list of addresses' })
  TRUST_PROXY = 'false';

  /** mysql://user:password@host:3306/db (or mariadb://). Unset: embedded SQLite under DATA_DIR. */
  @IsOptional()
  // No ?options: TypeORM's URL parsing drops them, and a silently ignored ?ssl=… is worse than an error.
  @Matches(/^(mysql|mariadb):\/\/[^/?#]+\/[^/?#]+$/, {
    message: 'DATABASE_URL must look like mysql://user:password@host:3306/dbname (without ?options)',
  })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  /** Connections in the MySQL pool. */
  @Transform(toInteger)
  @Min(1)
  @Max(1000)
  @IsInt()
  DB_POOL_SIZE = 10;

  /** mysql2's connect timeout: how long a new connection may take before the request gets a 503. */
  @Transform(toInteger)
  @Min(100)
  @Max(60_000)
  @IsInt()
  DB_CONNECT_TIMEOUT_MS = 3000;

  /** A MySQL query taking longer is abandoned (its connection closed) and the request gets a 503, so none hangs. */
  @Transform(toInteger)
  @Min(100)
  @Max(600_000)
  @IsInt()
  DB_QUERY_TIMEOUT_MS = 5000;

  /** The server retries an unreachable database at start-up for this long, then exits non-zero. */
  @Transform(toInteger)
  @Min(0)
  @Max(3_600_000)
  @IsInt()
  DB_STARTUP_TIMEOUT_MS = 60_000;

  /** Apply pending migrations when the server or the CLI starts. */
  @Transform(toBoolean)
  @IsBoolean()
  MIGRATIONS_RUN = true;

  /** Serve Swagger UI at /docs and the OpenAPI document at /docs-json. */
  @Transform(toBoolean)
  @IsBoolean()
  DOCS_ENABLED = true;

  /** On the embedded database only: load the demo stores and a `demo` token on first start. */
  @Transform(toBoolean)
  @IsBoolean()
  DEMO_SEED = true;

  /**
   * How often (ms) each instance checks whether the store list changed (an import by another
   * instance or the CLI) and reloads its in-memory search index: the staleness bound.
   */
  @Transform(toInteger)
  @Min(250)
  @Max(3_600_000)
  @IsInt()
  STORE_INDEX_REFRESH_MS = 5000;

  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';

  /** Lifetime of a token issued without --expires-in-days, in days; 0: such tokens never expire. */
  @Transform(toInteger)
  @Min(0)
  @Max(3650)
  @IsInt()
  TOKEN_DEFAULT_TTL_DAYS = 90;

  /**
   * How long a token look-up is reused in this process, in seconds (0: look up on every
   * request). At most 5: a revoked token must stop working everywhere within 5 s (contract §2).
   */
  @Transform(toInteger)
  @Min(0)
  @Max(5)
  @IsInt()
  TOKEN_CACHE_SECONDS = 2;

  /** Failed authentications per client address per minute before that address gets 429 (0: no limit). */
  @Transform(toInteger)
  @Min(0)
  @Max(1_000_000)
  @IsInt()
  AUTH_FAILURE_LIMIT_PER_MINUTE = 30;

  /** Authenticated requests per token (or SSO subject) per minute before 429 (0: no limit). */
  @Transform(toInteger)
  @Min(0)
  @Max(100_000_000)
  @IsInt()
  TOKEN_RATE_LIMIT_PER_MINUTE = 60_000;

  /** redis://… : rate-limit counters live there, shared by every instance. Unset: in memory, per instance. */
  @IsOptional()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must look like redis://host:6379 (or rediss:// for TLS)' })
  REDIS_URL?: string;

  /** Prefix of every Redis key the service writes, so that several services can share one Redis. */
  @IsString()
  @MinLength(1)
  REDIS_KEY_PREFIX = 'plant-store:';

  /** OIDC issuer whose JWT access tokens are accepted besides opaque tokens (unset: none). */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https', 'http'] }, { message: 'OIDC_ISSUER must be an http(s) URL' })
  OIDC_ISSUER?: string;

  /** Required `aud` of those JWTs; required when OIDC_ISSUER is set. */
  @ValidateIf((env: EnvironmentVariables) => env.OIDC_ISSUER !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_AUDIENCE must be set when OIDC_ISSUER is set' })
  OIDC_AUDIENCE?: string;

  /** The issuer's key set; unset: the `jwks_uri` of the issuer's /.well-known/openid-configuration. */
  @IsOptional()
  @IsUrl({ require_tld: false, require_protocol: true, protocols: ['https', 'http'] }, { message: 'OIDC_JWKS_URL must be an http(s) URL' })
  OIDC_JWKS_URL?: string;

  /** The JWT claim that names the caller's team. */
  @IsString()
  @MinLength(1)
  OIDC_TEAM_CLAIM = 'team';
  /** After SIGTERM, how long readiness reports 503 while requests are still served, so load balancers stop sending traffic. */
  @Transform(toInteger)
  @Min(0)
  @Max(600_000)
  @IsInt()
  SHUTDOWN_DRAIN_MS = 5000;

  /** After the listener closed, how long in-flight requests may take before their connections are cut. */
  @Transform(toInteger)
  @Min(0)
  @Max(600_000)
  @IsInt()
  SHUTDOWN_GRACE_MS = 10_000;

  /** Largest accepted request body in bytes (contract: 16 KiB). */
  @Transform(toInteger)
  @Min(2)
  @Max(10_485_760)
  @IsInt()
  BODY_LIMIT_BYTES = 16_384;

  /** Comma list of origins allowed to call from a browser (CORS); unset: CORS off. */
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
    const lines = errors.map((e) => `${e.property}=${JSON.stringify(e.value)}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new Error(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return env;
}

/**
 * Reads `.env` into the environment (variables already set win; skipped under NODE_ENV=test)
 * and validates it. The server, the command line and the TypeORM CLI all start here.
 */
export function loadEnvironment(): EnvironmentVariables {
  if (process.env.NODE_ENV !== 'test') {
    try {
      process.loadEnvFile();
    } catch {
      // No .env file: the environment alone.
    }
  }
  return validateEnvironment(process.env);
}
