import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * One row whose `version` every store import bumps in its own transaction. Each instance
 * keeps the stores in memory for the nearest search and polls this row to learn of an
 * import made by another instance (or the command line).
 */
export class StoreCatalogVersion1763900000000 implements MigrationInterface {
  name = 'StoreCatalogVersion1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'store_catalog',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true },
          { name: 'version', type: 'integer', default: 0 },
        ],
      }),
    );
    await queryRunner.query('INSERT INTO store_catalog (id, version) VALUES (1, 0)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('store_catalog');
  }
}
