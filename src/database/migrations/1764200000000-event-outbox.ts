import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The transactional outbox of change events: a row is written in the transaction of
 * the change it tells of, and the relay publishes it to NATS JetStream and deletes it. `id`
 * orders the rows (the publishing order); `event_id` is the CloudEvents id, also the broker's
 * de-duplication key. `event_relay_lease` names the one instance that relays at a time.
 */
export class EventOutbox1764200000000 implements MigrationInterface {
  name = 'EventOutbox1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type !== 'better-sqlite3';
    const ascii = mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {};
    const utf8 = mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
    const now = mysql ? 'CURRENT_TIMESTAMP(3)' : "(strftime('%Y-%m-%d %H:%M:%f', 'now'))";
    await queryRunner.createTable(
      new Table({
        name: 'event_outbox',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          { name: 'id', type: mysql ? 'bigint' : 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'event_id', type: 'varchar', length: '36', ...ascii },
          { name: 'subject', type: 'varchar', length: '255', ...ascii },
          { name: 'payload', type: 'text', ...utf8 },
          { name: 'created_at', type: 'datetime', precision: 3, default: now },
        ],
        indices: [{ name: 'uq_event_outbox_event_id', columnNames: ['event_id'], isUnique: true }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'event_relay_lease',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'owner', type: 'varchar', length: '64', isNullable: true, ...ascii },
          { name: 'expires_at', type: 'datetime', precision: 3, default: now },
        ],
      }),
    );
    await queryRunner.query('INSERT INTO event_relay_lease (id, owner) VALUES (1, NULL)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('event_relay_lease');
    await queryRunner.dropTable('event_outbox');
  }
}
