import { Table, type MigrationInterface, type QueryRunner, type TableColumnOptions } from 'typeorm';

/**
 * The first schema, written once for both engines through TypeORM's Table API. The only
 * differences are MySQL's per-column utf8mb4 binary collation (text is stored and compared
 * byte for byte, emoji included) and each engine's "now" expression.
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = queryRunner.connection.driver.options.type !== 'better-sqlite3';
    const text = (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      ...(mysql ? { charset: 'utf8mb4', collation: 'utf8mb4_bin' } : {}),
      ...extra,
    });
    const now = mysql ? 'CURRENT_TIMESTAMP(3)' : "(strftime('%Y-%m-%d %H:%M:%f', 'now'))";
    const timestamp = (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'datetime',
      precision: 3,
      ...extra,
    });
    const id: TableColumnOptions = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' };

    await queryRunner.createTable(
      new Table({
        name: 'api_tokens',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          id,
          text('team', 63),
          text('name', 100, { isNullable: true }),
          text('prefix', 16),
          { name: 'token_hash', type: 'varchar', length: '64', ...(mysql ? { charset: 'ascii', collation: 'ascii_bin' } : {}) },
          timestamp('created_at', { default: now }),
          timestamp('expires_at', { isNullable: true }),
          timestamp('last_used_at', { isNullable: true }),
          timestamp('revoked_at', { isNullable: true }),
        ],
        indices: [
          { name: 'uq_api_tokens_token_hash', columnNames: ['token_hash'], isUnique: true },
          { name: 'ix_api_tokens_team', columnNames: ['team'] },
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'plants',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          text('team', 63, { isPrimary: true }),
          { name: 'id', type: 'bigint', isPrimary: true },
          text('name', 255),
          text('tag', 255, { isNullable: true }),
          timestamp('created_at', { default: now }),
        ],
        indices: [{ name: 'ix_plants_team_tag_id', columnNames: ['team', 'tag', 'id'] }],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'stores',
        engine: mysql ? 'InnoDB' : undefined,
        columns: [
          id,
          text('code', 64),
          text('name', 200),
          text('address', 200),
          text('city', 100),
          text('state', 2),
          text('zip', 10),
          { name: 'lat', type: 'decimal', precision: 9, scale: 6 },
          { name: 'lng', type: 'decimal', precision: 9, scale: 6 },
          ...['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((day) => text(day, 200)),
          timestamp('created_at', { default: now }),
          timestamp('updated_at', { default: now }),
        ],
        indices: [
          { name: 'uq_stores_code', columnNames: ['code'], isUnique: true },
          { name: 'ix_stores_lat_lng', columnNames: ['lat', 'lng'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('stores');
    await queryRunner.dropTable('plants');
    await queryRunner.dropTable('api_tokens');
  }
}
