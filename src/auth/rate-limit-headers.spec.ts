import { rateLimit, rateLimitPolicy } from './rate-limit-headers.js';

describe('RateLimit header fields', () => {
  const quota = { limit: 600, remaining: 599, resetSeconds: 42, limited: false };

  it('RateLimit-Policy names the policy, its quota and its window', () => {
    expect(rateLimitPolicy(quota)).toBe('"per-token";q=600;w=60');
  });

  it('RateLimit gives what is left and when the window resets', () => {
    expect(rateLimit(quota)).toBe('"per-token";r=599;t=42');
    expect(rateLimit({ ...quota, remaining: 0, limited: true })).toBe('"per-token";r=0;t=42');
  });
});
