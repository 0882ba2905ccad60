import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { handleShutdownSignals } from './common/graceful-shutdown.js';
import { createLoggers, PinoLoggerService } from './common/logger.js';
import { loadEnvironment } from './config/environment.js';

async function bootstrap(): Promise<void> {
  const env = loadEnvironment();
  const loggers = createLoggers(env);
  const logger = new PinoLoggerService(loggers.app);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(), {
    // Our own JSON body reader replaces Nest's (16 KiB, 415, errors after auth: see json-body.ts).
    bodyParser: false,
    logger,
    // A failed start (database unreachable past DB_STARTUP_TIMEOUT_MS) exits 1 below, rather than process.abort().
    abortOnError: false,
  });
  configureApp(app, { docs: env.DOCS_ENABLED, requestLog: loggers.requests });
  handleShutdownSignals(app, { drainMs: env.SHUTDOWN_DRAIN_MS, graceMs: env.SHUTDOWN_GRACE_MS, logger });
  await app.listen(env.PORT, env.HOST);
  logger.log(`listening on http://${env.HOST}:${env.PORT}`, 'Main');
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
