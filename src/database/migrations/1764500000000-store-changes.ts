import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Which stores each catalogue version changed, written with the version bump in the same
 * transaction: another instance that sees `store_catalog.version` move reads the versions it
 * missed here and then only the stores they name, instead of the whole catalogue. `stores` is
 * the JSON of the change's codes, NULL for a change too big to list (the reader reloads). Only
 * the last versions are kept (StoreCatalog prunes in the writing transaction).
 */
export class StoreChanges1764500000000 implements MigrationInterface {
  name = 'StoreChanges1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'store_changes',
        columns: [
          { name: 'version', type: 'integer', isPrimary: true },
          { name: 'stores', type: 'text', isNullable: true },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('store_changes');
  }
}
