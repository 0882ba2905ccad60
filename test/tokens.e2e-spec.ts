import { Plant } from '../src/plants/plant.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { bearer, createTestApp, createTestDatabase, type TestApp } from './support/test-app.js';
import { AuditCapture } from './support/audit.js';

const HOUR = 3_600_000;
/** This file's settings, given each time: createTestApp keeps what an earlier app set. */
const ENV = { TOKEN_DEFAULT_TTL_DAYS: '0', TOKEN_CACHE_SECONDS: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', OIDC_ISSUER: '', REDIS_URL: '' };
const INVALID = { error: 401, message: 'invalid or expired bearer token' };
const READ_ONLY = { error: 403, message: 'this token may only read; creating or deleting plants needs scope write' };

describe('token lifecycle', () => {
  let t: TestApp;
  const repo = () => t.dataSource.getRepository(ApiToken);
  const create = async (args: string[]) => {
    const result = await runCli(t.database, ['tokens', 'create', ...args]);
    expect(result.code).toBe(0);
    return { token: result.stdout.trim(), id: Number(/token (\d+)/.exec(result.stderr)![1]) };
  };

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
  });
  afterAll(() => t.close());

  it('TOKEN_DEFAULT_TTL_DAYS=0: a token issued without --expires-in-days never expires', async () => {
    const { id } = await t.app
      .get(TokensService)
      .create({ team: 'acme' })
      .then((r) => r.record);
    await expect(repo().findOneByOrFail({ id })).resolves.toMatchObject({ expiresAt: null });
  });

  it('records last use in batches, not on every request, and tokens list shows it', async () => {
    const { token, id } = await create(['--team', 'acme', '--name', 'used']);
    // The periodic flush (every LAST_USED_FLUSH_MS) stops here, so that only the flush below can
    // write: on a loaded machine it came between the requests and the first check.
    const tokens = t.app.get(TokensService);
    clearInterval(tokens['flushTimer']);
    const before = Date.now();
    for (let i = 0; i < 3; i++) await t.http.get('/plants').set(bearer(token)).expect(200);
    await expect(repo().findOneByOrFail({ id })).resolves.toMatchObject({ lastUsedAt: null });
    await tokens.flushLastUsed();
    const { lastUsedAt } = await repo().findOneByOrFail({ id });
    expect(lastUsedAt!.getTime()).toBeGreaterThanOrEqual(before - 5);
    expect(lastUsedAt!.getTime()).toBeLessThanOrEqual(Date.now());
    const listed = await runCli(t.database, ['tokens', 'list', '--team', 'acme']);
    const line = listed.stdout.split('\n').find((l) => l.startsWith(`${id}\t`))!;
    expect(line.split('\t')[6]).toBe(lastUsedAt!.toISOString());
  });

  it('rotate issues a replacement with the same team, name and scope; the old token works until the grace period ends', async () => {
    const old = await create(['--team', 'acme', '--name', 'deploy bot', '--scope', 'read', '--expires-in-days', '30']);
    const result = await runCli(t.database, ['tokens', 'rotate', String(old.id), '--grace', '30m']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^pst_[0-9A-Za-z]{49}\n$/);
    const replacement = result.stdout.trim();
    const rows = await repo().find({ where: { name: 'deploy bot' }, order: { id: 'ASC' } });
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ team: 'acme', scope: 'read', revokedAt: null, expiresAt: null });
    expect(rows[0].expiresAt!.getTime() - Date.now()).toBeGreaterThan(0.5 * HOUR - 60_000);
    expect(rows[0].expiresAt!.getTime() - Date.now()).toBeLessThanOrEqual(0.5 * HOUR);
    await t.http.get('/plants').set(bearer(old.token)).expect(200);
    await t.http.get('/plants').set(bearer(replacement)).expect(200);

    const again = await runCli(t.database, ['tokens', 'rotate', String(rows[1].id), '--grace', '0', '--expires-in-days', '7']);
    expect(again.code).toBe(0);
    const res = await t.http.get('/plants').set(bearer(replacement));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(INVALID);
    await t.http.get('/plants').set(bearer(again.stdout.trim())).expect(200);
    // Ids only grow (a Galera cluster steps them by its size): the newest of the three is last.
    const all = await repo().find({ where: { name: 'deploy bot' }, order: { id: 'ASC' } });
    expect(all).toHaveLength(3);
    expect(all[1].id).toBe(rows[1].id);
    const newest = all[2];
    expect(newest).toMatchObject({ team: 'acme', scope: 'read', revokedAt: null });
    expect(newest.expiresAt!.getTime() - Date.now()).toBeGreaterThan(7 * 24 * HOUR - 60_000);
  });

  it('rotate keeps an expiry that comes before the end of the grace period', async () => {
    const soon = await create(['--team', 'acme', '--expires-in-days', '1']);
    const before = (await repo().findOneByOrFail({ id: soon.id })).expiresAt!;
    await expect(runCli(t.database, ['tokens', 'rotate', String(soon.id), '--grace', '7d'])).resolves.toMatchObject({ code: 0 });
    await expect(repo().findOneByOrFail({ id: soon.id })).resolves.toMatchObject({ expiresAt: before });
  });

  it.each([
    [['tokens', 'rotate', '1'], "required option '--grace <duration>' not specified"],
    [['tokens', 'rotate', '1', '--grace', '5'], 'must be 0 or a whole number with a unit'],
    [['tokens', 'rotate', '1', '--grace', '-1h'], 'must be 0 or a whole number with a unit'],
    [['tokens', 'rotate', '1', '--grace', '3651d'], 'must be at most 3650 days'],
    [['tokens', 'rotate', '99999', '--grace', '1h'], 'token 99999 not found'],
    [['tokens', 'create', '--team', 'acme', '--scope', 'owner'], 'must be read or write or admin'],
  ])('%j fails with a message', async (args, message) => {
    const count = await repo().count();
    const result = await runCli(t.database, args);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    await expect(repo().count()).resolves.toBe(count);
  });

  it('refuses to rotate a revoked token', async () => {
    const { id } = await create(['--team', 'acme']);
    await runCli(t.database, ['tokens', 'revoke', String(id)]);
    const result = await runCli(t.database, ['tokens', 'rotate', String(id), '--grace', '1h']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`token ${id} is revoked`);
  });

  it('refuses to rotate a token a second time, naming its replacement, and issues nothing', async () => {
    const { id } = await create(['--team', 'acme']);
    await expect(runCli(t.database, ['tokens', 'rotate', String(id), '--grace', '1h'])).resolves.toMatchObject({ code: 0 });
    const replacement = await repo().findOneByOrFail({ id });
    const count = await repo().count();
    const result = await runCli(t.database, ['tokens', 'rotate', String(id), '--grace', '1h']);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(`error: token ${id} was already rotated; its replacement is token ${replacement.replacedBy}`);
    await expect(repo().count()).resolves.toBe(count);
  });
});

