import './node-version.js';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadSettings } from './settings.js';
import { loadEnvironment } from './config/environment.js';
import { databaseOptions } from './database/database-options.js';
import { explainConnectionError } from './database/database-tls.js';
import { IdempotencyKey } from './plants/idempotency-key.entity.js';
import { Plant } from './plants/plant.entity.js';
import { Holiday } from './stores/holiday.entity.js';
import { Service } from './stores/service.entity.js';
import { Store } from './stores/store.entity.js';
import { ApiToken } from './tokens/api-token.entity.js';

loadEnvironment();
const { database } = loadSettings();

/**
 * For the TypeORM CLI (`npm run migration:generate`): the app's options and connection errors,
 * and every entity (the app's modules register their own; this file, like app.module.ts, sits
 * above the features and lists them). A new entity goes here too, or `migration:generate` misses it.
 */
class CliDataSource extends DataSource {
  override initialize(): Promise<this> {
    return super.initialize().catch((error: unknown) => {
      throw explainConnectionError(error, database);
    });
  }
}

export default new CliDataSource({ ...databaseOptions(database), entities: [ApiToken, Plant, IdempotencyKey, Store, Holiday, Service] });
