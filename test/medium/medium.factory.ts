import type { DynamicModule, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { appConfigModule } from '../../src/settings.js';
import { databaseModule } from '../../src/database/database.module.js';
import { EventsModule } from '../../src/events/events.module.js';
import { MetricsModule } from '../../src/metrics/metrics.module.js';
import { createTestDatabase } from '../support/test-app.js';

export interface MediumContext {
  /** The compiled module: `get(SomeService)` gives the real service with its real dependencies. */
  module: TestingModule;
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * One feature module the way the app wires it (validated configuration, the database
 * connection with its migrations, the metrics), on a fresh database of the engine under
 * test, with its lifecycle hooks run; no HTTP. `env` goes into process.env, where the
 * settings are read from, and stays there: give it in full each time.
 */
export async function newMediumContext(feature: Type | DynamicModule, env: Record<string, string> = {}): Promise<MediumContext> {
  const database = await createTestDatabase();
  try {
    delete process.env.DATABASE_URL;
    delete process.env.DATA_DIR;
    Object.assign(process.env, { NODE_ENV: 'test', ...database.env, ...env });
    const module = await Test.createTestingModule({ imports: [appConfigModule(), databaseModule(), MetricsModule, EventsModule, feature] }).compile();
    module.useLogger(['fatal', 'error']);
    await module.init();
    return {
      module,
      dataSource: module.get<DataSource>(getDataSourceToken()),
      close: async () => {
        await module.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}
