import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';

/**
 * The OpenTelemetry SDK with spans for incoming HTTP requests (named by route, `GET /plants/:id`),
 * mysql2 queries and ioredis commands, exported over OTLP; W3C traceparent from callers is
 * continued. Configured by the standard OTEL_* variables (endpoint, headers, protocol, service
 * name, sampler), read by the SDK itself. Imported only by instrumentation.ts when tracing is on.
 *
 * The app is ESM: the import-in-the-middle loader hook sees its imports (express, ioredis and
 * node:http are imported from ESM code), limited to the modules an instrumentation asked for,
 * so the other modules load untouched.
 */
const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

// Traces only, unless asked otherwise: metrics are Prometheus's (METRICS_PORT), logs go to stdout.
process.env.OTEL_METRICS_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';
if (!process.env.OTEL_SERVICE_NAME && !/(^|,)\s*service\.name=/.test(process.env.OTEL_RESOURCE_ATTRIBUTES ?? '')) {
  process.env.OTEL_SERVICE_NAME = 'plant-store-service';
}

const [{ NodeSDK }, { HttpInstrumentation }, { ExpressInstrumentation, ExpressLayerType }, { MySQL2Instrumentation }, { IORedisInstrumentation }] =
  await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-mysql2'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);

const sdk = new NodeSDK({
  instrumentations: [
    // Probes every few seconds would drown the traces that matter.
    new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => req.url?.startsWith('/health/') ?? false }),
    // Only the route, for the server span's name and http.route: a span per Express layer
    // (request id, JSON body, Nest's handler) would add no information and cost on every request.
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER, ExpressLayerType.REQUEST_HANDLER] }),
    new MySQL2Instrumentation(),
    new IORedisInstrumentation(),
  ],
});
sdk.start();
await waitForAllMessagesAcknowledged();
