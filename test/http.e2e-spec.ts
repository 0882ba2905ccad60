import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import request from 'supertest';
import { Plant } from '../src/plants/plant.entity.js';
import { bearer, createTestApp, ErrorCapture, listeningPort, sendChunks, type TestApp } from './support/test-app.js';

/** Waits until `condition` holds; the deadline only bounds a hang, it measures nothing. */
async function until(condition: () => boolean, what: string, deadlineMs = 20_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * POSTs to /plants the headers and `part` of a body, waits until the server has read all of it, then
 * destroys the socket: a client gone in the middle of its body. Resolves with the server's side of
 * that request once the app has answered it (there is no one left to read the answer).
 */
async function abandonBody(app: NestExpressApplication, headers: Record<string, string>, part: string): Promise<ServerResponse> {
  const port = await listeningPort(app);
  const server: Server = app.getHttpServer();
  const id = `abandoned-${randomUUID()}`;
  let seen: { req: IncomingMessage; res: ServerResponse } | undefined;
  const spy = (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers['x-request-id'] === id) seen = { req, res };
  };
  server.prependListener('request', spy);
  const client = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/plants', headers: { ...headers, 'X-Request-Id': id } });
  // The client's own side of the reset it makes.
  client.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => client.write(part, (error) => (error ? reject(error) : resolve())));
    const sent = client.socket!.bytesWritten;
    await until(() => seen !== undefined && seen.req.socket.bytesRead >= sent, 'the server had read the headers and the part of the body');
    client.destroy();
    await until(() => seen!.res.writableEnded, 'the app answered the abandoned request');
    return seen!.res;
  } finally {
    client.destroy();
    server.off('request', spy);
  }
}

/** The status body-parser (Express's own JSON parser, which json-body.ts follows) gives the same request. */
async function bodyParserStatus(headers: Record<string, string>, body: string): Promise<number> {
  const app = express();
  app.post('/', express.json(), (_req, res) => void res.sendStatus(200));
  // Four parameters: how Express tells an error handler.
  const refusal: express.ErrorRequestHandler = (error: { status?: number }, _req, res, _next) => void res.sendStatus(error.status ?? 500);
  app.use(refusal);
  return (await request(app).post('/').set(headers).send(body)).status;
}

