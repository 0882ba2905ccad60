import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import type { AppConfig } from './config/config.module.js';
import { ConfigService } from '@nestjs/config';

async function bootstrap(): Promise<void> {
  // Our own JSON body reader replaces Nest's (limits, 415, errors after auth: see json-body.ts).
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(), { bodyParser: false, bufferLogs: true });
  const config = app.get<AppConfig>(ConfigService);
  app.useLogger([config.get('LOG_LEVEL', { infer: true })].flatMap((level) => LEVELS.slice(0, LEVELS.indexOf(level) + 1)));
  configureApp(app, { docs: config.get('DOCS_ENABLED', { infer: true }) });
  app.enableShutdownHooks();
  await app.listen(config.get('PORT', { infer: true }), config.get('HOST', { infer: true }));
}

const LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
