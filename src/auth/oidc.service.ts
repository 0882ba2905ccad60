import { Inject, Injectable, Logger, ServiceUnavailableException } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { Caller, TokenScope } from '../common/caller.js';
import { authConfig } from './auth.config.js';
import { TEAM_SLUG } from '../tokens/tokens.service.js';

/** Asymmetric signatures only: never `none`, never a shared secret (HS*). */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Leeway for `exp` and `nbf` between our clock and the issuer's. */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** An unknown `kid` fetches the key set again at most this often (the issuer rotated its keys, or someone is probing). */
const JWKS_COOLDOWN_MS = 5_000;
const FETCH_TIMEOUT_MS = 5_000;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Accepts JWT access tokens of one OIDC issuer (enterprise single sign-on) when OIDC_ISSUER
 * is set. jose checks the signature against the issuer's JWKS (fetched, cached, fetched again
 * for an unknown key id), `iss`, `aud`, `exp` and `nbf`.
 */
@Injectable()
export class OidcService {
  private readonly logger = new Logger('OIDC');
  private readonly issuer?: string;
  private readonly audience?: string;
  private readonly teamClaim: string;
  private readonly jwksUrl?: string;
  private readonly adminClaim?: string;
  private readonly adminValue?: string;
  private keySet?: Promise<JWTVerifyGetKey>;

  constructor(@Inject(authConfig.KEY) auth: ConfigType<typeof authConfig>) {
    this.issuer = auth.OIDC_ISSUER;
    this.audience = auth.OIDC_AUDIENCE;
    this.teamClaim = auth.OIDC_TEAM_CLAIM;
    this.jwksUrl = auth.OIDC_JWKS_URL;
    this.adminClaim = auth.OIDC_ADMIN_CLAIM;
    this.adminValue = auth.OIDC_ADMIN_VALUE;
  }

  get enabled(): boolean {
    return this.issuer !== undefined;
  }

  /** Whether this looks like a JWT this service should verify (rather than an opaque token). */
  accepts(token: string): boolean {
    return this.enabled && JWT_SHAPE.test(token);
  }

  /**
   * The caller of a valid JWT, or null for any token that is not (bad signature, unknown key,
   * wrong issuer or audience, expired, no usable team). Throws 503 when the issuer's keys
   * cannot be fetched: that says nothing about the token.
   */
  async authenticate(token: string): Promise<Caller | null> {
    if (!this.accepts(token)) return null;
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await this.keys(), {
        issuer: this.issuer,
        audience: this.audience,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError && !(error instanceof errors.JWKSTimeout) && !(error instanceof errors.JWKSInvalid)) return null;
      this.keySet = undefined;
      this.logger.warn(`cannot verify SSO tokens: ${error instanceof Error ? error.message : String(error)}`);
      throw new ServiceUnavailableException('the identity provider cannot be reached, try again shortly');
    }
    const team = payload[this.teamClaim];
    if (typeof team !== 'string' || !TEAM_SLUG.test(team) || typeof payload.sub !== 'string') return null;
    // An administrator by the identity provider's word: the admin scope, and nothing of a team's.
    if (this.adminClaim !== undefined && this.adminValue !== undefined) {
      const claim = payload[this.adminClaim];
      const values = Array.isArray(claim) ? claim : typeof claim === 'string' ? claim.split(' ') : [];
      if (values.includes(this.adminValue)) return { tokenId: `oidc:${payload.sub}`, team, scopes: ['admin'] };
    }
    const granted = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
    // `admin` is never granted by the scope claim: an identity provider's scope names are not ours.
    const scopes = (['read', 'write'] as TokenScope[]).filter((s) => granted.includes(s) || (s === 'read' && granted.includes('write')));
    return { tokenId: `oidc:${payload.sub}`, team, scopes };
  }

  /** The key set, from OIDC_JWKS_URL or the issuer's discovery document (fetched once, again after a failure). */
  private keys(): Promise<JWTVerifyGetKey> {
    this.keySet ??= this.discoverJwksUrl().then((url) =>
      createRemoteJWKSet(new URL(url), { cooldownDuration: JWKS_COOLDOWN_MS, timeoutDuration: FETCH_TIMEOUT_MS }),
    );
    return this.keySet;
  }

  private async discoverJwksUrl(): Promise<string> {
    if (this.jwksUrl) return this.jwksUrl;
    const url = `${this.issuer!.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    const document = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (document.issuer !== this.issuer) throw new Error(`${url} names issuer ${String(document.issuer)}, not ${this.issuer}`);
    if (typeof document.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
    return document.jwks_uri;
  }
}
