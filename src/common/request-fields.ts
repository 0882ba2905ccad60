import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line written while a request is handled carries (logger.ts's mixin). */
export interface RequestFields {
  /** The X-Request-Id the client sees. */
  reqId: string;
  /** With tracing on (src/instrumentation.ts): the request's server span. */
  traceId?: string;
  spanId?: string;
}

/**
 * The fields of the request being handled, wherever the code is (after an await, in a
 * callback, anywhere in Nest's pipeline): requestContext runs the rest of the request in it.
 */
export const requestFields = new AsyncLocalStorage<RequestFields>();
