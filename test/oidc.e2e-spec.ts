import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { Plant } from '../src/plants/plant.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { withClockAt } from './support/clock.js';
import { bearer, createTestApp, ErrorCapture, type TestApp } from './support/test-app.js';

const INVALID = { error: 401, message: 'invalid or expired bearer token' };
const AUDIENCE = 'plant-store-api';
type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** A stand-in identity provider: discovery document and key set on 127.0.0.1, and a signer. */
class TestIssuer {
  readonly published: JWK[] = [];
  jwksFetches = 0;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') {
        res.end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/jwks` }));
      } else if (req.url === '/jwks') {
        this.jwksFetches++;
        res.end(JSON.stringify({ keys: this.published }));
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  async newKey(kid: string, publish = true): Promise<Key> {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    if (publish) this.published.push({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' });
    return privateKey;
  }

  sign(key: Key, kid: string, claims: JWTPayload = {}, options: { expiresIn?: string | number; iss?: string; aud?: string } = {}) {
    return new SignJWT({ team: 'acme', scope: 'openid write', ...claims })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .setIssuer(options.iss ?? this.url)
      .setAudience(options.aud ?? AUDIENCE)
      .setSubject('alice@acme.example')
      .setIssuedAt()
      .setExpirationTime(options.expiresIn ?? '5m')
      .sign(key);
  }
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('single sign-on with OIDC access tokens', () => {
  const issuer = new TestIssuer();
  let t: TestApp;
  let key: Key;

  beforeAll(async () => {
    await issuer.start();
    key = await issuer.newKey('k1');
    t = await createTestApp({
      env: {
        OIDC_ISSUER: issuer.url,
        OIDC_AUDIENCE: AUDIENCE,
        OIDC_TEAM_CLAIM: 'team',
        OIDC_ADMIN_CLAIM: 'roles',
        OIDC_ADMIN_VALUE: 'plant-store-admin',
        AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await issuer.stop();
  });

  it('OIDC_ADMIN_CLAIM: a token whose claim holds OIDC_ADMIN_VALUE is an admin token (the /admin routes, nothing of a team); a scope claim of admin grants nothing', async () => {
    for (const roles of [['viewer', 'plant-store-admin'], 'viewer plant-store-admin']) {
      const jwt = await issuer.sign(key, 'k1', { roles });
      const issued = await t.http.post('/admin/tokens').set(bearer(jwt)).send({ team: 'acme', scope: 'read' }).expect(201);
      await expect(t.dataSource.getRepository(ApiToken).findOneBy({ id: issued.body.id })).resolves.toMatchObject({ team: 'acme', scope: 'read' });
      await t.http.get('/plants').set(bearer(jwt)).expect(403);
    }
    for (const claims of [{ roles: ['viewer'] }, { roles: 'plant-store-admins' }, { scope: 'openid admin write' }, {}]) {
      const jwt = await issuer.sign(key, 'k1', claims);
      const refused = await t.http.get('/admin/tokens').set(bearer(jwt)).expect(403);
      expect(refused.body).toEqual({ error: 403, message: 'this token is not an admin token; listing tokens needs scope admin' });
    }
  });

  it('accepts a valid token: the team comes from the claim, the scope from `scope`', async () => {
    const jwt = await issuer.sign(key, 'k1');
    const created = await t.http.post('/plants').set(bearer(jwt)).send({ id: 3, name: 'Calathea' });
    expect(created.status).toBe(201);
    await expect(t.dataSource.getRepository(Plant).findOneBy({ team: 'acme', id: 3 })).resolves.toMatchObject({ name: 'Calathea' });
    // An opaque token of the same team sees the plant: one team, whatever the credential.
    const list = await t.http.get('/plants').set(bearer(await t.tokenFor('acme')));
    expect(list.status).toBe(200);
    expect(list.body).toEqual([{ name: 'Calathea' }]);
    expect(issuer.jwksFetches).toBe(1);
  });

  it('caches the key set', async () => {
    const before = issuer.jwksFetches;
    for (let i = 0; i < 3; i++)
      await t.http
        .get('/plants')
        .set(bearer(await issuer.sign(key, 'k1')))
        .expect(200);
    expect(issuer.jwksFetches).toBe(before);
  });

  it('gives a token with scope read only 403 on a create', async () => {
    const jwt = await issuer.sign(key, 'k1', { scope: 'openid read' });
    await t.http.get('/plants').set(bearer(jwt)).expect(200);
    const res = await t.http.post('/plants').set(bearer(jwt)).send({ id: 4, name: 'Pilea' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 403, message: 'this token may only read; creating or deleting plants needs scope write' });
    await expect(t.dataSource.getRepository(Plant).countBy({ team: 'acme', id: 4 })).resolves.toBe(0);
  });

  it('gives a token without a read or write scope 403 everywhere', async () => {
    const res = await t.http.get('/plants').set(bearer(await issuer.sign(key, 'k1', { scope: 'openid profile' })));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 403, message: 'this token has no read scope' });
  });

  it('accepts a token that expired within the clock skew, refuses one beyond it', async () => {
    const now = Math.floor(Date.now() / 1000);
    await t.http
      .get('/plants')
      .set(bearer(await issuer.sign(key, 'k1', {}, { expiresIn: now - 10 })))
      .expect(200);
    const res = await t.http.get('/plants').set(bearer(await issuer.sign(key, 'k1', {}, { expiresIn: now - 120 })));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
  });

  const refused: [string, () => Promise<string>][] = [
    ['a token not valid before a later time', () => issuer.sign(key, 'k1', { nbf: Math.floor(Date.now() / 1000) + 600 })],
    ['a wrong audience', () => issuer.sign(key, 'k1', {}, { aud: 'another-api' })],
    ['a wrong issuer', () => issuer.sign(key, 'k1', {}, { iss: 'https://evil.example' })],
    ['a key the issuer never published', async () => issuer.sign(await issuer.newKey('stranger', false), 'stranger')],
    ['a known key id with another key', async () => issuer.sign(await issuer.newKey('k1', false), 'k1')],
    [
      'alg none',
      () =>
        Promise.resolve(
          `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ iss: issuer.url, aud: AUDIENCE, sub: 'x', team: 'acme', scope: 'write', exp: Math.floor(Date.now() / 1000) + 300 })}.`,
        ),
    ],
    [
      'a tampered payload',
      async () => {
        const [header, , signature] = (await issuer.sign(key, 'k1')).split('.');
        return `${header}.${b64url({ iss: issuer.url, aud: AUDIENCE, sub: 'x', team: 'globex', scope: 'write', exp: Math.floor(Date.now() / 1000) + 300 })}.${signature}`;
      },
    ],
    ['no team claim', () => issuer.sign(key, 'k1', { team: undefined })],
    ['a team claim that is not a team slug', () => issuer.sign(key, 'k1', { team: 'Acme Corp' })],
    [
      'no expiry',
      () =>
        new SignJWT({ team: 'acme', scope: 'write' })
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setIssuer(issuer.url)
          .setAudience(AUDIENCE)
          .setSubject('a')
          .sign(key),
    ],
  ];
  it.each(refused)('answers 401 for %s', async (_, make) => {
    const res = await t.http
      .post('/plants')
      .set(bearer(await make()))
      .send({ id: 99, name: 'Intruder' });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="plant-store", error="invalid_token"');
    await expect(t.dataSource.getRepository(Plant).countBy({ id: 99 })).resolves.toBe(0);
  });

  it('fetches the key set again for an unknown key id, so a key rotation at the issuer just works', async () => {
    const rotated = await issuer.newKey('k2');
    // The key set may be fetched again at most every 5 s (the unknown-key tests above just did):
    // the clock the app reads is set past that by the test instead of waited for.
    const before = issuer.jwksFetches;
    await withClockAt(Date.now() + 5_100, async () =>
      t.http
        .get('/plants')
        .set(bearer(await issuer.sign(rotated, 'k2')))
        .expect(200),
    );
    expect(issuer.jwksFetches).toBe(before + 1);
  });
});

describe('without OIDC_ISSUER', () => {
  it('refuses JWTs like any unknown token', async () => {
    const issuer = new TestIssuer();
    await issuer.start();
    // Empty counts as unset; the describe above left OIDC_ISSUER in this process's environment.
    const t = await createTestApp({ env: { OIDC_ISSUER: '', OIDC_AUDIENCE: '' } });
    try {
      const jwt = await issuer.sign(await issuer.newKey('k1'), 'k1');
      const res = await t.http.get('/plants').set(bearer(jwt));
      expect(res.body).toEqual(INVALID);
      expect(res.status).toBe(401);
      expect(issuer.jwksFetches).toBe(0);
    } finally {
      await t.close();
      await issuer.stop();
    }
  });
});

describe('with the issuer unreachable', () => {
  it('answers 503, not 401: the token may well be valid', async () => {
    const issuer = new TestIssuer();
    await issuer.start();
    const jwt = await issuer.sign(await issuer.newKey('k1'), 'k1');
    await issuer.stop();
    const log = new ErrorCapture();
    const t = await createTestApp({ env: { OIDC_ISSUER: issuer.url, OIDC_AUDIENCE: AUDIENCE }, logger: log });
    try {
      const res = await t.http.get('/plants').set(bearer(jwt));
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 503, message: 'the identity provider cannot be reached, try again shortly' });
      expect(log.errors).toEqual([expect.stringMatching(/GET \/plants failed with 503/)]);
    } finally {
      await t.close();
    }
  });
});
