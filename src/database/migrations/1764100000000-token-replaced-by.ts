import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The token that replaced this one: rotate sets it in the same transaction that
 * issues the replacement, on the condition that it is still empty, so that of two concurrent
 * rotates of one token exactly one issues a replacement.
 */
export class TokenReplacedBy1764100000000 implements MigrationInterface {
  name = 'TokenReplacedBy1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('api_tokens', new TableColumn({ name: 'replaced_by', type: 'integer', isNullable: true }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('api_tokens', 'replaced_by');
  }
}
