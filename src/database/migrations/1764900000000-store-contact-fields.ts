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
      // One statement for the three columns, so that a big table is rebuilt (if at all) once; utf8mb4
      // as the first schema's text, whatever the server's default: a website's host may be any script.
      const text = (name: string, length: number) => `ADD \`${name}\` VARCHAR(${length}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT ''`;
      await queryRunner.query(`ALTER TABLE \`stores\` ${text('phone', 16)}, ${text('website', 200)}, ${text('email', 254)}`);
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
