import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { authConfig } from './auth.config.js';
import { Metrics } from '../metrics/metrics.js';

const WINDOW_SECONDS = 60;

/** Seconds until a limited caller may try again (Retry-After), at least 1. */
const retryAfter = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** A token's standing in the current window of its request limit. */
export interface TokenQuota {
  /** Requests per window. */
  limit: number;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets (at least 1): also the Retry-After of a 429. */
  resetSeconds: number;
  /** Over the limit: the request is refused with 429. */
  limited: boolean;
}

/** The window of every limit, in seconds (RateLimit-Policy's `w`). */
export const RATE_LIMIT_WINDOW_SECONDS = WINDOW_SECONDS;

/**
 * Counters against abuse, per fixed one-minute window: failed authentications per
 * client address, requests per token. With REDIS_URL the counters live in Redis and every
 * instance shares them; without it, or while Redis is unreachable, each instance counts in
 * its own memory (rate-limiter-flexible's insurance limiter), so a Redis outage never stops
 * the service.
 */
@Injectable()
export class RateLimitsService implements OnModuleDestroy {
  private readonly logger = new Logger('RateLimits');
  private readonly redis?: Redis;
  private readonly failures: RateLimiterAbstract | null;
  private readonly requests: RateLimiterAbstract | null;
  private readonly failureLimit: number;
  private readonly requestLimit: number;
  private redisDownSince = 0;

  constructor(
    @Inject(authConfig.KEY) auth: ConfigType<typeof authConfig>,
    private readonly metrics: Metrics,
  ) {
    const url = auth.REDIS_URL;
    const prefix = auth.REDIS_KEY_PREFIX;
    if (url) {
      // No offline queue: while Redis is away a command fails at once and the memory limiter answers.
      this.redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2_000 });
      this.redis.on('error', (error: Error) => this.redisFailed(error));
      this.redis.on('ready', () => {
        this.redisDownSince = 0;
        metrics.redisFallback.set(0);
      });
    }
    const limiter = (name: string, points: number): RateLimiterAbstract | null => {
      if (points === 0) return null;
      const memory = new RateLimiterMemory({ points, duration: WINDOW_SECONDS, keyPrefix: name });
      if (!this.redis) return memory;
      return new RateLimiterRedis({ storeClient: this.redis, points, duration: WINDOW_SECONDS, keyPrefix: `${prefix}${name}`, insuranceLimiter: memory });
    };
    this.failureLimit = auth.AUTH_FAILURE_LIMIT_PER_MINUTE;
    this.failures = limiter('auth-failures', this.failureLimit);
    this.requestLimit = auth.TOKEN_RATE_LIMIT_PER_MINUTE;
    this.requests = limiter('requests', this.requestLimit);
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }

  /** Seconds to wait when this address has used up its failed authentications, else null. */
  async addressBlocked(address: string): Promise<number | null> {
    if (!this.failures) return null;
    const res = await this.failures.get(address);
    if (!res || res.consumedPoints < this.failureLimit) return null;
    this.metrics.rateLimitRejections.inc({ kind: 'auth_failures' });
    return retryAfter(res);
  }

  async recordFailure(address: string): Promise<void> {
    await this.failures?.penalty(address, 1);
  }

  /**
   * Counts one request of a token. Null when tokens are not limited; else where the token
   * stands in the current window, `limited` when it is over its limit.
   */
  async consumeRequest(key: string): Promise<TokenQuota | null> {
    if (!this.requests) return null;
    const quota = (res: RateLimiterRes, limited: boolean): TokenQuota => ({
      limit: this.requestLimit,
      remaining: Math.max(0, res.remainingPoints),
      resetSeconds: retryAfter(res),
      limited,
    });
    try {
      return quota(await this.requests.consume(key), false);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        this.metrics.rateLimitRejections.inc({ kind: 'requests' });
        return quota(rejection, true);
      }
      throw rejection;
    }
  }

  private redisFailed(error: Error): void {
    // ioredis reconnects on its own and reports every attempt: say it once per outage.
    if (this.redisDownSince) return;
    this.redisDownSince = Date.now();
    this.metrics.redisFallback.set(1);
    this.logger.warn(`Redis unreachable, counting rate limits in memory until it is back: ${error.message}`);
  }
}
