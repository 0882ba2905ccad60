import type { DataSource } from 'typeorm';

export type SqlParams = Array<string | number | null>;

/** One statement of a transaction and its values. */
export interface Statement {
  sql: string;
  params: SqlParams;
}

/**
 * Runs `statements` as one transaction and returns the rows each one changed. On MySQL/MariaDB
 * they go to the server as one multi-statement query (`START TRANSACTION; …; COMMIT`): one
 * round trip instead of one per statement plus two, which under load is one turn of a busy event
 * loop instead of four or five (docs/performance.md, "change events"). The server's pool allows
 * multi-statement queries for this when change events are on (database-options.ts); every value
 * still travels as a `?`. A single statement needs nothing of the kind.
 * A failing statement stops the rest, and the transaction it left open is rolled back before the
 * connection goes back to the pool. On SQLite (no network, a transaction under the process's
 * lock, sqlite-transactions.ts) they run one by one in TypeORM's transaction.
 *
 * `transaction: false` (MySQL/MariaDB): the same single round trip without the transaction, each
 * statement autocommitted; a failing one stops the rest. For statements that need no common
 * transaction, such as session variables and the write whose trigger reads them.
 *
 * `unlessChanged` (MySQL/MariaDB): run on the same connection, before it goes back to the pool,
 * when the statements failed or the last one changed no row: the session variables a trigger
 * would have cleared stay set otherwise, for whatever runs next on that pooled connection.
 */
export async function runStatements(
  dataSource: DataSource,
  statements: Statement[],
  { transaction = true, unlessChanged }: { transaction?: boolean; unlessChanged?: string } = {},
): Promise<number[]> {
  if (dataSource.options.type === 'better-sqlite3') {
    return dataSource.transaction(async (manager) => {
      const affected: number[] = [];
      for (const { sql, params } of statements) affected.push((await manager.queryRunner!.query(sql, params, true)).affected ?? 0);
      return affected;
    });
  }
  const runner = dataSource.createQueryRunner();
  try {
    const sql = (transaction ? ['START TRANSACTION', ...statements.map((s) => s.sql), 'COMMIT'] : statements.map((s) => s.sql)).join(';\n');
    let results: Array<{ affectedRows?: number }>;
    try {
      const { raw } = await runner.query(
        sql,
        statements.flatMap((s) => s.params),
        true,
      );
      // One statement alone is one result, not a list of them.
      results = transaction || statements.length > 1 ? raw : [raw];
    } catch (error) {
      // Nothing after the failing statement ran, COMMIT included: undo what ran before it.
      if (transaction) await runner.query('ROLLBACK').catch(() => undefined);
      if (unlessChanged) await runner.query(unlessChanged).catch(() => undefined);
      throw error;
    }
    const changed = (transaction ? results.slice(1, -1) : results).map((result) => result.affectedRows ?? 0);
    if (unlessChanged && changed.at(-1) === 0) await runner.query(unlessChanged);
    return changed;
  } finally {
    await runner.release();
  }
}
