import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/** Token scopes: `read` or `write`; tokens issued before keep what they could do, `write`. */
export class TokenScope1763800000000 implements MigrationInterface {
  name = 'TokenScope1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type !== 'better-sqlite3';
    await queryRunner.addColumn(
      'api_tokens',
      new TableColumn({ name: 'scope', type: 'varchar', length: '16', default: "'write'", ...(mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {}) }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('api_tokens', 'scope');
  }
}
