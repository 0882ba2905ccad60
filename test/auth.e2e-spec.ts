import { createHash } from 'node:crypto';
import { generateToken } from '../src/config/token-format.js';
import { Plant } from '../src/plants/plant.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { withClockAt } from './support/clock.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const INVALID = { error: 401, message: 'invalid or expired bearer token' };
const INVALID_CHALLENGE = 'Bearer realm="plant-store", error="invalid_token"';

describe('bearer authentication', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp();
    token = await t.tokenFor('acme');
  });
  afterAll(() => t.close());

  it('answers 401 with a bare challenge when the header is missing', async () => {
    const res = await t.http.get('/plants');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 401, message: 'missing bearer token' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="plant-store"');
  });

  it('accepts a valid token, with the scheme in any case', async () => {
    await t.http.get('/plants').set(bearer(token)).expect(200);
    await t.http.get('/plants').set('Authorization', `bearer ${token}`).expect(200);
  });

  const typo = (value: string) => value.slice(0, 20) + (value[20] === 'a' ? 'b' : 'a') + value.slice(21);
  it.each([
    ['garbage', () => 'Bearer hello'],
    ['a mistyped token (checksum)', () => `Bearer ${typo(token)}`],
    ['a well-formed token never issued', () => `Bearer ${generateToken()}`],
    ['another scheme', () => `Basic ${Buffer.from('acme:secret').toString('base64')}`],
    ['the scheme alone', () => 'Bearer'],
    ['two tokens', () => `Bearer ${token} ${token}`],
    ['the token without a scheme', () => token],
  ])('answers the same 401 for %s', async (_, header) => {
    const res = await t.http.get('/plants').set('Authorization', header());
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(res.headers['www-authenticate']).toBe(INVALID_CHALLENGE);
  });

  it('answers the same 401 for a revoked token', async () => {
    const revoked = await t.app.get(TokensService).create({ team: 'acme' });
    await t.http.get('/plants').set(bearer(revoked.token)).expect(200);
    await t.app.get(TokensService).revoke(revoked.record.id);
    const res = await t.http.get('/plants').set(bearer(revoked.token));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(res.headers['www-authenticate']).toBe(INVALID_CHALLENGE);
  });

  it('answers the same 401 for an expired token', async () => {
    const expired = await t.app.get(TokensService).create({ team: 'acme', expiresInDays: 1 });
    await t.dataSource.getRepository(ApiToken).update({ id: expired.record.id }, { expiresAt: new Date(Date.now() - 1000) });
    const res = await t.http.get('/plants').set(bearer(expired.token));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(res.headers['www-authenticate']).toBe(INVALID_CHALLENGE);
  });

  it('refuses a token whose expiry passes while its look-up is cached', async () => {
    const expiring = await t.app.get(TokensService).create({ team: 'acme', expiresInDays: 1 });
    const expiresAt = Date.now() + 60_000;
    await t.dataSource.getRepository(ApiToken).update({ id: expiring.record.id }, { expiresAt: new Date(expiresAt) });
    await t.http.get('/plants').set(bearer(expiring.token)).expect(200);
    // The expiry passes on the clock the app reads, set by the test rather than waited for.
    const res = await withClockAt(expiresAt + 1, () => t.http.get('/plants').set(bearer(expiring.token)));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
  });

  it('takes the token only from the Authorization header', async () => {
    const query = await t.http.get(`/plants?access_token=${token}`);
    expect(query.status).toBe(401);
    expect(query.body).toEqual({ error: 401, message: 'missing bearer token' });
    const body = await t.http.post('/plants').send({ access_token: token, name: 'sneaky' });
    expect(body.status).toBe(401);
    await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);
  });

  describe('comes before everything else', () => {
    it.each([
      ['an invalid body', () => t.http.post('/plants').send({ name: 5, extra: true })],
      ['a malformed JSON body', () => t.http.post('/plants').set('Content-Type', 'application/json').send('{"name":')],
      ['a body over 16 KiB', () => t.http.post('/plants').send({ name: 'x'.repeat(20_000) })],
      ['a body that is not JSON', () => t.http.post('/plants').set('Content-Type', 'text/plain').send('name=fern')],
      ['an invalid path id', () => t.http.delete('/plants/abc')],
      ['an invalid query', () => t.http.get('/plants?limit=0')],
      ['an invalid search', () => t.http.post('/locations/nearest').send({ customer_address: { zip: 'nope' } })],
    ])('401 rather than the error of %s', async (_, send) => {
      const res = await send();
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 401, message: 'missing bearer token' });
    });

    it('401 with a bad token, too', async () => {
      const res = await t.http.post('/plants').set(bearer(generateToken())).send({ name: 5 });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID);
    });
  });

  it('needs no token for the health checks', async () => {
    await expect(t.http.get('/health/live')).resolves.toMatchObject({ status: 200, body: { status: 'ok' } });
    await expect(t.http.get('/health/ready')).resolves.toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('stores tokens only as a SHA-256 digest and a display prefix', async () => {
    const issued = await t.app.get(TokensService).create({ team: 'audit', name: 'audit' });
    const rows = await t.dataSource.query('SELECT * FROM api_tokens');
    const row = rows.find((r: { id: number | string }) => Number(r.id) === issued.record.id);
    expect(row.token_hash).toBe(createHash('sha256').update(issued.token).digest('hex'));
    expect(row.prefix).toBe(issued.token.slice(0, 10));
    const secret = issued.token.slice(10);
    for (const r of rows) for (const value of Object.values(r)) expect(String(value)).not.toContain(secret);
  });
});
