import type { Response } from 'supertest';
import { IdempotencyKey } from '../src/plants/idempotency-key.entity.js';
import { IdempotentCreatesService } from '../src/plants/idempotent-creates.service.js';
import { Plant } from '../src/plants/plant.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { startServer } from './support/server.js';
import { bearer, createTestApp, engine, type TestApp } from './support/test-app.js';

const KEY = '8e03978e-40d5-43e8-bc93-6894a57f9324';
const DIFFERENT_BODY = { error: 422, message: 'this Idempotency-Key was already used with a different request body' };
const BAD_KEY = { error: 400, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' };

/** What a client sees of a response: the same three things must come back on a repeat. */
const seen = (res: Response) => ({ status: res.status, location: res.headers.location as string | undefined, body: res.body as unknown });

describe('POST /plants with an Idempotency-Key', () => {
  let t: TestApp;
  let acme: string;
  let acmeBob: string;
  let rival: string;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.tokenFor('acme');
    acmeBob = await t.tokenFor('acme');
    rival = await t.tokenFor('rival');
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.dataSource.getRepository(Plant).clear();
    await t.dataSource.getRepository(IdempotencyKey).clear();
  });

  const plants = (team?: string) => t.dataSource.getRepository(Plant).find({ where: team ? { team } : {}, order: { team: 'ASC', id: 'ASC' } });
  const keys = () => t.dataSource.getRepository(IdempotencyKey).find({ order: { team: 'ASC', key: 'ASC' } });
  /** `key` null: no Idempotency-Key header. */
  const create = (token: string, body: object, key: string | null = KEY, http = t.http) => {
    const req = http.post('/plants').set(bearer(token));
    return (key === null ? req : req.set('Idempotency-Key', key)).send(body);
  };
  /** Moves every kept key `hours` into the past, by the database's own clock (the one the service uses). */
  const age = (hours: number) =>
    t.dataSource.query(
      engine === 'mysql'
        ? `UPDATE idempotency_keys SET created_at = CURRENT_TIMESTAMP(3) - INTERVAL ${hours} HOUR`
        : `UPDATE idempotency_keys SET created_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-${hours} hours')`,
    );

  it('runs the first request and answers a repeat with the same status, Location and body, creating nothing more', async () => {
    const first = await create(acme, { name: 'Monstera', tag: 'tropical' });
    expect(seen(first)).toEqual({ status: 201, location: '/plants/1', body: { name: 'Monstera', tag: 'tropical' } });
    // Another plant in between: a re-run would now get id 3, the replay still says 1.
    await create(acme, { name: 'Other' }, null).expect(201);
    const again = await create(acmeBob, { name: 'Monstera', tag: 'tropical' });
    expect(seen(again)).toEqual(seen(first));
    await expect(plants()).resolves.toMatchObject([
      { team: 'acme', id: 1, name: 'Monstera', tag: 'tropical' },
      { team: 'acme', id: 2, name: 'Other' },
    ]);
    await expect(keys()).resolves.toMatchObject([{ team: 'acme', key: KEY, responseStatus: 201, responseLocation: '/plants/1' }]);
  });

  it('takes the same body written differently (key order, null for absent) as the same request', async () => {
    const first = await create(acme, { name: 'Fern', id: 12 });
    expect(first.status).toBe(201);
    const again = await t.http
      .post('/plants')
      .set(bearer(acme))
      .set('Idempotency-Key', KEY)
      .set('Content-Type', 'application/json')
      .send('{ "tag": null,\n  "id": 12, "name": "Fern" }');
    expect(seen(again)).toEqual({ status: 201, location: '/plants/12', body: { name: 'Fern' } });
    expect(await plants()).toHaveLength(1);
  });

  it('refuses the same key with another body with 422, and changes nothing', async () => {
    await create(acme, { name: 'Fern', tag: 'green' }).expect(201);
    for (const body of [{ name: 'Fern', tag: 'blue' }, { name: 'Fern' }, { name: 'Fern', tag: 'green', id: 1 }, { name: 'fern', tag: 'green' }]) {
      const res = await create(acme, body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(DIFFERENT_BODY);
    }
    await expect(plants()).resolves.toMatchObject([{ id: 1, name: 'Fern', tag: 'green' }]);
    await expect(keys()).resolves.toHaveLength(1);
  });

  it('keeps the 409 of an id already taken, and answers it again even after the plant is gone', async () => {
    await create(acme, { id: 7, name: 'first' }, null).expect(201);
    const conflict = await create(acme, { id: 7, name: 'second' });
    expect(seen(conflict)).toEqual({ status: 409, location: undefined, body: { error: 409, message: 'plant 7 already exists' } });
    await t.http.delete('/plants/7').set(bearer(acme)).expect(204);
    const again = await create(acme, { id: 7, name: 'second' });
    expect(seen(again)).toEqual(seen(conflict));
    await expect(plants()).resolves.toEqual([]);
  });

  it('stores nothing for a request refused before it runs, so the corrected request may use the key', async () => {
    const invalid = await create(acme, { name: '' });
    expect(invalid.status).toBe(400);
    const reader = (await t.app.get(TokensService).create({ team: 'acme', scope: 'read' })).token;
    await create(reader, { name: 'Fern' }).expect(403);
    await t.http.post('/plants').set(bearer(acme)).set('Idempotency-Key', KEY).set('Content-Type', 'text/plain').send('Fern').expect(415);
    await expect(keys()).resolves.toEqual([]);
    const ok = await create(acme, { name: 'Fern' });
    expect(seen(ok)).toEqual({ status: 201, location: '/plants/1', body: { name: 'Fern' } });
    await expect(plants()).resolves.toHaveLength(1);
  });

  it('scopes keys to the team: another team with the same key makes its own plant', async () => {
    const ours = await create(acme, { id: 5, name: 'Fern' });
    const theirs = await create(rival, { id: 5, name: 'Cactus' });
    expect(seen(ours)).toEqual({ status: 201, location: '/plants/5', body: { name: 'Fern' } });
    expect(seen(theirs)).toEqual({ status: 201, location: '/plants/5', body: { name: 'Cactus' } });
    await expect(plants()).resolves.toMatchObject([
      { team: 'acme', id: 5, name: 'Fern' },
      { team: 'rival', id: 5, name: 'Cactus' },
    ]);
    await expect(keys()).resolves.toMatchObject([
      { team: 'acme', key: KEY },
      { team: 'rival', key: KEY },
    ]);
  });

  it('compares keys exactly: another case is another key', async () => {
    await create(acme, { name: 'a' }, 'key-A').expect(201);
    await create(acme, { name: 'b' }, 'key-a').expect(201);
    await expect(plants()).resolves.toHaveLength(2);
  });

  it('of 10 concurrent requests with one key, one runs and every other gets its response (or a 409 to retry)', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2 ? acme : acmeBob, { name: 'Racer', tag: 'fast' })));
    const created = results.filter((r) => r.status === 201);
    const busy = results.filter((r) => r.status === 409);
    expect(created.length + busy.length).toBe(10);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const res of created) expect(seen(res)).toEqual({ status: 201, location: '/plants/1', body: { name: 'Racer', tag: 'fast' } });
    for (const res of busy) expect(res.body).toEqual({ error: 409, message: expect.stringContaining('retry') });
    await expect(plants()).resolves.toMatchObject([{ id: 1, name: 'Racer', tag: 'fast' }]);
  });

  it('of concurrent requests with one key and a given id, one runs: never a 409 for the id against its own key', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => create(acme, { id: 77, name: 'Given' })));
    for (const res of results) expect(seen(res)).toEqual({ status: 201, location: '/plants/77', body: { name: 'Given' } });
    await expect(plants()).resolves.toHaveLength(1);
  });

  it('concurrent requests with different keys each create their plant', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(acme, { name: `p${i}` }, `key-${i}`)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.headers.location)).size).toBe(10);
    await expect(plants()).resolves.toHaveLength(10);
    await expect(keys()).resolves.toHaveLength(10);
  });

  it('holds across two instances on one database: one plant for one key', async () => {
    const other = await startServer(t.database);
    try {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => create(acme, { name: 'Twin' }, KEY, i % 2 ? t.http : other.http)));
      const created = results.filter((r) => r.status === 201);
      expect(created.length + results.filter((r) => r.status === 409).length).toBe(10);
      for (const res of created) expect(seen(res)).toEqual({ status: 201, location: '/plants/1', body: { name: 'Twin' } });
      // Once the race is over, every instance replays the one response.
      for (const http of [t.http, other.http])
        expect(seen(await create(acme, { name: 'Twin' }, KEY, http))).toEqual({ status: 201, location: '/plants/1', body: { name: 'Twin' } });
      await expect(plants()).resolves.toMatchObject([{ id: 1, name: 'Twin' }]);
    } finally {
      await other.stop();
    }
  });

  it('forgets a key after 24 hours: the request runs again, and another body is then accepted', async () => {
    await create(acme, { name: 'Old' }).expect(201);
    await age(23);
    expect(seen(await create(acme, { name: 'Old' }))).toEqual({ status: 201, location: '/plants/1', body: { name: 'Old' } });
    await create(acme, { name: 'New' }).expect(422);
    await age(25);
    const fresh = await create(acme, { name: 'New' });
    expect(seen(fresh)).toEqual({ status: 201, location: '/plants/2', body: { name: 'New' } });
    await expect(plants()).resolves.toHaveLength(2);
    await expect(keys()).resolves.toMatchObject([{ key: KEY, responseLocation: '/plants/2' }]);
  });

  it('deletes expired keys, and only those', async () => {
    await create(acme, { name: 'a' }, 'old-1').expect(201);
    await create(rival, { name: 'b' }, 'old-2').expect(201);
    await age(25);
    await create(acme, { name: 'c' }, 'recent').expect(201);
    await expect(t.app.get(IdempotentCreatesService).deleteExpired()).resolves.toBe(2);
    await expect(keys()).resolves.toMatchObject([{ team: 'acme', key: 'recent' }]);
    await expect(plants()).resolves.toHaveLength(3);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['with a tab', 'a\tb'],
    ['with a non-ASCII character', 'caf\u00e9'],
  ])('refuses a key %s with 400, and creates nothing', async (_, key) => {
    const res = await create(acme, { name: 'Fern' }, key);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(BAD_KEY);
    await expect(plants()).resolves.toEqual([]);
    await expect(keys()).resolves.toEqual([]);
  });

  it('accepts a key of 255 printable characters, spaces and quotes included', async () => {
    const key = `"${'~ !'.repeat(84)}"x`;
    expect(key).toHaveLength(255);
    await create(acme, { name: 'Fern' }, key).expect(201);
    await create(acme, { name: 'Fern' }, key).expect(201);
    await expect(plants()).resolves.toHaveLength(1);
    await expect(keys()).resolves.toMatchObject([{ key }]);
  });

  it('without the header, runs every request and keeps no key', async () => {
    await create(acme, { name: 'Fern' }, null).expect(201);
    await create(acme, { name: 'Fern' }, null).expect(201);
    await expect(plants()).resolves.toHaveLength(2);
    await expect(keys()).resolves.toEqual([]);
  });
});

describe('expired keys, on the clean-up timer', () => {
  it('are deleted by every instance every IDEMPOTENCY_CLEANUP_INTERVAL_MS', async () => {
    const t = await createTestApp({ env: { IDEMPOTENCY_CLEANUP_INTERVAL_MS: '1000' } });
    try {
      const token = await t.tokenFor('acme');
      await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'stale').send({ name: 'a' }).expect(201);
      await t.dataSource.query(
        engine === 'mysql'
          ? 'UPDATE idempotency_keys SET created_at = CURRENT_TIMESTAMP(3) - INTERVAL 25 HOUR'
          : "UPDATE idempotency_keys SET created_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-25 hours')",
      );
      await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'fresh').send({ name: 'b' }).expect(201);
      const repo = t.dataSource.getRepository(IdempotencyKey);
      for (let waited = 0; (await repo.count()) > 1 && waited < 10_000; waited += 200) await new Promise((r) => setTimeout(r, 200));
      await expect(repo.find()).resolves.toMatchObject([{ key: 'fresh' }]);
    } finally {
      await t.close();
    }
  });
});
