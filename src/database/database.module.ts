import { Logger } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { databaseConfig } from './database.config.js';
import { isDatabaseUnavailableError } from './database-errors.js';
import { databaseOptions } from './database-options.js';
import { explainConnectionError, isTlsConfigurationError, type TlsSettings } from './database-tls.js';
import { runMigrationsLocked } from './migration-lock.js';
import { ensurePlantEventTriggers } from './plant-event-triggers.js';
import { isolateSqliteTransactions } from './sqlite-transactions.js';

const RETRY_DELAY_MS = 2000;

/**
 * The connection of the app and the CLI alike; pending migrations run as it opens, under the
 * migration lock (migration-lock.ts), so instances started together take turns.
 * The server (`retry: true`) waits for a database that is not reachable yet, up to
 * DB_STARTUP_TIMEOUT_MS, then start-up fails (exit code 1). Any other error (bad credentials,
 * a certificate the TLS settings reject, a failing migration) fails at once, as does the command line.
 * After the migrations, the plant event triggers are created if they are missing and the server
 * now allows it (plant-event-triggers.ts). `multipleStatements`: the pool lets one query carry
 * several statements, which only the server's plant writes with change events on need
 * (statements-transaction.ts).
 */
export function databaseModule({ retry = false, multipleStatements = false }: { retry?: boolean; multipleStatements?: boolean } = {}) {
  let tls: TlsSettings | undefined;
  return TypeOrmModule.forRootAsync({
    inject: [databaseConfig.KEY],
    useFactory: (database: ConfigType<typeof databaseConfig>) => {
      const timeout = database.DB_STARTUP_TIMEOUT_MS;
      const deadline = Date.now() + timeout;
      const logger = new Logger('Database');
      tls = database;
      return {
        ...databaseOptions(database, { multipleStatements }),
        // Each feature module's TypeOrmModule.forFeature names its entities (database-options.ts).
        autoLoadEntities: true,
        // The deadline, not a count, ends the retries (toRetry); @nestjs/typeorm logs each retry too.
        retryAttempts: retry ? Number.MAX_SAFE_INTEGER : 0,
        retryDelay: RETRY_DELAY_MS,
        verboseRetryLog: true,
        toRetry: (error: unknown) => {
          if (!retry || isTlsConfigurationError(error) || !isDatabaseUnavailableError(error)) return false;
          const left = deadline - Date.now();
          if (left <= RETRY_DELAY_MS) {
            logger.error(`the database is still unreachable after ${timeout} ms (DB_STARTUP_TIMEOUT_MS), giving up`);
            return false;
          }
          logger.warn(
            `the database is unreachable (${(error as Error).message}), retrying every ${RETRY_DELAY_MS / 1000} s for another ${Math.round(left / 1000)} s`,
          );
          return true;
        },
      };
    },
    // MIGRATIONS_RUN (options.migrationsRun) is honoured here, under the lock: TypeORM's own run
    // takes none. A connection error names the setting to change (database-tls.ts).
    dataSourceFactory: async (options) => {
      const { migrationsRun, ...rest } = options as DataSourceOptions;
      const dataSource = new DataSource({ ...rest, migrationsRun: false });
      isolateSqliteTransactions(dataSource);
      await dataSource.initialize().catch((error: unknown) => {
        throw tls ? explainConnectionError(error, tls) : error;
      });
      try {
        if (migrationsRun) {
          await runMigrationsLocked(dataSource);
          // Which way plant events are written is said once the server listens (main.ts, OutboxService).
          if ((await ensurePlantEventTriggers(dataSource)).created) new Logger('Migrations').log("created the plants table's event triggers");
        }
      } catch (error) {
        // A retry (database unreachable meanwhile) opens a new pool; this one must not linger.
        await dataSource.destroy().catch(() => undefined);
        throw error;
      }
      return dataSource;
    },
  });
}
