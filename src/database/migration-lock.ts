import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import type { DataSource, Migration } from 'typeorm';
import { isDuplicateKeyError, isRetryableLockError } from './database-errors.js';

/**
 * TypeORM takes no lock while it migrates, so instances started together on an empty
 * database race to create the same tables ("Table 'api_tokens' already exists").
 * MySQL's GET_LOCK is no answer on a cluster: Galera keeps it per node. The lock is a row
 * instead, written through the database like any other, so it holds across processes,
 * hosts and cluster nodes alike (on Galera, two nodes inserting it at once: one commit
 * wins certification, the other gets a deadlock error and waits). The row names its owner
 * and an expiry that the holder keeps pushing forward, so a holder that crashed blocks the
 * others for at most LOCK_TTL_MS. Times are the database's own clock, not the hosts'.
 */
export const MIGRATION_LOCK_TABLE = 'migration_lock';
const LOCK_TTL_MS = 60_000;
const HEARTBEAT_MS = 10_000;
const POLL_MS = 500;

const logger = new Logger('Migrations');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function dialect(dataSource: DataSource) {
  if (dataSource.driver.options.type === 'better-sqlite3') {
    return {
      create: `CREATE TABLE IF NOT EXISTS ${MIGRATION_LOCK_TABLE} (id INTEGER PRIMARY KEY, owner VARCHAR(200) NOT NULL, expires_at BIGINT NOT NULL)`,
      nowMs: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    };
  }
  return {
    // InnoDB and a primary key: what Galera replicates.
    create: `CREATE TABLE IF NOT EXISTS ${MIGRATION_LOCK_TABLE} (id INT NOT NULL PRIMARY KEY, owner VARCHAR(200) NOT NULL, expires_at BIGINT NOT NULL) ENGINE=InnoDB`,
    nowMs: 'ROUND(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000)',
  };
}

/** Runs `work` while this process holds the migration lock; waits for it as long as another live holder has it. */
export async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const { create, nowMs } = dialect(dataSource);
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  await dataSource.query(create);
  let waitingFor: string | undefined;
  for (;;) {
    try {
      await dataSource.query(`INSERT INTO ${MIGRATION_LOCK_TABLE} (id, owner, expires_at) VALUES (1, ?, ${nowMs} + ?)`, [owner, LOCK_TTL_MS]);
      break;
    } catch (error) {
      if (!isDuplicateKeyError(error) && !isRetryableLockError(error)) throw error;
    }
    try {
      // A holder that stopped renewing (crashed, killed) is replaced.
      await dataSource.query(`UPDATE ${MIGRATION_LOCK_TABLE} SET owner = ?, expires_at = ${nowMs} + ? WHERE id = 1 AND expires_at < ${nowMs}`, [
        owner,
        LOCK_TTL_MS,
      ]);
    } catch (error) {
      if (!isRetryableLockError(error)) throw error;
    }
    const [row] = await dataSource.query<{ owner: string }[]>(`SELECT owner FROM ${MIGRATION_LOCK_TABLE} WHERE id = 1`);
    if (row?.owner === owner) break;
    if (row && row.owner !== waitingFor) {
      waitingFor = row.owner;
      logger.log(`waiting for the migrations run by ${row.owner}`);
    }
    if (row) await sleep(POLL_MS / 2 + Math.random() * POLL_MS);
  }
  const renew = () =>
    dataSource
      .query(`UPDATE ${MIGRATION_LOCK_TABLE} SET expires_at = ${nowMs} + ? WHERE id = 1 AND owner = ?`, [LOCK_TTL_MS, owner])
      .catch((error: unknown) => logger.warn(`could not renew the migration lock: ${(error as Error).message}`));
  const heartbeat = setInterval(() => void renew(), HEARTBEAT_MS);
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
    await dataSource
      .query(`DELETE FROM ${MIGRATION_LOCK_TABLE} WHERE id = 1 AND owner = ?`, [owner])
      .catch((error: unknown) => logger.warn(`could not release the migration lock (it expires by itself): ${(error as Error).message}`));
  }
}

/** Whether every migration this build knows is recorded as applied; false when the table is missing too. */
async function upToDate(dataSource: DataSource): Promise<boolean> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  try {
    const rows = await dataSource.query<{ name: string }[]>(`SELECT name FROM ${table}`);
    const applied = new Set(rows.map((row) => row.name));
    return dataSource.migrations.every((migration) => applied.has(migration.name ?? migration.constructor.name));
  } catch {
    return false;
  }
}

/**
 * Applies pending migrations under the lock. The usual start (nothing pending) reads the
 * migrations table once and takes no lock; instances that waited find nothing left to do.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<Migration[]> {
  if (await upToDate(dataSource)) return [];
  return withMigrationLock(dataSource, () => dataSource.runMigrations({ transaction: 'each' }));
}
