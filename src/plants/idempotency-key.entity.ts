import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A used `Idempotency-Key` of POST /plants and the response its first request got
 * (IdempotentCreatesService). Scoped per team: the primary key decides which of two
 * concurrent requests with one key runs.
 */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn({ type: 'varchar', length: 63 })
  team: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 (hex) of the canonical request body: a repeat with another body is refused. */
  @Column({ name: 'request_hash', type: 'varchar', length: 64 })
  requestHash: string;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_location', type: 'varchar', length: 255, nullable: true })
  responseLocation: string | null;

  /** The response body as JSON text. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
