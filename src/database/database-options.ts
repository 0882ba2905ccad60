import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import mysql from 'mysql2';
import type { DataSourceOptions } from 'typeorm';
import type { DatabaseSettings } from './database.config.js';
import { DatabaseLogger } from './database-logger.js';
import { tlsOptions, type TlsSettings } from './database-tls.js';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema.js';
import { TokenScope1763800000000 } from './migrations/1763800000000-token-scope.js';
import { StoreCatalogVersion1763900000000 } from './migrations/1763900000000-store-catalog-version.js';
import { IdempotencyKeys1764000000000 } from './migrations/1764000000000-idempotency-keys.js';
import { TokenReplacedBy1764100000000 } from './migrations/1764100000000-token-replaced-by.js';
import { EventOutbox1764200000000 } from './migrations/1764200000000-event-outbox.js';
import { OutboxEventIdUnindexed1764300000000 } from './migrations/1764300000000-outbox-event-id-unindexed.js';
import { StoreTimeZone1764400000000 } from './migrations/1764400000000-store-time-zone.js';
import { StoreChanges1764500000000 } from './migrations/1764500000000-store-changes.js';
import { StoreSpecialDays1764600000000 } from './migrations/1764600000000-store-special-days.js';
import { Holidays1764700000000 } from './migrations/1764700000000-holidays.js';
import { PlantEventTriggers1764800000000 } from './migrations/1764800000000-plant-event-triggers.js';
import { StoreContactFields1764900000000 } from './migrations/1764900000000-store-contact-fields.js';
import { StoreServices1765000000000 } from './migrations/1765000000000-store-services.js';

export const migrations = [
  InitialSchema1763700000000,
  TokenScope1763800000000,
  StoreCatalogVersion1763900000000,
  IdempotencyKeys1764000000000,
  TokenReplacedBy1764100000000,
  EventOutbox1764200000000,
  OutboxEventIdUnindexed1764300000000,
  StoreTimeZone1764400000000,
  StoreChanges1764500000000,
  StoreSpecialDays1764600000000,
  Holidays1764700000000,
  PlantEventTriggers1764800000000,
  StoreContactFields1764900000000,
  StoreServices1765000000000,
];

/**
 * Every MySQL session runs in strict mode with UTC and utf8mb4, whatever the server's
 * defaults are: a too-long or malformed value must fail rather than be truncated.
 * Neither TypeORM nor mysql2 has an "init SQL" option, so the pool's 'connection' event runs
 * it on each new connection (queries on one connection run in order, so it precedes the first
 * real query).
 *
 * The other changes to the pool make up for what mysql2 lacks (an acquire timeout, dropping a
 * connection whose query timed out, a session setting that depends on the server); each is
 * guarded by the tests named in its comment, which fail if a mysql2 update changes what it wraps.
 */
const SESSION_SETUP =
  "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'";
const strictMysql = {
  ...mysql,
  createPool(options: mysql.PoolOptions) {
    const pool = mysql.createPool(options);
    pool.on('connection', (connection) => {
      discardOnTimeout(connection);
      connection.query(SESSION_SETUP);
    });
    limitWaiting(pool, options.connectTimeout ?? 10_000);
    causalReadsOnGalera(pool, options.connectTimeout ?? 10_000);
    return pool;
  },
};

/**
 * Galera applies another node's commits asynchronously: without a causal wait, a plant
 * created (201) through an instance on node A may be missing from a list that another
 * instance reads on node B a moment later. wsrep_sync_wait = 3 makes reads (1) and
 * UPDATE/DELETE (2) of this session wait until the node has applied every commit the
 * cluster had when the statement began. Inserts need no wait: one that conflicts with a
 * commit elsewhere fails certification and is retried (retryWriteConflicts).
 * The engine is asked once per new connection (a pool keeps its connections), before the
 * connection is handed out; plain MySQL/MariaDB get no setting and no extra query per request.
 * Guarded by the read-your-writes check of `npm run test:cluster` (test/cluster).
 */
const GALERA_SYNC_WAIT = 3;
const galeraPools = new WeakSet<mysql.Pool>();

/** Whether this pool's connections have found a Galera node (wsrep_on with a provider). */
export function isGaleraPool(pool: mysql.Pool): boolean {
  return galeraPools.has(pool);
}

function causalReadsOnGalera(pool: mysql.Pool, timeout: number): void {
  const prepared = new WeakSet<mysql.PoolConnection>();
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (callback: (error: NodeJS.ErrnoException | null, connection: mysql.PoolConnection) => unknown) => {
    getConnection((error, connection) => {
      if (error || prepared.has(connection)) return callback(error, connection);
      const fail = (failure: NodeJS.ErrnoException) => {
        connection.destroy();
        callback(failure, undefined as unknown as mysql.PoolConnection);
      };
      const sql = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_provider')";
      connection.query<mysql.RowDataPacket[]>({ sql, timeout }, (failure, rows) => {
        if (failure) return fail(failure);
        const value = (name: string) => rows.find((row) => row.Variable_name === name)?.Value as string | undefined;
        const galera = value('wsrep_on') === 'ON' && !['', 'none', undefined].includes(value('wsrep_provider'));
        if (!galera) {
          prepared.add(connection);
          return callback(null, connection);
        }
        galeraPools.add(pool);
        connection.query({ sql: `SET SESSION wsrep_sync_wait = ${GALERA_SYNC_WAIT}`, timeout }, (setFailure) => {
          if (setFailure) return fail(setFailure);
          prepared.add(connection);
          callback(null, connection);
        });
      });
    });
  };
}

