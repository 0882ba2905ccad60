import { Table, TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The chain's services (stores/service.entity.ts), none to begin with, and each store's list of
 * them (stores/store.entity.ts), empty for every store already stored. The list is TEXT: it is
 * bounded by the vocabulary, not by a length of its own. The empty default stays, so that an
 * instance of the previous version still inserts stores during a rolling update.
 */
export class StoreServices1765000000000 implements MigrationInterface {
  name = 'StoreServices1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type !== 'better-sqlite3';
    // As every table's text on MySQL (the first migration): the label in utf8mb4, compared byte for byte.
    const text = mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {};
    await queryRunner.createTable(
      new Table({
        name: 'services',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          { name: 'slug', type: 'varchar', length: '40', isPrimary: true },
          { name: 'label', type: 'varchar', length: '100', ...text },
          { name: 'description', type: 'varchar', length: '500', isNullable: true, ...text },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
    if (mysql) {
      // A TEXT column's literal default: MariaDB (10.2 on) takes `DEFAULT ''`, MySQL (8.0.13 on) an expression, `DEFAULT ('')`.
      const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
      const empty = /mariadb/i.test(version) ? "''" : "('')";
      await queryRunner.query(`ALTER TABLE \`stores\` ADD \`services\` TEXT NOT NULL DEFAULT ${empty}`);
    } else {
      await queryRunner.addColumn('stores', new TableColumn({ name: 'services', type: 'text', default: "''" }));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('stores', 'services');
    await queryRunner.dropTable('services');
  }
}
