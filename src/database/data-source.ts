import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { validateEnvironment } from '../config/environment.js';
import { databaseOptions } from './database-options.js';

// The app reads .env through @nestjs/config; the TypeORM CLI reads it here (set variables win).
try {
  process.loadEnvFile();
} catch {
  // No .env file: the environment alone.
}

/** For the TypeORM CLI (`npm run migration:run`, `migration:generate`): same options as the app. */
export default new DataSource(databaseOptions(validateEnvironment(process.env)));
