import { generateToken } from '../src/config/token-format.js';
import { Plant } from '../src/plants/plant.entity.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const BAD = () => bearer(generateToken());
/** Every setting of this file, given each time: createTestApp keeps what an earlier app set. */
const limits = (env: Record<string, string>) => ({
  AUTH_FAILURE_LIMIT_PER_MINUTE: '3',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  TRUST_PROXY: 'false',
  REDIS_URL: '',
  ...env,
});

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

describe('RateLimit-Policy and RateLimit headers (IETF draft), for the per-token limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: limits({ TOKEN_RATE_LIMIT_PER_MINUTE: '4' }) });
  });
  afterAll(() => t.close());

  /** `"per-token";r=3;t=59` → { r: 3, t: 59 } */
  const standing = (res: { headers: Record<string, string> }) => {
    const match = /^"per-token";r=(\d+);t=(\d+)$/.exec(res.headers.ratelimit);
    expect(match).not.toBeNull();
    const [r, t] = [Number(match![1]), Number(match![2])];
    expect(t).toBeGreaterThanOrEqual(1);
    expect(t).toBeLessThanOrEqual(60);
    return r;
  };

  it('on every answer to an accepted token, errors included, counting down to the 429, which adds Retry-After', async () => {
    const token = await t.tokenFor('acme');
    const answers = [
      await t.http.get('/plants').set(bearer(token)),
      await t.http.post('/plants').set(bearer(token)).send({ name: '' }),
      await t.http.delete('/plants/7').set(bearer(token)),
      await t.http.get('/plants?limit=0').set(bearer(token)),
      await t.http.get('/plants').set(bearer(token)),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 400, 404, 400, 429]);
    for (const res of answers) expect(res.headers['ratelimit-policy']).toBe('"per-token";q=4;w=60');
    expect(answers.map(standing)).toEqual([3, 2, 1, 0, 0]);
    expectTooMany(answers[4], 'too many requests with this token, try again later');
  });

  it("are the token's own: another token starts with its full quota", async () => {
    const res = await t.http.get('/plants').set(bearer(await t.tokenFor('acme')));
    expect(res.status).toBe(200);
    expect(standing(res)).toBe(3);
  });

  it('are absent where no token was accepted: no token, a bad token, health checks', async () => {
    for (const res of [await t.http.get('/plants'), await t.http.get('/plants').set(BAD()), await t.http.get('/health/live')]) {
      expect([401, 200]).toContain(res.status);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      expect(res.headers.ratelimit).toBeUndefined();
    }
  });
});

describe('without a per-token limit (TOKEN_RATE_LIMIT_PER_MINUTE=0)', () => {
  it('sends no RateLimit headers', async () => {
    const t = await createTestApp({ env: limits({}) });
    try {
      const res = await t.http.get('/plants').set(bearer(await t.tokenFor('acme')));
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
      expect(res.headers.ratelimit).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
