import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A store's special days and temporary closure (stores/store.entity.ts), both empty for every
 * store already stored: nothing about them is known yet, and empty is "none". The special days are
 * MEDIUMTEXT on MySQL: up to 400 days of hours pass TEXT's 64 KB. The empty defaults stay, so
 * that an instance of the previous version still inserts stores during a rolling update.
 */
export class StoreSpecialDays1764600000000 implements MigrationInterface {
  name = 'StoreSpecialDays1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.options.type !== 'better-sqlite3';
    if (mysql) {
      // A TEXT column's literal default: MariaDB (10.2 on) takes `DEFAULT ''`, MySQL (8.0.13 on) an expression, `DEFAULT ('')`.
      const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
      const empty = /mariadb/i.test(version) ? "''" : "('')";
      // One statement for both columns, so that a big table is rebuilt (if at all) once.
      await queryRunner.query(
        `ALTER TABLE \`stores\` ADD \`special_hours\` MEDIUMTEXT NOT NULL DEFAULT ${empty}, ADD \`temporarily_closed\` VARCHAR(32) NOT NULL DEFAULT ''`,
      );
    } else {
      await queryRunner.addColumns('stores', [
        new TableColumn({ name: 'special_hours', type: 'text', default: "''" }),
        new TableColumn({ name: 'temporarily_closed', type: 'varchar', length: '32', default: "''" }),
      ]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumns('stores', ['special_hours', 'temporarily_closed']);
  }
}
