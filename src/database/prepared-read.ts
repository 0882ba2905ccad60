import type { Pool, PoolConnection } from 'mysql2';
import type { DataSource } from 'typeorm';

export type SqlValue = string | number | null;

/**
 * A read on a hot path (GET /plants), run as a prepared statement straight on the pool of
 * TypeORM's MySQL driver. TypeORM stays the data layer; this only skips its query runner,
 * which per query builds a runner and a broadcaster, wraps the connection in a new promise
 * wrapper (mysql2 resolves a `require()` for it every time) and copies the rows: about a
 * tenth of the CPU of GET /plants in the profile (README "Performance"). mysql2 prepares
 * the statement once per connection and answers in the binary protocol.
 *
 * The outage guarantees of database-options.ts hold: the pool's bounded wait for a
 * connection applies, and a statement that does not answer within DB_QUERY_TIMEOUT_MS
 * (the prepare included) fails with PROTOCOL_SEQUENCE_TIMEOUT (a 503) and its connection is
 * destroyed rather than returned to the pool.
 *
 * On the embedded SQLite database this is TypeORM's own query (better-sqlite3 caches its
 * statements).
 */
export function preparedRead<T>(dataSource: DataSource, sql: string, values: SqlValue[]): Promise<T[]> {
  const pool = (dataSource.driver as unknown as { pool?: Pool }).pool;
  if (!pool) return dataSource.query<T[]>(sql, values);
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
