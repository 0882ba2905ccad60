import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { DataSource } from 'typeorm';

/**
 * Everything a migration decides, as comparable text: tables, columns (type, nullability,
 * default, collation), indexes, and the migrations applied, in order (not their row ids:
 * a Galera cluster steps auto-increments by node). Two databases migrated from empty give
 * the same text exactly when they ended up with the same schema.
 */
export async function schemaOf(env: Record<string, string>): Promise<string> {
  if (!env.DATABASE_URL) {
    const db = await new DataSource({ type: 'better-sqlite3', database: join(env.DATA_DIR, 'plant-store.sqlite') }).initialize();
    try {
      const objects: unknown = await db.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
      const migrations: unknown = await db.query('SELECT timestamp, name FROM migrations ORDER BY id');
      return JSON.stringify({ objects, migrations }, null, 1);
    } finally {
      await db.destroy();
    }
  }
  const url = new URL(env.DATABASE_URL);
  const schema = url.pathname.slice(1);
  const connection = await mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  });
  try {
    const q = async (sql: string) => (await connection.query(sql, [schema]))[0];
    return JSON.stringify(
      {
        tables: await q('SELECT table_name, engine, table_collation FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name'),
        columns: await q(
          'SELECT table_name, column_name, ordinal_position, column_type, is_nullable, column_default, character_set_name, collation_name, column_key, extra FROM information_schema.columns WHERE table_schema = ? ORDER BY table_name, ordinal_position',
        ),
        indexes: await q(
          'SELECT table_name, index_name, seq_in_index, column_name, non_unique FROM information_schema.statistics WHERE table_schema = ? ORDER BY table_name, index_name, seq_in_index',
        ),
        migrations: (await connection.query(`SELECT timestamp, name FROM \`${schema}\`.migrations ORDER BY id`))[0],
      },
      null,
      1,
    );
  } finally {
    await connection.end();
  }
}

/** Runs statements on a test database of either engine, outside the service. */
export async function queryDatabase(env: Record<string, string>, statements: string[]): Promise<unknown[]> {
  const results: unknown[] = [];
  if (!env.DATABASE_URL) {
    const db = await new DataSource({ type: 'better-sqlite3', database: join(env.DATA_DIR, 'plant-store.sqlite') }).initialize();
    try {
      for (const sql of statements) results.push(await db.query(sql));
    } finally {
      await db.destroy();
    }
    return results;
  }
  const url = new URL(env.DATABASE_URL);
  const connection = await mysql.createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
  });
  try {
    for (const sql of statements) results.push((await connection.query(sql))[0]);
  } finally {
    await connection.end();
  }
  return results;
}