describe('HTTP rules of every endpoint', () => {
  let t: TestApp;
  let token: string;
  const plantCount = () => t.dataSource.getRepository(Plant).count();

  beforeAll(async () => {
    t = await createTestApp();
    token = await t.tokenFor('acme');
  });
  afterAll(() => t.close());

  it('answers 415 for a body that is not application/json, and writes nothing', async () => {
    const res = await t.http.post('/plants').set(bearer(token)).set('Content-Type', 'text/plain').send('{"name":"fern"}');
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 415, message: 'request body must be sent as application/json' });
    const form = await t.http.post('/locations/nearest').set(bearer(token)).type('form').send({ max_distance: '5' });
    expect(form.status).toBe(415);
    await expect(plantCount()).resolves.toBe(0);
  });

  it('accepts application/json with a charset', async () => {
    const res = await t.http.post('/plants').set(bearer(token)).set('Content-Type', 'application/json; charset=utf-8').send('{"name":"fern"}');
    expect(res.status).toBe(201);
    await t.dataSource.getRepository(Plant).clear();
  });

  it.each<[string, Record<string, string>]>([
    // body-parser refuses every charset but utf-* (charset.unsupported)…
    ['charset latin1', { 'Content-Type': 'application/json; charset=latin1' }],
    ['charset ISO-8859-1', { 'Content-Type': 'application/json; charset=ISO-8859-1' }],
    // …and a utf-* name iconv-lite does not know, before reading the body (charset.unsupported too).
    ['charset utf-bogus', { 'Content-Type': 'application/json; charset=utf-bogus' }],
    // A content encoding it cannot inflate (encoding.unsupported).
    ['Content-Encoding compress', { 'Content-Type': 'application/json', 'Content-Encoding': 'compress' }],
  ])('answers 415 for a JSON body with %s, as body-parser does, and writes nothing', async (_, headers) => {
    const body = '{"name":"fern"}';
    const res = await t.http.post('/plants').set(bearer(token)).set(headers).send(body);
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 415, message: 'request body must be JSON in UTF-8 without content encoding' });
    await expect(bodyParserStatus(headers, body)).resolves.toBe(415);
    await expect(plantCount()).resolves.toBe(0);
  });

  it.each(['{"name":', '{name: "fern"}', '"fern"', 'null', '[1,2'])('answers 400 for the body %j', async (body) => {
    const res = await t.http.post('/plants').set(bearer(token)).set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message: 'request body is not valid JSON' });
    await expect(plantCount()).resolves.toBe(0);
  });

  it('answers 400 when the body is missing', async () => {
    const res = await t.http.post('/plants').set(bearer(token));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message: 'request body must be a JSON object' });
  });

  it.each(['__proto__', 'constructor', 'prototype'])('answers 400 for a %s key, at any depth', async (key) => {
    const res = await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send(`{"customer_address":{"zip":"10001","${key}":{"admin":true}}}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message: `property ${key} is not allowed` });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  describe('a plain body (Content-Length, UTF-8, not compressed) is read without body-parser', () => {
    /** The same bytes sent with Content-Length (read directly), chunked and gzipped (both read by body-parser). */
    async function sendThreeWays(path: string, raw: Buffer): Promise<{ status?: number; body: string }[]> {
      // Two writes each: the direct reader must put a body together from several chunks too.
      const send = (body: Buffer, headers: Record<string, string>) =>
        sendChunks(t.app, {
          method: 'POST',
          path,
          headers: { ...bearer(token), 'Content-Type': 'application/json', ...headers },
          chunks: [body.subarray(0, 3), body.subarray(3)],
        });
      const gzipped = gzipSync(raw);
      return [
        await send(raw, { 'Content-Length': String(raw.length) }),
        await send(raw, {}),
        await send(gzipped, { 'Content-Encoding': 'gzip', 'Content-Length': String(gzipped.length) }),
      ];
    }

    const search = '{"customer_address":{"zip":"10001"},"max_distance":5}';
    it.each<[string, Buffer, number, string | null]>([
      ['a search', Buffer.from(search), 200, null],
      ['a search after a byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(search)]), 200, null],
      ['a search after white space', Buffer.from(`\r\n\t ${search}`), 200, null],
      ['white space only', Buffer.from('   '), 400, 'request body is not valid JSON'],
      ['a string', Buffer.from('"10001"'), 400, 'request body is not valid JSON'],
      ['a trailing comma', Buffer.from('{"max_distance":5,}'), 400, 'request body is not valid JSON'],
      ['an array', Buffer.from('[1]'), 400, 'request body must be a JSON object'],
      ['an escaped __proto__ key', Buffer.from('{"customer_address":{"zip":"10001","\\u005f_proto__":{}}}'), 400, 'property __proto__ is not allowed'],
      ['a byte that is not UTF-8', Buffer.from('{"customer_address":{"zip":"1000\xff"}}', 'latin1'), 400, null],
      ['33 levels', Buffer.from(`{"customer_address":${'['.repeat(32)}${']'.repeat(32)}}`), 400, 'request body is nested too deeply (at most 32 levels)'],
    ])('%s: the same answer every way', async (_, raw, status, message) => {
      const [direct, chunked, gzipped] = await sendThreeWays('/locations/nearest', raw);
      expect(direct.status).toBe(status);
      if (message) expect(JSON.parse(direct.body)).toEqual({ error: 400, message });
      expect(chunked).toEqual(direct);
      expect(gzipped).toEqual(direct);
    });

    it('creates the same plant every way', async () => {
      const raw = Buffer.from('{"name":"fern é","tag":"café 🌿"}');
      const answers = await sendThreeWays('/plants', raw);
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
      const plants = await t.dataSource.getRepository(Plant).find();
      expect(plants.map(({ name, tag }) => ({ name, tag }))).toEqual(Array(3).fill({ name: 'fern é', tag: 'café 🌿' }));
      await t.dataSource.getRepository(Plant).clear();
    });
  });

  it('answers 413 for a body over 16 KiB and takes one of exactly 16 KiB', async () => {
    const big = await t.http
      .post('/plants')
      .set(bearer(token))
      .send({ name: 'x'.repeat(16 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: 413, message: 'request body exceeds the limit of 16384 bytes' });
    const exact = JSON.stringify({ name: 'fern', tag: 't'.repeat(16 * 1024 - 24) });
    expect(Buffer.byteLength(exact)).toBe(16 * 1024);
    const fits = await t.http.post('/plants').set(bearer(token)).set('Content-Type', 'application/json').send(exact);
    expect(fits.status).toBe(400);
    expect(fits.body.message).toBe('tag must be at most 255 characters');
    await expect(plantCount()).resolves.toBe(0);
  });

  it('answers an unknown route with a JSON 404', async () => {
    const res = await t.http.get('/nowhere').set(bearer(token));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 404, message: 'no route for GET /nowhere' });
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const res = await t.http.put('/plants').set(bearer(token)).send({ name: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    expect(res.body).toEqual({ error: 405, message: 'method PUT is not allowed on /plants' });
    // Not the page of a store coded "nearest" (GET /locations/{code} matches the path): POST only, token or not.
    for (const [method, auth] of [
      ['get', bearer(token)],
      ['get', {}],
      ['put', bearer(token)],
      ['delete', {}],
    ] as const) {
      const res = await t.http[method]('/locations/nearest').set(auth);
      expect({ method, status: res.status, allow: res.headers.allow }).toEqual({ method, status: 405, allow: 'POST' });
      expect(res.body).toEqual({ error: 405, message: `method ${method.toUpperCase()} is not allowed on /locations/nearest` });
      expect(res.headers['cache-control']).toBe('no-store');
    }
  });

  describe('X-Request-Id and Cache-Control on every response', () => {
    it.each([
      ['a success', () => t.http.get('/plants').set(bearer(token))],
      ['a 401', () => t.http.get('/plants')],
      ['a 404', () => t.http.get('/nowhere').set(bearer(token))],
      ['a 400', () => t.http.delete('/plants/x').set(bearer(token))],
      ['a health check', () => t.http.get('/health/live')],
      ['the OpenAPI document', () => t.http.get('/docs-json')],
    ])('on %s', async (_, send) => {
      const res = await send();
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('echoes a sane request id and replaces an unsafe one', async () => {
      const kept = await t.http.get('/plants').set(bearer(token)).set('X-Request-Id', 'abc-123.trace:7');
      expect(kept.headers['x-request-id']).toBe('abc-123.trace:7');
      const replaced = await t.http.get('/plants').set(bearer(token)).set('X-Request-Id', 'a b<script>');
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      const long = await t.http.get('/plants').set(bearer(token)).set('X-Request-Id', 'x'.repeat(200));
      expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  it('never answers with more than error and message', async () => {
    for (const res of [
      await t.http.get('/plants'),
      await t.http.get('/nowhere').set(bearer(token)),
      await t.http.post('/plants').set(bearer(token)).send({}),
    ]) {
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
      expect(Number.isInteger(res.body.error)).toBe(true);
      expect(res.body.error).toBe(res.status);
    }
  });
});

// Apart from the block above, so that its app is closed first: one app at a time in the process.
describe('a client that goes away in the middle of its body', () => {
  // An app whose error lines are kept: a 5xx, or any error of the pipeline, is logged there.
  let a: TestApp;
  let logs: ErrorCapture;
  let key: string;
  const names = async () => (await a.dataSource.getRepository(Plant).find({ order: { id: 'ASC' } })).map((p) => p.name);

  beforeAll(async () => {
    logs = new ErrorCapture();
    a = await createTestApp({ logger: logs });
    key = await a.tokenFor('acme');
  });
  afterAll(() => a.close());
  beforeEach(() => logs.errors.splice(0));
  afterEach(() => a.dataSource.getRepository(Plant).clear());

  // Valid JSON on its own: a reader that took what came before the client left as the body would create a plant.
  const PART = '{"name":"half-sent"}';

  it.each<[string, Record<string, string>]>([
    // Read directly (readPlain): the request stream's 'error' (after 'aborted') ends the read.
    ['with a Content-Length larger than it sent, read directly', { 'Content-Length': '64' }],
    // Read by body-parser.
    ['chunked, read by body-parser', {}],
  ])('%s: the request ends as a 400, nothing is written or logged, and the app answers the next request', async (_, length) => {
    const res = await abandonBody(a.app, { ...bearer(key), 'Content-Type': 'application/json', ...length }, PART);
    expect(res.statusCode).toBe(400);
    expect(logs.errors).toEqual([]);
    await expect(names()).resolves.toEqual([]);
    const next = await a.http.post('/plants').set(bearer(key)).set('Content-Type', 'application/json').send('{"name":"fern"}');
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ name: 'fern' });
    await expect(names()).resolves.toEqual(['fern']);
  });
});
