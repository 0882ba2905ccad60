import './node-version.js';
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command } from 'commander';
import { CommandFailure, say, type WithApp } from './common/command-line.js';
import { appConfigModule, loadSettings, type Settings } from './settings.js';
import { loadEnvironment } from './config/environment.js';
import { databaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { holidaysCommand } from './stores/holidays.command.js';
import { servicesCommand } from './stores/services.command.js';
import { storesCommand } from './stores/stores.command.js';
import { StoresModule } from './stores/stores.module.js';
import { tokensCommand } from './tokens/tokens.command.js';
import { TokensModule } from './tokens/tokens.module.js';

/**
 * The same configuration, database and services as the server, without HTTP: only the modules
 * the commands use. No search index (locations/: a command needs no index of 100,000 stores),
 * and none of the request-time auth parts (passport strategy, SSO, rate limits with their Redis
 * connection).
 */
@Module({})
class CliModule {
  static forRoot(settings: Settings): DynamicModule {
    return { module: CliModule, imports: [appConfigModule(settings), databaseModule(), MetricsModule, EventsModule, TokensModule, StoresModule] };
  }
}

const withApp: WithApp = async (run) => {
  loadEnvironment();
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(loadSettings()), { logger: ['fatal', 'error'], abortOnError: false });
  try {
    await run(app);
  } finally {
    await app.close();
  }
};

const program = new Command('plant-store').description('Operator command line of the plant store service.').showHelpAfterError();
tokensCommand(program, withApp);
storesCommand(program, withApp);
holidaysCommand(program, withApp);
servicesCommand(program, withApp);

program.parseAsync().catch((error: unknown) => {
  // A closed stdout (`… export | head`) is the reader's choice, not a failure.
  if ((error as { code?: string }).code === 'EPIPE') return;
  say(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = error instanceof CommandFailure ? error.exitCode : 1;
});
