import { plainToInstance, Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength, validateSync } from 'class-validator';

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
