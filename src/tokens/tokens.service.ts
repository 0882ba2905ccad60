import { timingSafeEqual } from 'node:crypto';
import { BadRequestException, ConflictException, Inject, Injectable, Logger, NotFoundException, type OnModuleDestroy } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { MoreThan, Repository } from 'typeorm';
import { scopesOf, TOKEN_SCOPES, type Caller, type TokenScope } from '../common/caller.js';
import { displayPrefix, generateToken, hashToken, isWellFormedToken } from '../config/token-format.js';
import { tokensConfig } from './tokens.config.js';
import { retryWriteConflicts } from '../database/database-errors.js';
import { Metrics } from '../metrics/metrics.js';
import { ApiToken } from './api-token.entity.js';

/** A team is a lowercase slug such as `acme` (contract §2). */
export const TEAM_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Uses are collected in memory and written this often, not on every request. */
export const LAST_USED_FLUSH_MS = 15_000;
/** Enough for every active token of a large deployment; beyond it the least recent is looked up again. */
const CACHE_ENTRIES = 50_000;

export interface CreateTokenOptions {
  team: string;
  name?: string;
  /** Unset: TOKEN_DEFAULT_TTL_DAYS (0 there: no expiry). */
  expiresInDays?: number;
  scope?: TokenScope;
}

interface CachedToken {
  id: number;
  team: string;
  scope: TokenScope;
  expiresAt: number | null;
}

/** The bearer of ADMIN_TOKEN_FILE's token, as audit lines and rate limits know it. */
export const ADMIN_FILE_CALLER: Caller = { tokenId: 'admin-file', team: 'admin', scopes: ['admin'] };

/** Rotate lost its race: the transaction rolls back. */
class NotClaimed extends Error {}

const alreadyRotated = (token: ApiToken) => new ConflictException(`token ${token.id} was already rotated; its replacement is token ${token.replacedBy}`);

function checkLifetime(days: number | undefined): void {
  if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650)) {
    throw new BadRequestException('expires-in-days must be a whole number from 1 to 3650');
  }
}

@Injectable()
export class TokensService implements OnModuleDestroy {
  private readonly logger = new Logger('Tokens');
  /**
   * Valid tokens by digest, each kept TOKEN_CACHE_SECONDS (≤ 5) from its database read and
   * never extended by use, so a revocation reaches every instance within that time (contract §2).
   * Unknown tokens are not cached: a new token works at once, and guessing is rate limited.
   */
  private readonly cache: LRUCache<string, CachedToken> | null;
  /**
   * Database reads in flight by digest: when a cached token expires under load, every request
   * holding it misses at once (one per connection), and they all wait for the one read.
   */
  private readonly reads = new Map<string, Promise<CachedToken | null>>();
  /** The cache's counter by result, bound once: authenticate runs on every request. */
  private readonly lookups: Record<'hit' | 'miss' | 'shared', { inc(): void }>;
  /** Token id → time of its latest use not yet written. */
  private pendingUses = new Map<number, Date>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly defaultTtlDays: number;
  /** Digest of ADMIN_TOKEN_FILE's token: a caller with scope admin that no row stands for. */
  private readonly adminFileDigest: Buffer | null;

