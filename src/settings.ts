import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import { authConfig } from './auth/auth.config.js';
import { loggingConfig } from './common/logging.config.js';
import { serverConfig } from './common/server.config.js';
import { databaseConfig } from './database/database.config.js';
import { eventsConfig } from './events/events.config.js';
import { geoConfig } from './geo/geo.config.js';
import { routerConfig } from './geo/router.config.js';
import { metricsConfig } from './metrics/metrics.config.js';
import { plantsConfig } from './plants/plants.config.js';
import { storesConfig } from './stores/stores.config.js';
import { tokensConfig } from './tokens/tokens.config.js';
import { InvalidConfiguration } from './config/environment.js';

/**
 * Every feature's settings namespace (`registerAs`), in the order of docs/configuration.md. A
 * service injects its own: `@Inject(geoConfig.KEY) geo: ConfigType<typeof geoConfig>`.
 */
const NAMESPACES = {
  server: serverConfig,
  logging: loggingConfig,
  metrics: metricsConfig,
  database: databaseConfig,
  auth: authConfig,
  tokens: tokensConfig,
  plants: plantsConfig,
  stores: storesConfig,
  events: eventsConfig,
  geo: geoConfig,
  router: routerConfig,
};

export type Settings = { [name in keyof typeof NAMESPACES]: ConfigType<(typeof NAMESPACES)[name]> };

/**
 * Loads every namespace from process.env, each validating its settings (and reading its files)
 * once. Every bad value is reported, one line each, before anything starts: the server, the
 * command line and the TypeORM CLI validate all settings, whichever they use.
 */
export function loadSettings(): Settings {
  const settings: Partial<Record<string, unknown>> = {};
  const problems: string[] = [];
  for (const [name, namespace] of Object.entries(NAMESPACES)) {
    try {
      settings[name] = namespace();
    } catch (error) {
      if (!(error instanceof InvalidConfiguration)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new InvalidConfiguration(problems);
  return settings as Settings;
}

@Global()
@Module({})
class SettingsModule {}

/**
 * The namespaces' values under their tokens (`geoConfig.KEY`), for the whole app. Loaded when the
 * module is built, not when this file is imported, so every app instance sees the environment of
 * its start; main.ts and cli.ts pass what they loaded before creating the app. Loaded here, not
 * by ConfigModule's `load` (which loads each namespace as its provider is made), so that a bad
 * value stops start-up before any other module is declared or a connection opened.
 */
export function appConfigModule(settings: Settings = loadSettings()): DynamicModule {
  const providers = Object.entries(NAMESPACES).map(([name, namespace]) => ({ provide: namespace.KEY, useValue: settings[name as keyof Settings] }));
  return { module: SettingsModule, providers, exports: providers.map((provider) => provider.provide) };
}
