import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { generateToken } from '../src/config/token-format.js';
import { runCli } from './support/cli.js';
import { TestRedis } from './support/redis.js';
import { startServer, type ServerProcess } from './support/server.js';
import { bearer, createTestApp, createTestDatabase, type TestApp, type TestDatabase } from './support/test-app.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two instances of the service, separate processes on one database, as behind a load balancer. */
describe('several instances on one database', () => {
  let database: TestDatabase;
  let setup: TestApp;
  let redisServer: TestRedis;
  let REDIS_URL: string;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    setup = await createTestApp({ database }); // applies the migrations, issues tokens
    // A redis-server of the test's own on a spare port (or TEST_REDIS_URL).
    redisServer = await TestRedis.create();
    REDIS_URL = redisServer.url;
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  afterAll(async () => {
    await setup.close();
    await database.drop();
    await redisServer?.close();
  });

  // How long the other instances may go on accepting it (TOKEN_CACHE_SECONDS, to the millisecond) is
  // the medium spec's, with a clock it sets (test/medium/tokens.service.medium-spec.ts): here, that
  // separate processes on one database do stop it, with nothing between them but the database.
  it('a revoked token stops working in every instance, each with its look-up cached at the longest', async () => {
    servers.push(...(await Promise.all([0, 1].map(() => startServer(database, { TOKEN_CACHE_SECONDS: '5' })))));
    const listed = await runCli(database, ['tokens', 'create', '--team', 'acme']);
    const token = listed.stdout.trim();
    const id = /token (\d+)/.exec(listed.stderr)![1];
    // Both instances have the token cached now.
    for (const server of servers) await server.http.get('/plants').set(bearer(token)).expect(200);
    const revoked = await runCli(database, ['tokens', 'revoke', id]);
    expect(revoked.code).toBe(0);
    for (const server of servers) {
      // Polled: the deadline only bounds a hang (a cache that never lets go), far past the 5 s.
      const deadline = Date.now() + 30_000;
      let res = await server.http.get('/plants').set(bearer(token));
      while (res.status === 200 && Date.now() < deadline) {
        await sleep(100);
        res = await server.http.get('/plants').set(bearer(token));
      }
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 401, message: 'invalid or expired bearer token' });
    }
  }, 60_000);

  it('with REDIS_URL, the instances share one limit of failed authentications', async () => {
    const prefix = `plant-store-i4-test-${randomBytes(4).toString('hex')}:`;
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, AUTH_FAILURE_LIMIT_PER_MINUTE: '4' };
    servers.push(...(await Promise.all([0, 1].map(() => startServer(database, env)))));
    const token = await setup.tokenFor('acme');
    const [a, b] = servers;
    for (const server of [a, b, a, b]) await server.http.get('/plants').set(bearer(generateToken())).expect(401);
    // Each instance saw only 2 failures; together they reached the limit of 4.
    for (const server of [a, b]) {
      const res = await server.http.get('/plants').set(bearer(token));
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 429, message: 'too many failed authentication attempts from this address, try again later' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
  }, 60_000);

  it('without REDIS_URL, each instance counts on its own', async () => {
    const env = { REDIS_URL: '', AUTH_FAILURE_LIMIT_PER_MINUTE: '4' };
    servers.push(...(await Promise.all([0, 1].map(() => startServer(database, env)))));
    const token = await setup.tokenFor('acme');
    const [a, b] = servers;
    for (const server of [a, b, a, b]) await server.http.get('/plants').set(bearer(generateToken())).expect(401);
    for (const server of [a, b]) await server.http.get('/plants').set(bearer(token)).expect(200);
  }, 60_000);
});
