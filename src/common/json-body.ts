import { AsyncResource } from 'node:async_hooks';
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

const NOT_JSON = 'request body is not valid JSON';

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

/** The reviver of every parse: a forbidden key anywhere is a 400 naming it. */
function refuseForbiddenKeys(key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) throw new Error(`property ${key} is not allowed`);
  return value;
}

function depthProblem(raw: Buffer): string | undefined {
  return nestingDepth(raw, MAX_BODY_DEPTH) > MAX_BODY_DEPTH ? `request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels)` : undefined;
}

const jsonParser = (limit: number) =>
  express.json({
    limit,
    strict: true,
    // Any media type reaching this parser was already checked to be JSON.
    type: () => true,
    verify(_req, _res, raw) {
      const problem = depthProblem(raw);
      if (problem) throw new Error(problem);
    },
    reviver: refuseForbiddenKeys,
  });

/** `application/json`, bare or with `charset=utf-8`: the bodies read without body-parser. */
const PLAIN_JSON = /^application\/json\s*(?:;\s*charset="?utf-8"?\s*)?$/i;

/**
 * Whether body-parser can be skipped: a body of known length within the limit, neither compressed
 * nor in another charset. Nearly every API client sends that, and for it body-parser's generality
 * (decompression streams, iconv, five stream listeners, on-finished) cost 34 of the 440 µs of CPU
 * a search took (docs/performance.md, "The body read directly"). Every other body still goes
 * through body-parser.
 */
export function isPlain(req: Pick<Request, 'headers'>, limit: number): boolean {
  const length = req.headers['content-length'];
  return (
    length !== undefined &&
    req.headers['transfer-encoding'] === undefined &&
    Number(length) <= limit &&
    (req.headers['content-encoding'] === undefined || req.headers['content-encoding'].toLowerCase() === 'identity') &&
    PLAIN_JSON.test(req.headers['content-type']!)
  );
}

/** What body-parser's strict JSON parser answers for the same bytes: the same value, or the same error. */
export function parsePlainJson(raw: Buffer): { body: unknown } | { error: HttpException } {
  const deep = depthProblem(raw);
  if (deep) return { error: new BadRequestException(deep) };
  // Decoded as iconv-lite decodes UTF-8 for body-parser: bad bytes become U+FFFD, a BOM is dropped.
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // An empty body is {} and the first character must open an object or an array, as in body-parser.
  if (text.length === 0) return { body: {} };
  const first = /[^ \t\n\r]/.exec(text)?.[0];
  if (first !== '{' && first !== '[') return { error: new BadRequestException(NOT_JSON) };
  try {
    return { body: JSON.parse(text, refuseForbiddenKeys) };
  } catch (error) {
    return { error: parseError(error as Error) };
  }
}

/**
 * Reads a body that isPlain() accepted, then `done`: Node's parser ends it after exactly
 * Content-Length bytes. The stream's events come in the socket's async context, so `done` is bound
 * to the request's (as raw-body binds its callback): the rest of the request keeps its log fields
 * (requestFields) and its trace.
 */
function readPlain(req: Request, then: (error?: HttpException) => void): void {
  const done = AsyncResource.bind(then);
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => chunks.push(chunk);
  const onEnd = () => {
    req.off('data', onData).off('error', onError);
    const parsed = parsePlainJson(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    if ('error' in parsed) return done(parsed.error);
    req.body = parsed.body;
    done();
  };
  // The client went away mid-body: there is no one to answer, but the request must still end.
  const onError = () => {
    req.off('data', onData).off('end', onEnd);
    done(new BadRequestException('request aborted'));
  };
  req.on('data', onData).once('end', onEnd).once('error', onError);
}

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
      return parseError(error);
  }
}

/** The reviver's message is kept (it names the key); a JSON syntax error never starts this way. */
function parseError(error: { message?: string }): HttpException {
  return new BadRequestException((error.message ?? '').startsWith('property ') ? error.message : NOT_JSON);
}

/**
 * Reads a JSON body of at most `limit` bytes: directly when it is plain (isPlain), else with
 * Express's own parser, the two giving the same answers (test/http.e2e-spec.ts). Nest's built-in body
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
    if (isPlain(req, limit)) {
      return readPlain(req, (error) => {
        if (error) req.bodyError = error;
        next();
      });
    }
    parseJson(req, res, (error?: unknown) => {
      if (error) req.bodyError = toHttpException(error, limit);
      next();
    });
  };
}
