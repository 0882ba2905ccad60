import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_ON_TEAM_ROUTE } from '../src/common/auth.decorators.js';
import { hashToken, isWellFormedToken } from '../src/config/token-format.js';
import { Plant } from '../src/plants/plant.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { startServer } from './support/server.js';
import { bearer, createTestApp, createTestDatabase, type TestApp } from './support/test-app.js';
import { AuditCapture } from './support/audit.js';

/** This file's settings, given each time: createTestApp keeps what an earlier app set. */
const ENV = {
  TOKEN_DEFAULT_TTL_DAYS: '0',
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  ADMIN_TOKEN_FILE: '',
};
const DAY = 86_400_000;

/** Keeps the audit lines: what Nest's Logger is given, before any formatting. */
/** Every admin route, with a body that would be valid, for the refusals that come before it. */
const ROUTES = [
  ['post', '/admin/tokens', { team: 'acme' }],
  ['get', '/admin/tokens', undefined],
  ['get', '/admin/tokens/1', undefined],
  ['delete', '/admin/tokens/1', undefined],
  ['post', '/admin/tokens/1/rotate', { grace_seconds: 60 }],
] as const;

describe('admin API: tokens', () => {
  let t: TestApp;
  let admin: string;
  let adminId: number;
  let audit: AuditCapture;
  const rows = () => t.dataSource.getRepository(ApiToken);
  const send = (method: 'get' | 'post' | 'delete', path: string, token: string | undefined, body?: object) => {
    const req = t.http[method](path);
    if (token) req.set(bearer(token));
    return body ? req.send(body) : req;
  };

  beforeAll(async () => {
    audit = new AuditCapture();
    t = await createTestApp({ env: ENV, logger: audit });
    const issued = await t.app.get(TokensService).create({ team: 'ops', name: 'operator', scope: 'admin' });
    admin = issued.token;
    adminId = issued.record.id;
  });
  afterAll(() => t.close());
  beforeEach(() => {
    audit.entries.splice(0);
  });

  describe('who may call it', () => {
    it.each(ROUTES)('%s %s: 401 without a token, 403 for read and write tokens, and nothing changes', async (method, path, body) => {
      const count = await rows().count();
      const noToken = await send(method, path, undefined, body).expect(401);
      expect(noToken.body).toEqual({ error: 401, message: 'missing bearer token' });
      for (const scope of ['read', 'write'] as const) {
        const { token } = await t.app.get(TokensService).create({ team: 'acme', scope });
        const refused = await send(method, path, token, body).expect(403);
        expect(refused.body).toEqual({
          error: 403,
          message: expect.stringMatching(/^this token is not an admin token; \w+ tokens needs scope admin$/) as string,
        });
      }
      await expect(rows().count()).resolves.toBe(count + 2);
      expect(audit.entries).toEqual([]);
    });

    it('refuses an admin token on every operation of the spec with 403, writing nothing', async () => {
      await t.dataSource.getRepository(Plant).insert({ team: 'ops', id: 1, name: 'kept', tag: null });
      const nearest = { customer_address: { zip: '10001' }, max_distance: 5 };
      for (const req of [
        t.http.get('/plants').set(bearer(admin)),
        t.http.post('/plants').set(bearer(admin)).send({ name: 'Fern' }),
        t.http.delete('/plants/1').set(bearer(admin)),
        t.http.post('/locations/nearest').set(bearer(admin)).send(nearest),
      ]) {
        const res = await req.expect(403);
        expect(res.body).toEqual({ error: 403, message: ADMIN_ON_TEAM_ROUTE });
      }
      await expect(t.dataSource.getRepository(Plant).find()).resolves.toMatchObject([{ team: 'ops', id: 1, name: 'kept' }]);
      await t.dataSource.getRepository(Plant).clear();
    });
  });

  describe('POST /admin/tokens', () => {
    it('issues a token shown once, with Location; the row keeps only its digest; the token works', async () => {
      const res = await send('post', '/admin/tokens', admin, { team: 'acme', name: 'checkout', expires_in_days: 30, scope: 'write' }).expect(201);
      const { token, ...view } = res.body as { token: string; id: number };
      expect(res.headers.location).toBe(`/admin/tokens/${view.id}`);
      expect(view).toEqual({
        id: expect.any(Number),
        team: 'acme',
        name: 'checkout',
        scope: 'write',
        prefix: token.slice(0, 10),
        created_at: expect.any(String),
        expires_at: expect.any(String),
        last_used_at: null,
        revoked_at: null,
        replaced_by: null,
      });
      const row = await rows().findOneByOrFail({ id: view.id });
      expect(row).toMatchObject({ team: 'acme', name: 'checkout', scope: 'write', tokenHash: hashToken(token), revokedAt: null, replacedBy: null });
      expect(row.expiresAt!.getTime() - row.createdAt.getTime()).toBeGreaterThan(30 * DAY - 5000);
      expect(Object.values(row)).not.toContain(token);
      await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern' }).expect(201);
      await t.dataSource.getRepository(Plant).clear();
      expect(audit.entries).toEqual([
        { event: 'admin.token.created', team: 'ops', tokenId: adminId, target: { tokenId: view.id, team: 'acme', scope: 'write' } },
        { event: 'plant.created', team: 'acme', tokenId: view.id, plantId: 1 },
      ]);
      expect(JSON.stringify(audit.entries)).not.toContain(token.slice(4));
    });

    it('issues write tokens by default and admin tokens on request', async () => {
      const plain = await send('post', '/admin/tokens', admin, { team: 'acme' }).expect(201);
      expect(plain.body).toMatchObject({ scope: 'write', name: null, expires_at: null });
      const second = await send('post', '/admin/tokens', admin, { team: 'ops', scope: 'admin' }).expect(201);
      await send('get', '/admin/tokens', (second.body as { token: string }).token).expect(200);
    });

    it.each([
      [{}, 'team is required', { field: 'team', code: 'empty', message: 'is required' }],
      [
        { team: 'Acme' },
        'team must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters)',
        { field: 'team', code: 'bad_team', message: 'must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters)' },
      ],
      [
        { team: 'acme', scope: 'owner' },
        'scope must be one of read, write, admin',
        { field: 'scope', code: 'bad_scope', message: 'must be one of read, write, admin' },
      ],
      [
        { team: 'acme', expires_in_days: 0 },
        'expires_in_days must be an integer from 1 to 3650',
        { field: 'expires_in_days', code: 'bad_integer', message: 'must be an integer from 1 to 3650' },
      ],
      [
        { team: 'acme', expires_in_days: '30' },
        'expires_in_days must be an integer from 1 to 3650',
        { field: 'expires_in_days', code: 'bad_integer', message: 'must be an integer from 1 to 3650' },
      ],
      [
        { team: 'acme', name: 'x'.repeat(101) },
        'name must be 1 to 100 characters',
        { field: 'name', code: 'too_long', message: 'must be 1 to 100 characters' },
      ],
      [{ team: 'acme', colour: 'red' }, 'unknown field colour', { field: 'colour', code: 'unknown_field', message: 'unknown field' }],
    ])('refuses %j with 400 naming the field, the problem as data, and writes nothing', async (body, message, problem) => {
      const count = await rows().count();
      const res = await send('post', '/admin/tokens', admin, body).expect(400);
      expect(res.body).toEqual({ error: 400, message: expect.stringContaining(message) as string, problems: [problem] });
      await expect(rows().count()).resolves.toBe(count);
      expect(audit.entries).toEqual([]);
    });
  });

  describe('GET /admin/tokens', () => {
    it('pages by id with a Link to the next page, filters by team, and never shows a token or a digest', async () => {
      const tokens = t.app.get(TokensService);
      for (let i = 0; i < 3; i++) await tokens.create({ team: 'paged' });
      const ids = (await rows().find({ where: { team: 'paged' }, order: { id: 'ASC' } })).map((r) => r.id);
      const first = await send('get', '/admin/tokens?team=paged&limit=2', admin).expect(200);
      expect((first.body as Array<{ id: number }>).map((r) => r.id)).toEqual(ids.slice(0, 2));
      expect(first.headers.link).toBe(`</admin/tokens?limit=2&after=${ids[1]}&team=paged>; rel="next"`);
      const second = await send('get', `/admin/tokens?team=paged&limit=2&after=${ids[1]}`, admin).expect(200);
      expect((second.body as Array<{ id: number }>).map((r) => r.id)).toEqual(ids.slice(2));
      expect(second.headers.link).toBeUndefined();
      const all = await send('get', '/admin/tokens?limit=1000', admin).expect(200);
      expect((all.body as unknown[]).length).toBe(await rows().count());
      const digests = (await rows().find()).map((r) => r.tokenHash);
      for (const digest of digests) expect(JSON.stringify(all.body)).not.toContain(digest);
      for (const row of all.body as object[])
        expect(Object.keys(row).sort()).toEqual([
          'created_at',
          'expires_at',
          'id',
          'last_used_at',
          'name',
          'prefix',
          'replaced_by',
          'revoked_at',
          'scope',
          'team',
        ]);
    });

    it.each(['limit=0', 'limit=1001', 'team=NOPE', 'after=-1', 'colour=red'])('refuses ?%s with 400', async (query) => {
      const res = await send('get', `/admin/tokens?${query}`, admin).expect(400);
      expect(res.body.error).toBe(400);
    });

    it('shows one token by id; 404 for an unknown id, 400 for a malformed one', async () => {
      const res = await send('get', `/admin/tokens/${adminId}`, admin).expect(200);
      expect(res.body).toMatchObject({ id: adminId, team: 'ops', name: 'operator', scope: 'admin' });
      await expect(send('get', '/admin/tokens/987654', admin).expect(404)).resolves.toMatchObject({ body: { error: 404, message: 'token 987654 not found' } });
      await expect(send('get', '/admin/tokens/01', admin).expect(400)).resolves.toMatchObject({
        body: { error: 400, message: 'token id must be a positive integer' },
      });
    });
  });

  describe('DELETE /admin/tokens/{id}', () => {
    it('revokes: 204, revoked_at set, the token refused at once; again: 204 and nothing changes; unknown: 404', async () => {
      const { token, record } = await t.app.get(TokensService).create({ team: 'acme' });
      await t.http.get('/plants').set(bearer(token)).expect(200);
      await send('delete', `/admin/tokens/${record.id}`, admin).expect(204);
      const revokedAt = (await rows().findOneByOrFail({ id: record.id })).revokedAt;
      expect(revokedAt).toBeInstanceOf(Date);
      await t.http.get('/plants').set(bearer(token)).expect(401);
      await send('delete', `/admin/tokens/${record.id}`, admin).expect(204);
      await expect(rows().findOneByOrFail({ id: record.id })).resolves.toMatchObject({ revokedAt });
      await send('delete', '/admin/tokens/987654', admin).expect(404);
      expect(audit.entries).toEqual([
        { event: 'admin.token.revoked', team: 'ops', tokenId: adminId, target: { tokenId: record.id, team: 'acme' } },
        { event: 'admin.token.revoked', team: 'ops', tokenId: adminId, target: { tokenId: record.id, team: 'acme' } },
      ]);
    });
  });

  describe('POST /admin/tokens/{id}/rotate', () => {
    it('issues a replacement (201, Location) and shortens the old token to the grace period; a second rotate is 409 naming the replacement', async () => {
      const { token, record } = await t.app.get(TokensService).create({ team: 'acme', name: 'bot', scope: 'read' });
      const before = Date.now();
      const res = await send('post', `/admin/tokens/${record.id}/rotate`, admin, { grace_seconds: 3600, expires_in_days: 7 }).expect(201);
      const body = res.body as { id: number; token: string; replaces: { id: number; expires_at: string; replaced_by: number } };
      expect(res.headers.location).toBe(`/admin/tokens/${body.id}`);
      expect(body).toMatchObject({ team: 'acme', name: 'bot', scope: 'read', replaced_by: null, replaces: { id: record.id, replaced_by: body.id } });
      const old = await rows().findOneByOrFail({ id: record.id });
      expect(old.replacedBy).toBe(body.id);
      expect(old.expiresAt!.getTime()).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
      expect(old.expiresAt!.getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);
      await expect(rows().findOneByOrFail({ id: body.id })).resolves.toMatchObject({ tokenHash: hashToken(body.token), scope: 'read' });
      await t.http.get('/plants').set(bearer(token)).expect(200);
      await t.http.get('/plants').set(bearer(body.token)).expect(200);

      const count = await rows().count();
      const again = await send('post', `/admin/tokens/${record.id}/rotate`, admin, { grace_seconds: 0 }).expect(409);
      expect(again.body).toEqual({ error: 409, message: `token ${record.id} was already rotated; its replacement is token ${body.id}` });
      await expect(rows().count()).resolves.toBe(count);
      expect(audit.entries).toEqual([
        { event: 'admin.token.rotated', team: 'ops', tokenId: adminId, target: { tokenId: record.id, team: 'acme', replacement: body.id } },
      ]);
    });

    it('of concurrent rotates of one token exactly one is 201 and the rest 409, with one replacement written', async () => {
      for (let round = 0; round < 3; round++) {
        const { record } = await t.app.get(TokensService).create({ team: 'race' });
        const count = await rows().count();
        const answers = await Promise.all(Array.from({ length: 4 }, () => send('post', `/admin/tokens/${record.id}/rotate`, admin, { grace_seconds: 60 })));
        expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409]);
        await expect(rows().count()).resolves.toBe(count + 1);
      }
    });

    it('answers 409 for a revoked token, 404 for an unknown one and 400 for a bad body, issuing nothing', async () => {
      const { record } = await t.app.get(TokensService).create({ team: 'acme' });
      await t.app.get(TokensService).revoke(record.id);
      const count = await rows().count();
      await expect(send('post', `/admin/tokens/${record.id}/rotate`, admin, { grace_seconds: 60 }).expect(409)).resolves.toMatchObject({
        body: { error: 409, message: `token ${record.id} is revoked; issue a new one with tokens create` },
      });
      await send('post', '/admin/tokens/987654/rotate', admin, { grace_seconds: 60 }).expect(404);
      for (const body of [{}, { grace_seconds: -1 }, { grace_seconds: 1.5 }, { grace_seconds: 60, expires_in_days: 0 }]) {
        const res = await send('post', `/admin/tokens/${record.id}/rotate`, admin, body).expect(400);
        expect(res.body.message).toMatch(/^(grace_seconds|expires_in_days) /);
      }
      await expect(rows().count()).resolves.toBe(count);
    });
  });
});

