import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { loadEnvironment } from './config/environment.js';

const LEVELS = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'] as const;

async function bootstrap(): Promise<void> {
  const env = loadEnvironment();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(), {
    // Our own JSON body reader replaces Nest's (16 KiB, 415, errors after auth: see json-body.ts).
    bodyParser: false,
    logger: LEVELS.slice(0, LEVELS.indexOf(env.LOG_LEVEL) + 1),
  });
  configureApp(app, { docs: env.DOCS_ENABLED });
  app.enableShutdownHooks();
  await app.listen(env.PORT, env.HOST);
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
