import './node-version.js';
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadSettings } from './settings.js';
import { loadEnvironment } from './config/environment.js';
import { databaseOptions } from './database/database-options.js';
import { runMigrationsLocked, withMigrationLock } from './database/migration-lock.js';
import { ensurePlantEventTriggers, plantEventsLine } from './database/plant-event-triggers.js';

/**
 * `npm run migration:run` / `migration:revert`: the migrations as a step of their own (a
 * rollout job, with MIGRATIONS_RUN=false on the instances), under the same lock the
 * instances take at start-up, so a job and starting instances never migrate at once.
 * TypeORM's CLI takes no lock; `migration:generate` still uses it (data-source.ts).
 */
async function main(command: string | undefined): Promise<void> {
  if (command !== 'run' && command !== 'revert') throw new Error('usage: migrate.js run|revert');
  loadEnvironment();
  const dataSource = await new DataSource({ ...databaseOptions(loadSettings().database), migrationsRun: false }).initialize();
  try {
    if (command === 'run') {
      const applied = await runMigrationsLocked(dataSource);
      process.stderr.write(applied.length === 0 ? 'no pending migrations\n' : applied.map((m) => `applied ${m.name}\n`).join(''));
      process.stderr.write(`${await plantEvents(dataSource)}\n`);
    } else {
      await withMigrationLock(dataSource, () => dataSource.undoLastMigration({ transaction: 'each' }));
      process.stderr.write('reverted the last migration\n');
    }
  } finally {
    await dataSource.destroy();
  }
}

/** The job's word on the plant event triggers: created, there, or what the server must allow first. */
async function plantEvents(dataSource: DataSource): Promise<string> {
  if (dataSource.options.type === 'better-sqlite3') return "plant change events: written in each write's transaction (SQLite)";
  const { triggers, created } = await ensurePlantEventTriggers(dataSource);
  return `${await plantEventsLine(dataSource, triggers)}${created ? ' (created now)' : ''}`;
}

main(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
