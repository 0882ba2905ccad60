import { spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { runCli } from './support/cli.js';
import { startMariaDb, type MariaDb } from './support/mariadb.js';
import { freePort, startServer, type ServerProcess } from './support/server.js';
import type { TestDatabase } from './support/test-app.js';

/**
 * The database going away under a running service, and not being there at start-up. The
 * test owns its MariaDB server (startMariaDb), so it can stop and restart it; the engine
 * under test does not matter here.
 */
const TIMEOUT = 60_000;
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

/**
 * How long a request during an outage may stay unanswered before the test calls it hung. It bounds
 * a hang only (the server's own timeouts end such a request in a few seconds): no assertion on how
 * long an answer took, which a loaded machine stretches.
 */
const HANG_MS = 30_000;

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A TCP relay in front of the database that can freeze: connections stay open but no byte
 * passes, as when the network drops packets. Only timeouts end requests then. `thaw` ends the
 * frozen connections; `heal` lets new connections through but leaves the frozen ones open and
 * silent for good, as after a failover to another host: only discarding them helps.
 */
async function freezableRelay(
  targetPort: number,
): Promise<{ url: (base: string) => string; freeze(): void; thaw(): void; heal(): void; swallowed(): number; close(): Promise<void> }> {
  let frozen = false;
  let swallowed = 0;
  const sockets = new Set<Socket>();
  const dead = new WeakSet<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (frozen) return void dead.add(client); // accepted, never answered
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => (sockets.delete(upstream), client.destroy()));
    upstream.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    const silent = () => frozen || dead.has(client);
    client.on('data', (chunk) => (silent() ? swallowed++ : upstream.write(chunk)));
    upstream.on('data', (chunk) => silent() || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (base) => base.replace(/@127\.0\.0\.1:\d+\//, `@127.0.0.1:${port}/`),
    freeze: () => {
      frozen = true;
      for (const socket of sockets) dead.add(socket);
    },
    heal: () => void (frozen = false),
    /** Chunks the service sent into frozen connections. */
    swallowed: () => swallowed,
    thaw: () => {
      frozen = false;
      // What was swallowed while frozen is lost: those connections are beyond repair.
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('database outage', () => {
  let db: MariaDb;
  let database: TestDatabase;

  beforeAll(async () => {
    db = await startMariaDb();
    database = { env: { DATABASE_URL: db.url }, drop: () => Promise.resolve() };
  }, TIMEOUT);

  afterAll(async () => {
    await db.destroy();
  }, TIMEOUT);

  describe('while running', () => {
    let server: ServerProcess;
    let auth: { Authorization: string };

    beforeAll(async () => {
      server = await startServer(database, { DB_POOL_SIZE: '3', SHUTDOWN_DRAIN_MS: '0' });
      const created = await runCli(database, ['tokens', 'create', '--team', 'acme']);
      expect(created.code).toBe(0);
      auth = { Authorization: `Bearer ${created.stdout.trim()}` };
    }, TIMEOUT);

    afterAll(async () => {
      await db.start();
      await server.stop();
    }, TIMEOUT);

    it(
      'answers 503 fast while the database is down, then recovers on its own',
      async () => {
        const before = await server.http.post('/plants').set(auth).send({ id: 1, name: 'before' });
        expect(before.status).toBe(201);

        await db.stop();

        // More requests than pool connections, so waiting for a connection must not hang either.
        const responses = await Promise.all(
          [...Array(8).keys()].map((i) =>
            server.http
              .post('/plants')
              .set(auth)
              .timeout(HANG_MS)
              .send({ id: 100 + i, name: 'during' }),
          ),
        );
        for (const res of responses) {
          expect(res.status).toBe(503);
          expect(res.body).toEqual({ error: 503, message: 'the database is unavailable, try again shortly' });
        }

        const list = await server.http.get('/plants').set(auth);
        expect(list.status).toBe(503);
        expect(list.body).toEqual({ error: 503, message: 'the database is unavailable, try again shortly' });

        const ready = await server.http.get('/health/ready');
        expect(ready.status).toBe(503);
        expect(ready.body).toEqual({ error: 503, message: 'the database is not reachable' });
        const live = await server.http.get('/health/live');
        expect(live.status).toBe(200);

        await db.start();
        await waitFor(async () => (await server.http.get('/health/ready')).status === 200, 20_000);

        const after = await server.http.post('/plants').set(auth).send({ id: 2, name: 'after' });
        expect(after.status).toBe(201);
        const listed = await server.http.get('/plants').set(auth);
        expect(listed.status).toBe(200);
        expect(listed.body).toEqual([{ name: 'before' }, { name: 'after' }]);

        const connection = await mysql.createConnection(db.url);
        try {
          const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT id, name FROM plants ORDER BY id');
          expect(rows.map((r) => [Number(r.id), r.name])).toEqual([
            [1, 'before'],
            [2, 'after'],
          ]);
        } finally {
          await connection.end();
        }
      },
      TIMEOUT,
    );
  });

  describe('when the database stops answering (network hang)', () => {
    type Relay = Awaited<ReturnType<typeof freezableRelay>>;
    /** A server whose database connections pass through a relay, with a token of `team`; both closed after `run`. */
    async function behindRelay(
      team: string,
      env: Record<string, string>,
      run: (server: ServerProcess, relay: Relay, auth: { Authorization: string }) => Promise<void>,
    ): Promise<void> {
      const relay = await freezableRelay(db.port);
      const server = await startServer(
        { env: { DATABASE_URL: relay.url(db.url) }, drop: () => Promise.resolve() },
        { DB_CONNECT_TIMEOUT_MS: '1000', SHUTDOWN_DRAIN_MS: '0', ...env },
      );
      try {
        const created = await runCli(database, ['tokens', 'create', '--team', team]);
        expect(created.code).toBe(0);
        await run(server, relay, { Authorization: `Bearer ${created.stdout.trim()}` });
      } finally {
        await server.stop();
        await relay.close();
      }
    }

    it(
      'ends every request with 503 within the configured timeouts, then recovers',
      () =>
        behindRelay('hang', { DB_POOL_SIZE: '2', DB_QUERY_TIMEOUT_MS: '1500' }, async (server, relay, auth) => {
          expect((await server.http.get('/plants').set(auth)).status).toBe(200);

          relay.freeze();
          const responses = await Promise.all([...Array(6).keys()].map(() => server.http.get('/plants').set(auth).timeout(HANG_MS)));
          for (const res of responses) {
            expect(res.status).toBe(503);
            expect(res.body).toEqual({ error: 503, message: 'the database is unavailable, try again shortly' });
          }
          expect((await server.http.get('/health/ready')).status).toBe(503);

          relay.thaw();
          await waitFor(async () => (await server.http.get('/health/ready')).status === 200, 20_000);
          expect((await server.http.get('/plants').set(auth)).status).toBe(200);
        }),
      TIMEOUT,
    );

    // Guards discardOnTimeout (database-options.ts): mysql2 keeps a timed-out query's connection
    // busy, so without it the pool would keep its silent connections and never recover.
    it(
      'recovers when the connections that hung stay silent for good',
      () =>
        behindRelay('failover', { DB_POOL_SIZE: '2', DB_QUERY_TIMEOUT_MS: '1500' }, async (server, relay, auth) => {
          // Both pooled connections open and in use before the network goes.
          await Promise.all([server.http.get('/plants').set(auth), server.http.get('/plants').set(auth)]);

          relay.freeze();
          // Creates go through TypeORM's query runner (GET /plants has a timeout of its own, preparedRead).
          const during = await Promise.all(
            [...Array(4).keys()].map((i) =>
              server.http
                .post('/plants')
                .set(auth)
                .send({ id: 100 + i, name: 'during' }),
            ),
          );
          expect(during.map((res) => res.status)).toEqual([503, 503, 503, 503]);

          relay.heal();
          await waitFor(async () => (await server.http.get('/health/ready')).status === 200, 20_000);
          const after = [];
          for (let i = 0; i < 10; i++) after.push((await server.http.get('/plants').set(auth)).status);
          expect(after).toEqual(Array(10).fill(200));
        }),
      TIMEOUT,
    );

    // Guards limitWaiting (database-options.ts): mysql2 has no acquire timeout, so without it a
    // request queued behind a hung query would wait for that query's whole timeout.
    it(
      'answers a request waiting for a busy pool with 503 before the hung query ends',
      () =>
        behindRelay('queue', { DB_POOL_SIZE: '1', DB_QUERY_TIMEOUT_MS: '15000' }, async (server, relay, auth) => {
          expect((await server.http.get('/plants').set(auth)).status).toBe(200);

          relay.freeze();
          const finished: string[] = [];
          const hung = server.http
            .get('/plants')
            .set(auth)
            .then((res) => (finished.push('hung'), res));
          // The token is cached from the first request: once its query is swallowed, the hung request holds the only connection.
          await waitFor(() => Promise.resolve(relay.swallowed() > 0), 5_000);
          const queued = server.http
            .get('/plants')
            .set(auth)
            .then((res) => (finished.push('queued'), res));
          const [hungRes, queuedRes] = await Promise.all([hung, queued]);
          expect([hungRes.status, queuedRes.status]).toEqual([503, 503]);
          expect(queuedRes.body).toEqual({ error: 503, message: 'the database is unavailable, try again shortly' });
          expect(finished).toEqual(['queued', 'hung']);
        }),
      TIMEOUT,
    );
  });

  describe('at start-up', () => {
    it(
      'retries with a clear log line, then exits non-zero after DB_STARTUP_TIMEOUT_MS',
      async () => {
        await db.stop();
        const env = {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          PORT: '0',
          METRICS_PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: db.url,
          DB_STARTUP_TIMEOUT_MS: '3000',
        };
        const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        // The test's TIMEOUT bounds a hang; that it retried, and for how long, the log says.
        const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
        expect(code).toBe(1);
        expect(output).toMatch(/the database is unreachable \(.*ECONNREFUSED.*\), retrying every 2 s for another \d+ s/);
        expect(output).toContain('the database is still unreachable after 3000 ms (DB_STARTUP_TIMEOUT_MS), giving up');
      },
      TIMEOUT,
    );

    it(
      'starts once the database comes up within DB_STARTUP_TIMEOUT_MS',
      async () => {
        await db.stop();
        const port = await freePort();
        const env = {
          PATH: process.env.PATH,
          NODE_ENV: 'test',
          PORT: String(port),
          METRICS_PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: db.url,
          DB_STARTUP_TIMEOUT_MS: '30000',
          SHUTDOWN_DRAIN_MS: '0',
        };
        const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        try {
          // The database comes back only after the server has found it missing.
          await waitFor(() => Promise.resolve(output.includes('the database is unreachable')), 20_000);
          expect(child.exitCode).toBeNull();
          await db.start();
          await waitFor(
            () =>
              fetch(`http://127.0.0.1:${port}/health/ready`).then(
                (r) => r.status === 200,
                () => false,
              ),
            20_000,
          );
        } finally {
          child.kill('SIGTERM');
          expect(await exited).toBe(0);
        }
      },
      TIMEOUT,
    );
  });
});
