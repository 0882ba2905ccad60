import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A store's contact fields (stores/store.entity.ts): phone, website and email, empty for every
 * store already stored (nothing is known of them yet; empty is "none", as for the special days).
 * The empty defaults stay, so that an instance of the previous version still inserts stores during
 * a rolling update.
 */
export class StoreContactFields1764900000000 implements MigrationInterface {
  name = 'StoreContactFields1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type !== 'better-sqlite3') {
      // One statement for the three columns, so that a big table is rebuilt (if at all) once.
      await queryRunner.query(
        "ALTER TABLE `stores` ADD `phone` VARCHAR(16) NOT NULL DEFAULT '', ADD `website` VARCHAR(200) NOT NULL DEFAULT '', ADD `email` VARCHAR(254) NOT NULL DEFAULT ''",
      );
    } else {
      await queryRunner.addColumns('stores', [
        new TableColumn({ name: 'phone', type: 'varchar', length: '16', default: "''" }),
        new TableColumn({ name: 'website', type: 'varchar', length: '200', default: "''" }),
        new TableColumn({ name: 'email', type: 'varchar', length: '254', default: "''" }),
      ]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('stores', ['phone', 'website', 'email']);
  }
}