describe('admin tokens from elsewhere', () => {
  it('ADMIN_TOKEN_FILE: the token in the file (from tokens generate) is an admin token, named admin-file in audit lines; only its digest is kept', async () => {
    const scratch = await createTestDatabase();
    const generated = await runCli(scratch, ['tokens', 'generate']);
    await scratch.drop();
    expect(generated.code).toBe(0);
    const token = generated.stdout.trim();
    expect(isWellFormedToken(token)).toBe(true);
    const file = join(mkdtempSync(join(tmpdir(), 'plant-store-admin-')), 'admin-token');
    writeFileSync(file, `${token}\n`);
    const audit = new AuditCapture();
    const t = await createTestApp({ env: { ...ENV, ADMIN_TOKEN_FILE: file }, logger: audit });
    try {
      const res = await t.http.post('/admin/tokens').set(bearer(token)).send({ team: 'acme' }).expect(201);
      expect(audit.entries).toEqual([
        { event: 'admin.token.created', team: 'admin', tokenId: 'admin-file', target: { tokenId: res.body.id, team: 'acme', scope: 'write' } },
      ]);
      await t.http.get('/plants').set(bearer(token)).expect(403);
      await expect(t.dataSource.getRepository(ApiToken).countBy({ tokenHash: hashToken(token) })).resolves.toBe(0);
    } finally {
      await t.close();
    }
  });

  it.each([
    ['a file that holds no token', 'not a token\n', 'ADMIN_TOKEN_FILE: the file must hold one token'],
    ['a missing file', null, 'ADMIN_TOKEN_FILE: cannot read the file'],
  ])('ADMIN_TOKEN_FILE naming %s stops start-up, naming the setting', async (_, content, message) => {
    const file = join(mkdtempSync(join(tmpdir(), 'plant-store-admin-')), 'admin-token');
    if (content !== null) writeFileSync(file, content);
    await expect(createTestApp({ env: { ...ENV, ADMIN_TOKEN_FILE: file } })).rejects.toThrow(message);
  });

  it("counts admin requests against the acting token's limit (TOKEN_RATE_LIMIT_PER_MINUTE)", async () => {
    const t = await createTestApp({ env: { ...ENV, TOKEN_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const { token } = await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await t.http.get('/admin/tokens').set(bearer(token))).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await t.close();
    }
  });

  it('a token revoked through one instance fails on another within TOKEN_CACHE_SECONDS', async () => {
    const env = { ...ENV, TOKEN_CACHE_SECONDS: '2' };
    const a = await createTestApp({ env });
    // The other instance is a process of its own, as in production (test/support/server.ts).
    const b = await startServer(a.database, env);
    try {
      const { token: adminToken } = await a.app.get(TokensService).create({ team: 'ops', scope: 'admin' });
      const { token, record } = await a.app.get(TokensService).create({ team: 'acme' });
      await b.http.get('/plants').set(bearer(token)).expect(200);
      await a.http.delete(`/admin/tokens/${record.id}`).set(bearer(adminToken)).expect(204);
      // Polled every 250 ms: the cache of B may keep the token for up to 2 s, never 5 s (20 tries).
      let tries = 0;
      while ((await b.http.get('/plants').set(bearer(token))).status === 200) {
        tries++;
        expect(tries).toBeLessThan(20);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await b.http.get('/plants').set(bearer(token)).expect(401);
    } finally {
      await b.stop();
      await a.close();
    }
  });
});