/**
 * mysql2 has no acquire timeout: a request waiting for a busy or still-connecting pool would
 * wait for as long as the connections ahead of it take. It gets its 503 after `ms` instead;
 * a connection that turns up later goes straight back to the pool. Guarded by the network-hang
 * test of test/outage.e2e-spec.ts.
 */
function limitWaiting(pool: mysql.Pool, ms: number): void {
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (callback: (error: NodeJS.ErrnoException | null, connection: mysql.PoolConnection) => unknown) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      const error: NodeJS.ErrnoException = new Error(`no database connection within ${ms} ms`);
      error.code = 'POOL_ACQUIRE_TIMEOUT';
      callback(error, undefined as unknown as mysql.PoolConnection);
    }, ms);
    getConnection((error, connection) => {
      clearTimeout(timer);
      if (settled) return connection?.release();
      settled = true;
      callback(error, connection);
    });
  };
}

/**
 * mysql2 fails a query that outlives its timeout but keeps the connection busy with it, so
 * every later query on that connection would wait behind it forever (a hung database, a
 * dropped network). Such a connection is destroyed instead; the pool opens a fresh one.
 * Guarded by the network-hang test of test/outage.e2e-spec.ts.
 */
function discardOnTimeout(connection: mysql.PoolConnection): void {
  const query = connection.query.bind(connection) as (...args: unknown[]) => unknown;
  (connection as unknown as { query: typeof query }).query = (...args) => {
    const callback = args[args.length - 1];
    if (typeof callback === 'function') {
      args[args.length - 1] = (error: { code?: string } | null, ...results: unknown[]) => {
        if (error?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
        return (callback as (...a: unknown[]) => unknown)(error, ...results);
      };
    }
    return query(...args);
  };
}

/** The embedded database's file under DATA_DIR. */
export const SQLITE_FILE = 'plant-store.sqlite';

/**
 * Written once, used by the Nest app, the command line and the TypeORM CLI (src/data-source.ts).
 * No entities here: each feature module registers its own (TypeOrmModule.forFeature, with
 * autoLoadEntities in database.module.ts), so this floor imports no feature folder; the
 * migrations are plain SQL and need none.
 */
export function databaseOptions(
  env: Pick<DatabaseSettings, 'DATABASE_URL' | 'DATA_DIR' | 'DB_POOL_SIZE' | 'MIGRATIONS_RUN' | 'DB_CONNECT_TIMEOUT_MS' | 'DB_QUERY_TIMEOUT_MS'> & TlsSettings,
  { multipleStatements = false }: { multipleStatements?: boolean } = {},
): DataSourceOptions {
  const common = {
    migrations,
    migrationsRun: env.MIGRATIONS_RUN,
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    logging: false,
    logger: new DatabaseLogger(),
  };
  if (env.DATABASE_URL) {
    const url = env.DATABASE_URL.replace(/^mariadb:/, 'mysql:');
    return {
      ...common,
      type: env.DATABASE_URL.startsWith('mariadb:') ? 'mariadb' : 'mysql',
      url,
      driver: strictMysql,
      charset: 'utf8mb4_bin',
      timezone: 'Z',
      poolSize: env.DB_POOL_SIZE,
      // Fail fast while the database is down or unreachable (503 within seconds, never a hang):
      // a bounded connect, a per-query timeout (mysql2 closes the stuck connection), and a bounded
      // queue of requests waiting for a connection ("Queue limit reached" is a 503 too).
      connectTimeout: env.DB_CONNECT_TIMEOUT_MS,
      maxQueryExecutionTime: env.DB_QUERY_TIMEOUT_MS,
      enableQueryTimeout: true,
      // multipleStatements: a plant write and its change event go as one query (statements-transaction.ts),
      // so the pool allows several statements per query only where that round trip is taken: the
      // server's, with change events on. Every value of every query is a `?` parameter either way,
      // so no client text reaches the SQL itself; mysql2 cannot allow them on some connections
      // of a pool only, and a second pool would double the connections an instance may hold.
      extra: { enableKeepAlive: true, maxIdle: env.DB_POOL_SIZE, queueLimit: env.DB_POOL_SIZE * 20, multipleStatements },
      ssl: tlsOptions(env),
    };
  }
  const dir = resolve(env.DATA_DIR);
  mkdirSync(dir, { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    database: join(dir, SQLITE_FILE),
    enableWAL: true,
    // Concurrent writers (server and CLI) wait for each other instead of failing at once.
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      db.pragma('busy_timeout = 5000');
    },
  };
}
