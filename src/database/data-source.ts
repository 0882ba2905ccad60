import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadEnvironment } from '../config/environment.js';
import { databaseOptions } from './database-options.js';
import { explainConnectionError } from './database-tls.js';

const env = loadEnvironment();

/** For the TypeORM CLI (`npm run migration:run`, `migration:generate`): same options, and the same connection errors, as the app. */
class CliDataSource extends DataSource {
  override initialize(): Promise<this> {
    return super.initialize().catch((error: unknown) => {
      throw explainConnectionError(error, env);
    });
  }
}

export default new CliDataSource(databaseOptions(env));
