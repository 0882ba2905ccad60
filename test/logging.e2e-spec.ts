import { createRequire } from 'node:module';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { createToken } from './support/cli.js';
import { startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, engine, type TestDatabase } from './support/test-app.js';

const TIMEOUT = 60_000;
/** better-sqlite3 ships no types; the two calls used here. */
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => { exec(sql: string): void; close(): void };

type Line = Record<string, unknown>;

describe('structured logs', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    token = await createToken(database, 'acme');
    server = await startServer(database, { LOG_LEVEL: 'log', TRUST_PROXY: '1', SHUTDOWN_DRAIN_MS: '0' });
  }, TIMEOUT);

  afterAll(async () => {
    await server.stop();
    await database.drop();
  }, TIMEOUT);

  /** The server's output, every line parsed: a line that is not JSON fails the test here. */
  const lines = (): Line[] =>
    server
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Line);

  /** Runs one statement on the test database from outside the server, as an operator's mistake would. */
  async function sql(statement: string): Promise<void> {
    if (engine === 'mysql') {
      const connection = await mysql.createConnection(database.env.DATABASE_URL);
      await connection.query(statement).finally(() => connection.end());
    } else {
      const db = new Database(join(database.env.DATA_DIR, 'plant-store.sqlite'));
      try {
        db.exec(statement);
      } finally {
        db.close();
      }
    }
  }

  /** Every line with this request id, once at least `count` are there. */
  async function linesFor(requestId: string, count: number): Promise<Line[]> {
    for (let i = 0; i < 100; i++) {
      const found = lines().filter((l) => l.reqId === requestId);
      if (found.length >= count) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    return lines().filter((l) => l.reqId === requestId);
  }

  /** The one line of the request itself (written when its response is done). */
  async function lineFor(requestId: string): Promise<Line> {
    // The line is written when the response is done, in a batch flushed at least every
    // LOG_FLUSH_MS (1 s): a quiet server's line must still arrive, within a few seconds.
    for (let i = 0; i < 100; i++) {
      // The request's own line; its other lines (audit, errors) carry its reqId too.
      const found = lines().filter((l) => l.reqId === requestId && typeof l.method === 'string');
      if (found.length > 0) {
        expect(found).toHaveLength(1);
        return found[0];
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no log line for request ${requestId}`);
  }

  it(
    'writes one JSON line per request: id, method, route, status, duration, team',
    async () => {
      const res = await server.http
        .post('/plants')
        .set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'log-create-1', 'X-Forwarded-For': '203.0.113.7' })
        .send({ id: 7, name: 'Fern' });
      expect(res.status).toBe(201);
      const line = await lineFor('log-create-1');
      expect(line).toMatchObject({
        level: 'info',
        msg: 'request completed',
        method: 'POST',
        url: '/plants',
        route: '/plants',
        status: 201,
        team: 'acme',
        remoteAddress: '203.0.113.7',
      });
      expect(typeof line.durationMs).toBe('number');
      expect(typeof line.time).toBe('string');

      const deleted = await server.http.delete('/plants/999').set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'log-delete-1' });
      expect(deleted.status).toBe(404);
      expect(await lineFor('log-delete-1')).toMatchObject({ method: 'DELETE', url: '/plants/999', route: '/plants/:id', status: 404, team: 'acme' });

      const anonymous = await server.http.get('/plants').set('X-Request-Id', 'log-anonymous-1');
      expect(anonymous.status).toBe(401);
      expect(await lineFor('log-anonymous-1')).toMatchObject({ route: '/plants', status: 401, team: null });

      const unknown = await server.http.get('/nowhere').set('X-Request-Id', 'log-unknown-1');
      expect(unknown.status).toBe(404);
      expect(await lineFor('log-unknown-1')).toMatchObject({ route: null, status: 404 });
    },
    TIMEOUT,
  );

  it(
    'names the request in every line written while it is handled: its audit line and its logged 500',
    async () => {
      const created = await server.http
        .post('/plants')
        .set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'log-audit-1' })
        .send({ id: 8, name: 'Ivy' });
      expect(created.status).toBe(201);
      expect(created.headers['x-request-id']).toBe('log-audit-1');
      const audit = await linesFor('log-audit-1', 2);
      expect(audit.map((l) => l.msg ?? l.event).sort()).toEqual(['plant.created', 'request completed']);
      expect(audit.find((l) => l.event === 'plant.created')).toMatchObject({ context: 'Audit', team: 'acme', plantId: 8 });

      // A fault the service cannot map to a 4xx or 503: a column gone from under it.
      await sql('ALTER TABLE plants RENAME COLUMN tag TO tag_gone');
      try {
        const failed = await server.http.get('/plants').set({ Authorization: `Bearer ${token}` });
        expect(failed.status).toBe(500);
        const reqId = failed.headers['x-request-id'];
        expect(typeof reqId).toBe('string');
        const errorLines = await linesFor(reqId, 2);
        expect(errorLines).toHaveLength(2);
        expect(errorLines.every((l) => l.level === 'error')).toBe(true);
        expect(errorLines.find((l) => l.context === 'Exceptions')?.msg).toContain(`request ${reqId} GET /plants failed with 500`);
        expect(errorLines.find((l) => l.msg === 'request failed')).toMatchObject({ route: '/plants', status: 500 });
        // Without tracing, no trace ids.
        expect(errorLines.some((l) => 'traceId' in l)).toBe(false);
      } finally {
        await sql('ALTER TABLE plants RENAME COLUMN tag_gone TO tag');
      }
    },
    TIMEOUT,
  );

  it(
    'never writes a token or an Authorization header, however the token was sent',
    async () => {
      const res = await server.http
        .get(`/plants?access_token=${token}&limit=5`)
        .set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'log-redact-1', Cookie: `session=${token}` })
        .send();
      expect(res.status).toBe(400);
      const wrongPlace = await server.http.get(`/plants/${token}`).set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'log-redact-2' });
      expect(wrongPlace.status).toBe(405);
      // The token with its last character changed (to another one: a token may end in "x").
      const wrong = `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;
      const bad = await server.http.get('/plants').set({ Authorization: `Bearer ${wrong}`, 'X-Request-Id': 'log-redact-3' });
      expect(bad.status).toBe(401);

      expect(await lineFor('log-redact-1')).toMatchObject({ url: '/plants?access_token=[REDACTED]&limit=5', status: 400 });
      expect(await lineFor('log-redact-2')).toMatchObject({ url: '/plants/pst_[REDACTED]' });
      await lineFor('log-redact-3');
      const output = server.output();
      expect(output).not.toContain(token);
      expect(output).not.toContain(token.slice(4, 30));
      expect(output.toLowerCase()).not.toContain('bearer ');
    },
    TIMEOUT,
  );
});