  constructor(
    @InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>,
    @Inject(tokensConfig.KEY) settings: ConfigType<typeof tokensConfig>,
    private readonly metrics: Metrics,
  ) {
    this.defaultTtlDays = settings.TOKEN_DEFAULT_TTL_DAYS;
    const adminToken = settings.ADMIN_TOKEN_FILE?.text;
    this.adminFileDigest = adminToken === undefined ? null : Buffer.from(hashToken(adminToken), 'hex');
    const cacheSeconds = settings.TOKEN_CACHE_SECONDS;
    this.cache = cacheSeconds > 0 ? new LRUCache({ max: CACHE_ENTRIES, ttl: cacheSeconds * 1000, ttlAutopurge: false }) : null;
    this.lookups = {
      hit: metrics.tokenCacheLookups.labels('hit'),
      miss: metrics.tokenCacheLookups.labels('miss'),
      shared: metrics.tokenCacheLookups.labels('shared'),
    };
    this.flushTimer = setInterval(() => void this.flushLastUsed(), LAST_USED_FLUSH_MS).unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.flushTimer);
    // Runs before the database connection closes (Nest destroys modules before shutting them down).
    await this.flushLastUsed();
  }

  /** Returns the token itself: the only time it exists outside the caller's hands. */
  async create(options: CreateTokenOptions): Promise<{ token: string; record: ApiToken }> {
    const { token, fields } = this.newToken(options);
    // A fresh entity each try: save() fills in the id of the one it wrote.
    const record = await retryWriteConflicts(() => this.tokens.save(this.tokens.create(fields)));
    return { token, record };
  }

  /** A new token and the row that stands for it, after the checks every issued token passes. */
  private newToken({ team, name, expiresInDays, scope = 'write' }: CreateTokenOptions) {
    if (!TEAM_SLUG.test(team)) {
      throw new BadRequestException(`team must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters), got "${team}"`);
    }
    if (name !== undefined && (name.length === 0 || name.length > 100)) throw new BadRequestException('name must be 1 to 100 characters');
    checkLifetime(expiresInDays);
    if (!TOKEN_SCOPES.includes(scope)) throw new BadRequestException(`scope must be ${TOKEN_SCOPES.join(' or ')}, got "${scope}"`);
    const days = expiresInDays ?? (this.defaultTtlDays || undefined);
    const token = generateToken();
    const fields = {
      team,
      name: name ?? null,
      scope,
      prefix: displayPrefix(token),
      tokenHash: hashToken(token),
      expiresAt: days === undefined ? null : new Date(Date.now() + days * DAY_MS),
    };
    return { token, fields };
  }

  list(team?: string): Promise<ApiToken[]> {
    return this.tokens.find({ where: team === undefined ? {} : { team }, order: { id: 'ASC' } });
  }

  /** One page of tokens by id, as GET /plants pages: `nextAfter` is set when more follow. */
  async page({ team, limit, after = 0 }: { team?: string; limit: number; after?: number }): Promise<{ tokens: ApiToken[]; nextAfter?: number }> {
    const tokens = await this.tokens.find({ where: { ...(team === undefined ? {} : { team }), id: MoreThan(after) }, order: { id: 'ASC' }, take: limit + 1 });
    if (tokens.length <= limit) return { tokens };
    tokens.length = limit;
    return { tokens, nextAfter: tokens[limit - 1].id };
  }

  /** The token with this id, or NotFoundException. */
  get(id: number): Promise<ApiToken> {
    return this.find(id);
  }

  async revoke(id: number): Promise<ApiToken> {
    const record = await this.find(id);
    if (!record.revokedAt) {
      record.revokedAt = new Date();
      await this.tokens.update({ id }, { revokedAt: record.revokedAt });
    }
    this.evict(id);
    return record;
  }

  /**
   * Issues a replacement with the same team, name and scope, and lets the old token expire
   * after `graceMs` (sooner if it already expires sooner), so that clients can switch over.
   * A token is replaced once: the replacement is issued and recorded on the old token in one
   * transaction, on the condition that the old one has no replacement yet, so of two
   * concurrent rotates exactly one succeeds and the other gets 409 with nothing written.
   */
  async rotate(id: number, graceMs: number, expiresInDays?: number): Promise<{ token: string; record: ApiToken; old: ApiToken }> {
    checkLifetime(expiresInDays);
    const old = await this.find(id);
    const now = Date.now();
    if (old.revokedAt) throw new ConflictException(`token ${id} is revoked; issue a new one with tokens create`);
    if (old.expiresAt && old.expiresAt.getTime() <= now) throw new ConflictException(`token ${id} has expired; issue a new one with tokens create`);
    if (old.replacedBy !== null) throw alreadyRotated(old);
    const graceEnd = new Date(now + graceMs);
    const expiresAt = old.expiresAt && old.expiresAt <= graceEnd ? old.expiresAt : graceEnd;
    const issued = this.newToken({ team: old.team, name: old.name ?? undefined, scope: old.scope, expiresInDays });
    const record = await retryWriteConflicts(() =>
      this.tokens.manager.transaction(async (manager): Promise<ApiToken | null> => {
        const saved = await manager.save(manager.create(ApiToken, issued.fields));
        const claimed = await manager
          .createQueryBuilder()
          .update(ApiToken)
          .set({ replacedBy: saved.id, expiresAt })
          .where('id = :id AND replaced_by IS NULL AND revoked_at IS NULL', { id })
          .execute();
        // Replaced or revoked meanwhile: the replacement is rolled back, and the two told apart below.
        if (!claimed.affected) throw new NotClaimed();
        return saved;
      }),
    ).catch((error: unknown) => {
      if (error instanceof NotClaimed) return null;
      throw error;
    });
    if (!record) {
      // Read after the rollback: inside it, MySQL's snapshot would still show the old state.
      const current = await this.find(id);
      if (current.replacedBy !== null) throw alreadyRotated(current);
      throw new ConflictException(`token ${id} is revoked; issue a new one with tokens create`);
    }
    Object.assign(old, { replacedBy: record.id, expiresAt });
    this.evict(id);
    return { token: issued.token, record, old };
  }

  /**
   * The caller an opaque token stands for, or null for any token that is malformed,
   * unknown, expired or revoked: all four get the same answer (contract §2).
   */
  async authenticate(token: string): Promise<Caller | null> {
    const hash = hashToken(token);
    if (this.adminFileDigest && timingSafeEqual(this.adminFileDigest, Buffer.from(hash, 'hex'))) return ADMIN_FILE_CALLER;
    let entry: CachedToken | null | undefined = this.cache?.get(hash);
    if (entry) this.lookups.hit.inc();
    // Shape and checksum only before the database: a cached token passed them when it was read.
    else if (!isWellFormedToken(token)) return null;
    else entry = await this.read(hash);
    if (!entry) return null;
    const now = Date.now();
    if (entry.expiresAt !== null && entry.expiresAt <= now) return null;
    this.pendingUses.set(entry.id, new Date(now));
    return { tokenId: entry.id, team: entry.team, scopes: scopesOf(entry.scope) };
  }

  /**
   * Writes the collected `last_used_at` times: one UPDATE per token used since the last
   * flush, instead of one per request. Bookkeeping only: a failure is logged and the times
   * are kept for the next flush.
   */
  async flushLastUsed(): Promise<void> {
    if (this.pendingUses.size === 0) return;
    const batch = this.pendingUses;
    this.pendingUses = new Map();
    try {
      // Instances flush the same busy tokens: on a cluster their transactions conflict.
      await retryWriteConflicts(() =>
        this.tokens.manager.transaction(async (manager) => {
          for (const [id, usedAt] of batch) await manager.update(ApiToken, { id }, { lastUsedAt: usedAt });
        }),
      );
    } catch (error) {
      for (const [id, usedAt] of batch) if (!this.pendingUses.has(id)) this.pendingUses.set(id, usedAt);
      this.logger.warn(`could not record token use: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async find(id: number): Promise<ApiToken> {
    const record = await this.tokens.findOneBy({ id });
    if (!record) throw new NotFoundException(`token ${id} not found`);
    return record;
  }

  /**
   * The token's row, read once for every request that asks while the read is in flight (see
   * `reads`); a valid token is cached. Unknown and revoked tokens give null and are not cached.
   */
  private read(hash: string): Promise<CachedToken | null> {
    const pending = this.reads.get(hash);
    if (pending) {
      this.lookups.shared.inc();
      return pending;
    }
    this.lookups.miss.inc();
    const read = this.tokens
      .findOne({ select: { id: true, team: true, scope: true, expiresAt: true, revokedAt: true }, where: { tokenHash: hash } })
      .then((record) => {
        if (!record || record.revokedAt) return null;
        const entry = { id: record.id, team: record.team, scope: record.scope, expiresAt: record.expiresAt?.getTime() ?? null };
        // A revocation made here while this read was in flight dropped it (evict): its row may predate the revocation.
        if (this.reads.get(hash) === read) this.cache?.set(hash, entry);
        return entry;
      })
      .finally(() => {
        if (this.reads.get(hash) === read) this.reads.delete(hash);
      });
    this.reads.set(hash, read);
    return read;
  }

  /** Revocations made in this process take effect here at once; other instances within the cache time. */
  private evict(id: number): void {
    // A read in flight may have started before the revocation: later requests read again.
    this.reads.clear();
    if (!this.cache) return;
    for (const [hash, entry] of this.cache.entries()) if (entry.id === id) this.cache.delete(hash);
  }
}
