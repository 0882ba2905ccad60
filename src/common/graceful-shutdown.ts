import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import { trace, type ProxyTracerProvider } from '@opentelemetry/api';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ShutdownState } from './shutdown-state.js';

export interface ShutdownOptions {
  /** Readiness is 503 but requests are still served, so load balancers take the instance out first. */
  drainMs: number;
  /** After the listener closed, how long in-flight requests, then the change-event relay's handover, may still take. */
  graceMs: number;
  logger: LoggerService;
}

/**
 * Sends the spans the OpenTelemetry SDK still buffers (src/tracing.ts), which process.exit()
 * would drop; without tracing the API's no-op provider has nothing to flush.
 */
async function flushTraces(): Promise<void> {
  const provider = (trace.getTracerProvider() as ProxyTracerProvider).getDelegate() as { forceFlush?: () => Promise<void> };
  await provider.forceFlush?.();
}

/** Time for requests on connections accepted just before the listener closed to arrive. */
const SETTLE_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stops the service without failing a request: readiness 503 at once, a drain delay, then
 * the listener closes, keep-alive connections close as soon as they are idle, in-flight
 * requests finish (up to the grace time), and only then are Nest's hooks run (the change-event
 * relay's holder publishes what waits and hands its lease on, in what is left of the grace time:
 * src/events/outbox-relay.ts) and the database pool closed. Nest's own enableShutdownHooks() would close the pool while
 * requests still run and re-raise the signal (exit code 143 instead of 0).
 * SIGINT (Ctrl-C on a terminal) skips the drain delay: no load balancer to wait for.
 */
export function handleShutdownSignals(app: NestExpressApplication, options: ShutdownOptions): void {
  const server: Server = app.getHttpServer();
  const open = new Set<ServerResponse>();
  server.prependListener('request', (_req, res: ServerResponse) => {
    open.add(res);
    res.once('close', () => open.delete(res));
    // Once shutdown has begun, every response closes its connection: the client reconnects elsewhere.
    if (stopping) res.setHeader('Connection', 'close');
  });
  let stopping = false;

  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const { logger } = options;
    app.get(ShutdownState).begin();
    for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
    const drainMs = signal === 'SIGINT' ? 0 : options.drainMs;
    logger.log({ event: 'shutdown', signal, drainMs, graceMs: options.graceMs, inFlight: open.size }, 'Shutdown');
    await sleep(drainMs);

    // Stop accepting, keeping the open connections: http.Server#close() would also drop every
    // connection without a request *yet*, failing requests already sent on a just-accepted one.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    // Then close keep-alive connections left idle (busy ones close after their response).
    await sleep(SETTLE_MS);
    server.closeIdleConnections();
    app.get(ShutdownState).graceEndsAt = performance.now() + options.graceMs;
    const grace = setTimeout(() => {
      logger.warn(`${open.size} requests still running after SHUTDOWN_GRACE_MS=${options.graceMs}, closing their connections`, 'Shutdown');
      server.closeAllConnections();
    }, options.graceMs);
    await closed;
    clearTimeout(grace);

    await app.close();
    await flushTraces();
    logger.log({ event: 'shutdown complete' }, 'Shutdown');
    process.exit(0);
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      stop(signal).catch((error: unknown) => {
        options.logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`, 'Shutdown');
        process.exit(1);
      });
    });
  }
}
