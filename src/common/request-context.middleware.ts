import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** A caller's id is kept when it is short and plain enough to be safe in logs and headers. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express' {
  interface Request {
    id: string;
  }
}

/**
 * First middleware of every request: the request id (echoed as X-Request-Id) and
 * `Cache-Control: no-store` go on every response, errors and docs included (contract §1).
 */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  req.id = given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.id);
  res.setHeader('Cache-Control', 'no-store');
  next();
}
