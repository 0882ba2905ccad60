import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The chain's holiday calendar (stores/holiday.entity.ts): one row per date, none to begin with. */
export class Holidays1764700000000 implements MigrationInterface {
  name = 'Holidays1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // As every table's text on MySQL (the first migration): the name in utf8mb4, compared byte for byte.
    const mysql = queryRunner.connection.driver.options.type !== 'better-sqlite3';
    await queryRunner.createTable(
      new Table({
        name: 'holidays',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          { name: 'date', type: 'varchar', length: '10', isPrimary: true },
          { name: 'name', type: 'varchar', length: '100', ...(mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {}) },
          { name: 'hours', type: 'varchar', length: '200' },
          { name: 'states', type: 'varchar', length: '200' },
          { name: 'updated_at', type: 'datetime', precision: 3 },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('holidays');
  }
}
