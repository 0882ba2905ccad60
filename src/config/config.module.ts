import { ConfigModule, ConfigService } from '@nestjs/config';
import { validateEnvironment, type EnvironmentVariables } from './environment.js';

/** Typed access: `config.get('PORT', { infer: true })` is a number, validated at boot. */
export type AppConfig = ConfigService<EnvironmentVariables, true>;

/**
 * Validates the environment when the module is built, not when this file is imported, so
 * every app instance sees the environment of its start. `.env` was already read by
 * loadEnvironment() in main.ts / cli.ts.
 */
export function appConfigModule() {
  return ConfigModule.forRoot({ isGlobal: true, cache: true, ignoreEnvFile: true, validate: validateEnvironment });
}
