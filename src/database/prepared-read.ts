import type { Pool, PoolConnection } from 'mysql2';
import type { DataSource } from 'typeorm';

export type SqlValue = string | number | null;

/**
 * A read on a hot path (GET /plants) as a prepared statement on the mysql2 pool of TypeORM's
 * MySQL driver (its public `pool` field), skipping TypeORM's query runner: kept because it
 * gives GET /plants?limit=20 a quarter more req/s in `npm run bench` (docs/performance.md).
 *
 * The outage guarantees of database-options.ts hold: the pool's bounded wait for a
 * connection applies, and a statement that does not answer within DB_QUERY_TIMEOUT_MS
 * (the prepare included) fails with PROTOCOL_SEQUENCE_TIMEOUT (a 503) and its connection is
 * destroyed rather than returned to the pool.
 *
 * On the embedded SQLite database this is TypeORM's own query (better-sqlite3 caches its
 * statements). On MySQL a driver without the pool fails every call, so that a TypeORM update
 * that removes it fails the MySQL e2e suite instead of silently dropping the gain.
 */
export function preparedRead<T>(dataSource: DataSource, sql: string, values: SqlValue[]): Promise<T[]> {
  if (dataSource.options.type === 'better-sqlite3') return dataSource.query<T[]>(sql, values);
  const pool = (dataSource.driver as unknown as { pool?: Pool }).pool;
  if (typeof pool?.getConnection !== 'function') throw new Error("preparedRead: TypeORM's MySQL driver no longer exposes its mysql2 pool");
  const timeoutMs = (dataSource.options as { maxQueryExecutionTime?: number }).maxQueryExecutionTime ?? 0;
  // mysql2 binds a JS number as DOUBLE, which MySQL 8 refuses for LIMIT; as text, the server converts it.
  const bound = values.map((v) => (typeof v === 'number' ? String(v) : v));
  return new Promise<T[]>((resolve, reject) => {
    pool.getConnection((error: NodeJS.ErrnoException | null, connection: PoolConnection) => {
      if (error) return reject(error);
      let settled = false;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              settled = true;
              connection.destroy();
              reject(Object.assign(new Error(`the query did not answer within ${timeoutMs} ms`), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }));
            }, timeoutMs)
          : undefined;
      connection.execute(sql, bound, (failure, rows) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        connection.release();
        if (failure) reject(failure);
        else resolve(rows as T[]);
      });
    });
  });
}
