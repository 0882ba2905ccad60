import { BadRequestException, PayloadTooLargeException, UnsupportedMediaTypeException, type HttpException } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';

declare module 'express' {
  interface Request {
    /** Why the body could not be read; raised only after authentication (see BodyGuard). */
    bodyError?: HttpException;
  }
}

/** Keys that would reach an object's prototype if copied naively; no DTO has them. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Deeper bodies are refused before parsing: class-transformer copies unknown nested fields recursively, and ~2,500 levels overflowed its stack (a 500). */
export const MAX_BODY_DEPTH = 32;

/** How deeply JSON text nests objects and arrays (brackets inside strings do not count); stops counting past `limit`. */
export function nestingDepth(text: Buffer, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length && max <= limit; i++) {
    const c = text[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

const jsonParser = (limit: number) =>
  express.json({
    limit,
    strict: true,
    // Any media type reaching this parser was already checked to be JSON.
    type: () => true,
    verify(_req, _res, raw) {
      if (nestingDepth(raw, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) throw new Error(`request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)`);
    },
    reviver(key, value) {
      if (FORBIDDEN_KEYS.has(key)) throw new Error(`property ${key} is not allowed`);
      return value;
    },
  });

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function isJson(req: Request): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  return type === 'application/json';
}

function toHttpException(error: { type?: string; message?: string }, limit: number): HttpException {
  switch (error.type) {
    case 'entity.too.large':
      return new PayloadTooLargeException(`request body exceeds the limit of ${limit} bytes`);
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new UnsupportedMediaTypeException('request body must be JSON in UTF-8 without content encoding');
    case 'entity.verify.failed':
      return new BadRequestException(error.message);
    default:
      // body-parser keeps the reviver's message; a JSON syntax error never starts this way.
      return (error.message ?? '').startsWith('property ') ? new BadRequestException(error.message) : new BadRequestException('request body is not valid JSON');
  }
}

/**
 * Reads a JSON body of at most `limit` bytes with Express's own parser. Nest's built-in body
 * parser (switched off in main.ts) would answer a bad body before the guards run, but
 * authentication comes first (contract §1): so problems with the body are remembered here and
 * BodyGuard raises them once the caller is known (test/auth.e2e-spec.ts, "comes before
 * everything else").
 */
export function jsonBody(limit: number, rawRoutes: readonly string[] = []) {
  const parseJson = jsonParser(limit);
  return (req: Request, res: Response, next: NextFunction): void => {
    // A route (`METHOD /path`) that reads its body as a stream of its own (the store CSV upload)
    // gets it untouched; only for that method.
    if (!hasBody(req) || rawRoutes.includes(`${req.method} ${req.path}`)) return next();
    if (!isJson(req)) {
      req.bodyError = new UnsupportedMediaTypeException('request body must be sent as application/json');
      return next();
    }
    parseJson(req, res, (error?: unknown) => {
      if (error) req.bodyError = toHttpException(error, limit);
      next();
    });
  };
}