describe('scopes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
  });
  afterAll(() => t.close());

  it('a read token lists plants and searches stores; creating or deleting answers 403 and changes nothing', async () => {
    const writer = await t.tokenFor('acme');
    await t.http.post('/plants').set(bearer(writer)).send({ id: 1, name: 'Fern' }).expect(201);
    const created = await runCli(t.database, ['tokens', 'create', '--team', 'acme', '--scope', 'read']);
    const reader = created.stdout.trim();
    await expect(t.dataSource.getRepository(ApiToken).findOneByOrFail({ prefix: reader.slice(0, 10) })).resolves.toMatchObject({ scope: 'read' });

    await expect(t.http.get('/plants').set(bearer(reader))).resolves.toMatchObject({ status: 200, body: [{ name: 'Fern' }] });
    await expect(
      t.http
        .post('/locations/nearest')
        .set(bearer(reader))
        .send({ customer_address: { zip: '10001' } }),
    ).resolves.toMatchObject({ status: 200 });
    for (const res of [await t.http.post('/plants').set(bearer(reader)).send({ id: 2, name: 'Moss' }), await t.http.delete('/plants/1').set(bearer(reader))]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(READ_ONLY);
    }
    await expect(t.dataSource.getRepository(Plant).find({ order: { id: 'ASC' } })).resolves.toMatchObject([{ team: 'acme', id: 1 }]);
    await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(1);
  });

  it('Swagger documents 403 (write scope on create and delete, read scope elsewhere) and 429 everywhere', async () => {
    const { body } = await t.http.get('/docs-json').expect(200);
    const plants = body.paths['/plants'];
    expect(plants.post.responses['403']).toBeDefined();
    expect(body.paths['/plants/{id}'].delete.responses['403']).toBeDefined();
    expect(plants.post.responses['403'].description).toContain('scope `read` only');
    // Reads answer 403 only to an SSO token whose scope claim has neither read nor write.
    expect(plants.get.responses['403'].description).toContain('`read` to list and search');
    for (const op of [plants.get, plants.post, body.paths['/plants/{id}'].delete, body.paths['/locations/nearest'].post]) {
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    }
  });
});

/** Keeps the audit lines: what Nest's Logger is given, before any formatting. */
describe('audit', () => {
  it('logs every create and delete with team, token id and plant id, never the token', async () => {
    const logger = new AuditCapture();
    const t = await createTestApp({ env: ENV, logger });
    try {
      const { token, record } = await t.app.get(TokensService).create({ team: 'acme' });
      await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Again' }).expect(409);
      await t.http.delete('/plants/1').set(bearer(token)).expect(204);
      await t.http.delete('/plants/1').set(bearer(token)).expect(404);
      expect(logger.entries).toEqual([
        { event: 'plant.created', team: 'acme', tokenId: record.id, plantId: 1 },
        { event: 'plant.deleted', team: 'acme', tokenId: record.id, plantId: 1 },
      ]);
      expect(JSON.stringify(logger.entries)).not.toContain(token.slice(4));
    } finally {
      await t.close();
    }
  });
});

describe('shutdown', () => {
  it('writes the pending last-use times before the database connection closes', async () => {
    const database = await createTestDatabase();
    try {
      const first = await createTestApp({ database, env: ENV });
      const { token, record } = await first.app.get(TokensService).create({ team: 'acme' });
      await first.http.get('/plants').set(bearer(token)).expect(200);
      await expect(first.dataSource.getRepository(ApiToken).findOneByOrFail({ id: record.id })).resolves.toMatchObject({ lastUsedAt: null });
      await first.close();
      const second = await createTestApp({ database, env: ENV });
      const row = await second.dataSource.getRepository(ApiToken).findOneByOrFail({ id: record.id });
      await second.close();
      expect(row.lastUsedAt).toBeInstanceOf(Date);
    } finally {
      await database.drop();
    }
  });
});
