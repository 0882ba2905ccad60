import { registerAs } from '@nestjs/config';
import { IsIn, IsOptional, IsString, Matches, MinLength } from 'class-validator';
import { BooleanSetting, IntegerSetting, validateSettings } from '../config/environment.js';

/** The contract's body limit: 16 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 16_384;

/** The HTTP server: where it listens, what it serves, whom it believes, how it stops. */
export class ServerSettings {
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
   * Whether to believe `X-Forwarded-For` (Express "trust proxy"): `false` (the socket address is the
   * client), `true` (any proxy), a hop count, or a comma list of proxy addresses/CIDRs. Decides the
   * client address of the rate limits and in the logs.
   */
  @Matches(/^(true|false|\d{1,2}|[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*)$/, {
    message: 'TRUST_PROXY must be true, false, a hop count or a comma list of addresses',
  })
  TRUST_PROXY = 'false';

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
   * Comma list of browser origins allowed to call the API
   * (`https://shop.example.com,http://localhost:8080`). Unset: CORS off, no CORS headers.
   */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*$/, {
    message: 'CORS_ORIGINS must be a comma list of origins such as https://shop.example.com,http://localhost:8080',
  })
  CORS_ORIGINS?: string;
}

export const serverConfig = registerAs('server', () => validateSettings(ServerSettings));
