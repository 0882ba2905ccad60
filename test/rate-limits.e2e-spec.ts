import { Plant } from '../src/plants/plant.entity.js';
import { generateToken } from '../src/auth/token-format.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const BAD = () => bearer(generateToken());
/** Every setting of this file, given each time: createTestApp keeps what an earlier app set. */
const limits = (env: Record<string, string>) => ({ AUTH_FAILURE_LIMIT_PER_MINUTE: '3', TOKEN_RATE_LIMIT_PER_MINUTE: '0', TRUST_PROXY: 'false', REDIS_URL: '', ...env });

function expectTooMany(res: { status: number; body: unknown; headers: Record<string, string> }, message: string) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: 429, message });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}
const BLOCKED = 'too many failed authentication attempts from this address, try again later';

describe('failed authentication, per client address', () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ env: limits({}) });
    token = await t.tokenFor('acme');
  });
  afterAll(() => t.close());

  it('does not count requests without a token', async () => {
    for (let i = 0; i < 5; i++) await t.http.get('/plants').expect(401);
    await t.http.get('/plants').set(bearer(token)).expect(200);
  });

  it('after the limit answers 429 with Retry-After, even for a valid token, and X-Forwarded-For does not help', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await t.http.get('/plants').set(BAD());
      expect(res.status).toBe(401);
    }
    expectTooMany(await t.http.get('/plants').set(bearer(token)), BLOCKED);
    expectTooMany(await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern' }), BLOCKED);
    // TRUST_PROXY=false (the default): a forged header is not a new address.
    expectTooMany(await t.http.get('/plants').set(bearer(token)).set('X-Forwarded-For', '198.51.100.23'), BLOCKED);
    await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);
    // Health checks need no token and stay open.
    await t.http.get('/health/live').expect(200);
  });
});

describe('behind a trusted proxy (TRUST_PROXY=true)', () => {
  it('counts per X-Forwarded-For address', async () => {
    const t = await createTestApp({ env: limits({ TRUST_PROXY: 'true' }) });
    try {
      const token = await t.tokenFor('acme');
      for (let i = 0; i < 3; i++) await t.http.get('/plants').set(BAD()).set('X-Forwarded-For', '203.0.113.7').expect(401);
      expectTooMany(await t.http.get('/plants').set(bearer(token)).set('X-Forwarded-For', '203.0.113.7'), BLOCKED);
      await t.http.get('/plants').set(bearer(token)).set('X-Forwarded-For', '198.51.100.1').expect(200);
    } finally {
      await t.close();
    }
  });
});

describe('requests per token', () => {
  it('answers 429 past the limit, for that token only', async () => {
    const t = await createTestApp({ env: limits({ TOKEN_RATE_LIMIT_PER_MINUTE: '5' }) });
    try {
      const [busy, other] = [await t.tokenFor('acme'), await t.tokenFor('acme')];
      for (let i = 0; i < 5; i++) await t.http.get('/plants').set(bearer(busy)).expect(200);
      expectTooMany(await t.http.post('/plants').set(bearer(busy)).send({ name: 'Fern' }), 'too many requests with this token, try again later');
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);
      await t.http.get('/plants').set(bearer(other)).expect(200);
    } finally {
      await t.close();
    }
  });
});
