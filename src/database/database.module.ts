import { ConfigService } from '@nestjs/config';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config.module.js';
import { databaseOptions } from './database-options.js';

/**
 * The connection of the app and the CLI alike; pending migrations run as it opens.
 * The server retries a database that is not up yet; the command line fails at once.
 */
export function databaseModule({ retryAttempts = 0 }: { retryAttempts?: number } = {}) {
  return TypeOrmModule.forRootAsync({
    inject: [ConfigService],
    useFactory: (config: AppConfig) => ({
      ...databaseOptions({
        DATABASE_URL: config.get('DATABASE_URL', { infer: true }),
        DATA_DIR: config.get('DATA_DIR', { infer: true }),
        DB_POOL_SIZE: config.get('DB_POOL_SIZE', { infer: true }),
        MIGRATIONS_RUN: config.get('MIGRATIONS_RUN', { infer: true }),
      }),
      retryAttempts,
      retryDelay: 2000,
    }),
  });
}
