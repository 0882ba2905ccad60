import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Idempotency keys of POST /plants: one row per (team, key), written in the same
 * transaction as the plant it created, holding the response to replay for 24 hours.
 * `created_at` is indexed for the clean-up of expired keys.
 */
export class IdempotencyKeys1764000000000 implements MigrationInterface {
  name = 'IdempotencyKeys1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type !== 'better-sqlite3';
    const ascii = mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {};
    const utf8 = mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
    await queryRunner.createTable(
      new Table({
        name: 'idempotency_keys',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          { name: 'team', type: 'varchar', length: '63', isPrimary: true, ...utf8 },
          // Printable ASCII, compared byte for byte: "abc" and "ABC" are two keys.
          { name: 'idempotency_key', type: 'varchar', length: '255', isPrimary: true, ...ascii },
          { name: 'request_hash', type: 'varchar', length: '64', ...ascii },
          { name: 'response_status', type: 'integer', isNullable: true },
          { name: 'response_location', type: 'varchar', length: '255', isNullable: true, ...ascii },
          { name: 'response_body', type: 'text', isNullable: true, ...utf8 },
          { name: 'created_at', type: 'datetime', precision: 3, default: mysql ? 'CURRENT_TIMESTAMP(3)' : "(strftime('%Y-%m-%d %H:%M:%f', 'now'))" },
        ],
        indices: [{ name: 'ix_idempotency_keys_created_at', columnNames: ['created_at'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('idempotency_keys');
  }
}
