import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiToken } from './api-token.entity.js';
import type { Caller } from './caller.js';
import { displayPrefix, generateToken, hashToken, isWellFormedToken } from './token-format.js';

/** A team is a lowercase slug such as `acme` (contract §2). */
export const TEAM_SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const DAY_MS = 24 * 60 * 60 * 1000;
/** `last_used_at` is written at most this often per token, not on every request. */
const LAST_USED_RESOLUTION_MS = 60 * 1000;

export interface CreateTokenOptions {
  team: string;
  name?: string;
  expiresInDays?: number;
}

@Injectable()
export class TokensService {
  constructor(@InjectRepository(ApiToken) private readonly tokens: Repository<ApiToken>) {}

  /** Returns the token itself: the only time it exists outside the caller's hands. */
  async create({ team, name, expiresInDays }: CreateTokenOptions): Promise<{ token: string; record: ApiToken }> {
    if (!TEAM_SLUG.test(team)) {
      throw new Error(`team must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters), got "${team}"`);
    }
    if (name !== undefined && (name.length === 0 || name.length > 100)) throw new Error('name must be 1 to 100 characters');
    if (expiresInDays !== undefined && !(Number.isInteger(expiresInDays) && expiresInDays >= 1 && expiresInDays <= 3650)) {
      throw new Error('expires-in-days must be a whole number from 1 to 3650');
    }
    const token = generateToken();
    const record = await this.tokens.save(
      this.tokens.create({
        team,
        name: name ?? null,
        prefix: displayPrefix(token),
        tokenHash: hashToken(token),
        expiresAt: expiresInDays === undefined ? null : new Date(Date.now() + expiresInDays * DAY_MS),
      }),
    );
    return { token, record };
  }

  list(team?: string): Promise<ApiToken[]> {
    return this.tokens.find({ where: team === undefined ? {} : { team }, order: { id: 'ASC' } });
  }

  async revoke(id: number): Promise<ApiToken> {
    const record = await this.tokens.findOneBy({ id });
    if (!record) throw new NotFoundException(`token ${id} not found`);
    if (!record.revokedAt) {
      record.revokedAt = new Date();
      await this.tokens.update({ id }, { revokedAt: record.revokedAt });
    }
    return record;
  }

  /**
   * The caller a bearer token stands for, or null for any token that is malformed,
   * unknown, expired or revoked: all four get the same answer (contract §2).
   */
  async authenticate(token: string): Promise<Caller | null> {
    if (!isWellFormedToken(token)) return null;
    const record = await this.tokens.findOne({
      select: { id: true, team: true, expiresAt: true, revokedAt: true, lastUsedAt: true },
      where: { tokenHash: hashToken(token) },
    });
    const now = Date.now();
    if (!record || record.revokedAt || (record.expiresAt && record.expiresAt.getTime() <= now)) return null;
    if (!record.lastUsedAt || now - record.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      // Bookkeeping only: the request does not wait for it, and a failure costs nothing but accuracy.
      this.tokens.update({ id: record.id }, { lastUsedAt: new Date(now) }).catch(() => undefined);
    }
    return { tokenId: record.id, team: record.team };
  }
}
