/**
 * OpenTelemetry tracing, loaded before the app: `node --import ./dist/instrumentation.js dist/main.js`
 * (npm start, the image). Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant)
 * is set: then tracing.js starts the SDK; otherwise nothing more is loaded, so a service
 * without tracing pays nothing for it (docs/operations.md, "Traces").
 */
import './node-version.js';

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
  await import('./tracing.js');
}

export {};
