import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, IsUrl, Matches, MinLength, ValidateIf } from 'class-validator';
import { IntegerSetting, validateSettings } from '../config/environment.js';

/** Who may call: the rate limits (and where their counters live) and single sign-on. */
export class AuthSettings {
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
  @ValidateIf((auth: AuthSettings) => auth.OIDC_ISSUER !== undefined)
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
  @ValidateIf((auth: AuthSettings) => auth.OIDC_ADMIN_VALUE !== undefined || auth.OIDC_ADMIN_CLAIM !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_ADMIN_CLAIM must be set when OIDC_ADMIN_VALUE is set' })
  OIDC_ADMIN_CLAIM?: string;

  /** The value of `OIDC_ADMIN_CLAIM` that grants the admin scope, e.g. `plant-store-admin`. */
  @ValidateIf((auth: AuthSettings) => auth.OIDC_ADMIN_VALUE !== undefined || auth.OIDC_ADMIN_CLAIM !== undefined)
  @MinLength(1)
  @IsString({ message: 'OIDC_ADMIN_VALUE must be set when OIDC_ADMIN_CLAIM is set' })
  OIDC_ADMIN_VALUE?: string;
}

export const authConfig = registerAs('auth', () => validateSettings(AuthSettings));
