import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { TokenScope } from '../common/caller.js';

/**
 * An issued bearer token. The token itself is never stored: only its SHA-256 digest
 * (for look-up) and a short display prefix (so an operator can tell tokens apart).
 */
@Entity('api_tokens')
export class ApiToken {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Index('ix_api_tokens_team')
  @Column({ type: 'varchar', length: 63 })
  team: string;

  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  @Column({ type: 'varchar', length: 16 })
  prefix: string;

  @Index('uq_api_tokens_token_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  /** `read`: list plants and search stores; `write`: also create and delete plants; `admin`: the /admin routes. */
  @Column({ type: 'varchar', length: 16, default: 'write' })
  scope: TokenScope;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;

  /** The id of the token that rotate issued in its place; a token is rotated once. */
  @Column({ name: 'replaced_by', type: 'integer', nullable: true })
  replacedBy: number | null;
}
