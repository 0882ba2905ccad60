import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadEnvironment } from '../config/environment.js';
import { databaseOptions } from './database-options.js';

/** For the TypeORM CLI (`npm run migration:run`, `migration:generate`): same options as the app. */
export default new DataSource(databaseOptions(loadEnvironment()));
