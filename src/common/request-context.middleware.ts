import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Histogram } from 'prom-client';
import { UNMATCHED_ROUTE } from '../metrics/metrics.js';
import { logRequest } from './logger.js';
import { requestFields, type RequestFields } from './request-fields.js';

/** A caller's id is kept when it is short and plain enough to be safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express' {
  interface Request {
    id: string;
  }
}

type DurationHistogram = Histogram<'http_request_method' | 'http_route' | 'http_response_status_code'>;

/**
 * First middleware of every request: the request id (echoed as X-Request-Id) and
 * `Cache-Control: no-store` (contract §1) go on every response, errors and docs included; the
 * rest of the request runs with its RequestFields in `requestFields`, so every log line of it
 * names it. When the response is done, one 'close' listener writes the request's line (`log`)
 * and counts it in http_server_request_duration_seconds (`durations`).
 */
export function requestContext({ log, durations }: { log?: Logger; durations?: DurationHistogram }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    res.setHeader('Cache-Control', 'no-store');
    const fields: RequestFields = { reqId: req.id };
    // Without the OpenTelemetry SDK loaded, the API's no-op returns no span here.
    const span = trace.getActiveSpan()?.spanContext();
    if (span) {
      fields.traceId = span.traceId;
      fields.spanId = span.spanId;
    }
    if (log || durations) {
      const started = performance.now();
      res.once('close', () => {
        const seconds = (performance.now() - started) / 1000;
        const route = (req.route as { path?: string } | undefined)?.path ?? req.routeTemplate;
        if (log) logRequest(log, req, res, fields, route ?? null, seconds);
        durations?.observe({ http_request_method: req.method, http_route: route ?? UNMATCHED_ROUTE, http_response_status_code: res.statusCode }, seconds);
      });
    }
    requestFields.run(fields, next);
  };
}
