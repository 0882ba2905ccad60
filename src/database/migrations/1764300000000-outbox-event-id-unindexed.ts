import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Drops the unique index on `event_outbox.event_id`. The ids are random UUIDs made by
 * the service, one per event, and nothing looks a row up by them: the relay reads and deletes by
 * `id`, and the broker de-duplicates by the id in `Nats-Msg-Id`. The index cost every event a
 * random-key insert, a delete-mark and a purge in a second B-tree, which under sustained writes
 * was a measurable part of what events cost the database (docs/performance.md).
 */
export class OutboxEventIdUnindexed1764300000000 implements MigrationInterface {
  name = 'OutboxEventIdUnindexed1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('event_outbox', 'uq_event_outbox_event_id');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex('event_outbox', new TableIndex({ name: 'uq_event_outbox_event_id', columnNames: ['event_id'], isUnique: true }));
  }
}
