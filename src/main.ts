import './node-version.js';
import 'reflect-metadata';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { configureApp } from './app.setup.js';
import { handleShutdownSignals } from './common/graceful-shutdown.js';
import { createLoggers, PinoLoggerService } from './common/logger.js';
import { loadSettings, type Settings } from './settings.js';
import { loadEnvironment } from './config/environment.js';
import { consoleServed } from './console/console.module.js';
import { SQLITE_FILE } from './database/database-options.js';
import { OutboxService } from './events/outbox.service.js';
import { Metrics } from './metrics/metrics.js';
import { startMetricsServer } from './metrics/metrics-server.js';

async function bootstrap(): Promise<void> {
  loadEnvironment();
  const settings = loadSettings();
  const { server, metrics: metricsSettings } = settings;
  const loggers = createLoggers(settings.logging);
  const logger = new PinoLoggerService(loggers.app);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings), {
    // Our own JSON body reader replaces Nest's (16 KiB, 415, errors after auth: see json-body.ts).
    bodyParser: false,
    logger,
    // A failed start (database unreachable past DB_STARTUP_TIMEOUT_MS) exits 1 below, rather than process.abort().
    abortOnError: false,
  });
  const metricsOn = metricsSettings.METRICS_PORT !== 0;
  configureApp(app, { docs: server.DOCS_ENABLED, requestLog: loggers.requests, metrics: metricsOn });
  handleShutdownSignals(app, { drainMs: server.SHUTDOWN_DRAIN_MS, graceMs: server.SHUTDOWN_GRACE_MS, logger });
  if (metricsOn) {
    const metrics = app.get(Metrics);
    metrics.collectDefaults();
    const host = metricsSettings.METRICS_HOST ?? server.HOST;
    await startMetricsServer(metrics.registry, metricsSettings.METRICS_PORT, host);
    logger.log(`metrics on http://${host}:${metricsSettings.METRICS_PORT}/metrics`, 'Main');
  }
  await app.listen(server.PORT, server.HOST);
  for (const line of startupSummary(settings)) logger.log(line, 'Main');
  // How plant events are written is a fact of the database, found by trying it; a database that
  // stopped answering meanwhile leaves the line out (the first write tries again).
  const plantEvents = await app
    .get(OutboxService)
    .plantEventsLine()
    .catch(() => undefined);
  if (plantEvents) logger.log(plantEvents, 'Main');
}

/** What a first start must say at a glance: where to send requests, where to read, where the data is, where change events go. */
function startupSummary({ server, database, events, geo, router: routing }: Settings): string[] {
  const host = ['0.0.0.0', '::', '127.0.0.1', '::1'].includes(server.HOST) ? 'localhost' : server.HOST;
  const url = `http://${host}:${server.PORT}`;
  const lines = [`listening on http://${server.HOST}:${server.PORT}: ${url}`];
  // One line for both pages a person opens first, so that the start still fits on a screen.
  const consolePage = consoleServed(server.CONSOLE_ENABLED) ? `operator's console: ${url}/console` : undefined;
  if (server.DOCS_ENABLED) lines.push([`API docs (Swagger UI): ${url}/docs`, consolePage].filter(Boolean).join(', '));
  else if (consolePage) lines.push(consolePage);
  if (database.DATABASE_URL) {
    const url = new URL(database.DATABASE_URL);
    lines.push(`data: ${url.protocol.replace(':', '')} database ${url.pathname.slice(1)} on ${url.host}`);
  } else {
    lines.push(`data: embedded SQLite database ${resolve(database.DATA_DIR, SQLITE_FILE)}`);
  }
  // Where the change events go. Never a password or a token of the URL (nats://user:pass@, nats://token@).
  const broker = events.EVENTS_NATS_URL?.replace(/\/\/([^/@,:]*)(:[^/@,]*)?@/g, (_, user: string, password?: string) =>
    password ? `//${user}:***@` : '//***@',
  );
  const changeEvents = broker ? `change events: publishing to ${broker} stream ${events.EVENTS_STREAM}` : 'change events: off (EVENTS_NATS_URL not set)';
  // Where street addresses go, if anywhere: the engine and its host, never a password of the URL. On the
  // same line as the events, so that the start still fits on a screen.
  const geocoder =
    geo.GEOCODER === 'off'
      ? "geocoder: off (GEOCODER not set), searches measure from the ZIP code's point"
      : `geocoder: ${geo.GEOCODER} at ${new URL(geo.GEOCODER_URL!).host}`;
  // Where customers' positions go for drive times, if anywhere: the engine and its host only.
  const router =
    routing.ROUTER === 'off'
      ? 'router: off (ROUTER not set), travel_mode answers in straight-line order'
      : `router: ${routing.ROUTER} at ${new URL(routing.ROUTER === 'pgrouting' ? routing.ROUTER_DATABASE_URL! : routing.ROUTER_URL!).host}`;
  lines.push(`${changeEvents}; ${geocoder}; ${router}`);
  return lines;
}

bootstrap().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
