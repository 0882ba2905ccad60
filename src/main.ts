import 'reflect-metadata';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { handleShutdownSignals } from './common/graceful-shutdown.js';
import { createLoggers, PinoLoggerService } from './common/logger.js';
import { loadEnvironment, type EnvironmentVariables } from './config/environment.js';
import { consoleServed } from './console/console.module.js';
import { SQLITE_FILE } from './database/database-options.js';
import { Metrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';

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
  const metricsOn = env.METRICS_PORT !== 0;
  configureApp(app, { docs: env.DOCS_ENABLED, requestLog: loggers.requests, metrics: metricsOn });
  handleShutdownSignals(app, { drainMs: env.SHUTDOWN_DRAIN_MS, graceMs: env.SHUTDOWN_GRACE_MS, logger });
  if (metricsOn) {
    const metrics = app.get(Metrics);
    metrics.collectDefaults();
    const host = env.METRICS_HOST ?? env.HOST;
    await startMetricsServer(metrics.registry, env.METRICS_PORT, host);
    logger.log(`metrics on http://${host}:${env.METRICS_PORT}/metrics`, 'Main');
  }
  await app.listen(env.PORT, env.HOST);
  for (const line of startupSummary(env)) logger.log(line, 'Main');
}

/** What a first start must say at a glance: where to send requests, where to read, where the data is, where change events go. */
function startupSummary(env: EnvironmentVariables): string[] {
  const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(env.HOST) ? 'localhost' : env.HOST;
  const url = `http://${host}:${env.PORT}`;
  const lines = [`listening on http://${env.HOST}:${env.PORT}: ${url}`];
  // One line for both pages a person opens first, so that the start still fits on a screen.
  const consolePage = consoleServed(env.CONSOLE_ENABLED) ? `operator's console: ${url}/console` : undefined;
  if (env.DOCS_ENABLED) lines.push([`API docs (Swagger UI): ${url}/docs`, consolePage].filter(Boolean).join(', '));
  else if (consolePage) lines.push(consolePage);
  if (env.DATABASE_URL) {
    const database = new URL(env.DATABASE_URL);
    lines.push(`data: ${database.protocol.replace(':', '')} database ${database.pathname.slice(1)} on ${database.host}`);
  } else {
    lines.push(`data: embedded SQLite database ${resolve(env.DATA_DIR, SQLITE_FILE)}`);
  }
  // Where the change events go. Never a password or a token of the URL (nats://user:pass@, nats://token@).
  const broker = env.EVENTS_NATS_URL?.replace(/\/\/([^/@,:]*)(:[^/@,]*)?@/g, (_, user: string, password?: string) => (password ? `//${user}:***@` : '//***@'));
  const events = broker ? `change events: publishing to ${broker} stream ${env.EVENTS_STREAM}` : 'change events: off (EVENTS_NATS_URL not set)';
  // Where street addresses go, if anywhere: the engine and its host, never a password of the URL. On the
  // same line as the events, so that the start still fits on a screen.
  const geocoder =
    env.GEOCODER === 'off'
      ? "geocoder: off (GEOCODER not set), searches measure from the ZIP code's point"
      : `geocoder: ${env.GEOCODER} at ${new URL(env.GEOCODER_URL!).host}`;
  lines.push(`${events}; ${geocoder}`);
  return lines;
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
