import { RATE_LIMIT_WINDOW_SECONDS, type TokenQuota } from './rate-limits.service.js';

/**
 * The per-token limit in the fields of the IETF draft "RateLimit header fields for HTTP"
 * (draft-ietf-httpapi-ratelimit-headers-09 and later): Structured Field lists whose items
 * are the policy's name as a quoted string with parameters. `q` quota and `w` window
 * (seconds) in RateLimit-Policy; `r` remaining quota and `t` seconds until it resets in
 * RateLimit. The failed-authentication limit per address is not reported: it applies
 * before a token is accepted, and its counter is the address's, not the caller's.
 */
export const POLICY_NAME = 'per-token';

export const rateLimitPolicy = ({ limit }: TokenQuota) => `"${POLICY_NAME}";q=${limit};w=${RATE_LIMIT_WINDOW_SECONDS}`;

export const rateLimit = ({ remaining, resetSeconds }: TokenQuota) => `"${POLICY_NAME}";r=${remaining};t=${resetSeconds}`;
