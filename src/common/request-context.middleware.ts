import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { logRequest } from './logger.js';
import type { HeaderList } from './security-headers.js';

/** A caller's id is kept when it is short and plain enough to be safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express' {
  interface Request {
    id: string;
  }
}

/**
 * First middleware of every request: the request id (echoed as X-Request-Id),
 * `Cache-Control: no-store` (contract §1) and the security headers go on every response,
 * errors and docs included; with `log`, the request's line is written when it is done.
 * One middleware rather than one each: every Express router layer costs allocations and
 * calls on every request (README "Performance").
 */
export function requestContext({ headers, log }: { headers: HeaderList; log?: Logger }) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    res.setHeader('Cache-Control', 'no-store');
    for (const [name, value] of headers) res.setHeader(name, value);
    if (log) logRequest(log, req, res);
    next();
  };
}
