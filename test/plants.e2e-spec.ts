import type { Response } from 'supertest';
import { Plant } from '../src/plants/plant.entity.js';
import { startServer } from './support/server.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const MAX_ID = 9007199254740991;

describe('plants', () => {
  let t: TestApp;
  let acme: string;
  let rival: string;
  let acmeBob: string;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await t.tokenFor('acme');
    acmeBob = await t.tokenFor('acme');
    rival = await t.tokenFor('rival');
  });
  afterAll(() => t.close());
  beforeEach(() => t.dataSource.getRepository(Plant).clear());

  const rows = (team?: string) => t.dataSource.getRepository(Plant).find({ where: team ? { team } : {}, order: { team: 'ASC', id: 'ASC' } });
  const create = (token: string, body: unknown) =>
    t.http
      .post('/plants')
      .set(bearer(token))
      .send(body as object);

  describe('POST /plants', () => {
    it('creates a plant: 201, Location with the assigned id, body with name and tag', async () => {
      const res = await create(acme, { name: 'Monstera', tag: 'tropical' });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe('/plants/1');
      expect(res.body).toEqual({ name: 'Monstera', tag: 'tropical' });
      await expect(rows()).resolves.toMatchObject([{ team: 'acme', id: 1, name: 'Monstera', tag: 'tropical' }]);
    });

    it('leaves tag out of the body when the plant has none', async () => {
      const res = await create(acme, { name: 'Cactus' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ name: 'Cactus' });
      expect((await rows())[0].tag).toBeNull();
    });

    it('takes null for id and tag as not given', async () => {
      const res = await create(acme, { name: 'Nulls', id: null, tag: null });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe('/plants/1');
      expect(res.body).toEqual({ name: 'Nulls' });
      await expect(rows()).resolves.toMatchObject([{ id: 1, tag: null }]);
    });

    it('uses a given id as is, up to 2^53 - 1', async () => {
      const res = await create(acme, { id: MAX_ID, name: 'Big' });
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/plants/${MAX_ID}`);
      expect((await rows())[0].id).toBe(MAX_ID);
    });

    it("assigns the team's highest id + 1, per team", async () => {
      await create(acme, { id: 41, name: 'a' }).expect(201);
      await expect(create(acme, { name: 'b' })).resolves.toMatchObject({ status: 201, headers: { location: '/plants/42' } });
      await expect(create(rival, { name: 'c' })).resolves.toMatchObject({ status: 201, headers: { location: '/plants/1' } });
    });

    it('answers 409 when no id is left above the highest', async () => {
      await create(acme, { id: MAX_ID, name: 'last' }).expect(201);
      const res = await create(acme, { name: 'one more' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 409, message: expect.stringContaining('no plant id is left') });
      expect(await rows()).toHaveLength(1);
    });

    it('answers 409 for an id already used in the team, and changes nothing', async () => {
      await create(acme, { id: 7, name: 'first', tag: 'x' }).expect(201);
      const res = await create(acmeBob, { id: 7, name: 'second' });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 409, message: 'plant 7 already exists' });
      await expect(rows()).resolves.toMatchObject([{ id: 7, name: 'first', tag: 'x' }]);
    });

    it('lets another team use the same id', async () => {
      await create(acme, { id: 7, name: 'ours' }).expect(201);
      await create(rival, { id: 7, name: 'theirs' }).expect(201);
      await expect(rows()).resolves.toMatchObject([
        { team: 'acme', id: 7, name: 'ours' },
        { team: 'rival', id: 7, name: 'theirs' },
      ]);
    });

    it('of concurrent creates with one id, exactly one wins', async () => {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i % 2 ? acme : acmeBob, { id: 99, name: `racer ${i}` })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(11);
      expect(await rows()).toHaveLength(1);
    });

    it('gives concurrent creates without an id distinct ids', async () => {
      const results = await Promise.all(Array.from({ length: 15 }, (_, i) => create(acme, { name: `p${i}` })));
      expect(results.map((r) => r.status)).toEqual(Array(15).fill(201));
      const ids = results.map((r) => Number(r.headers.location.split('/')[2])).sort((a, b) => a - b);
      expect(ids).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
      expect((await rows()).map((p) => p.id)).toEqual(ids);
    });

    it('gives distinct ids across two instances on one database', async () => {
      const other = await startServer(t.database);
      try {
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            (i % 2 ? t.http : other.http)
              .post('/plants')
              .set(bearer(acme))
              .send({ name: `twin ${i}` }),
          ),
        );
        expect(results.map((r) => r.status)).toEqual(Array(16).fill(201));
        const ids = new Set(results.map((r) => r.headers.location));
        expect(ids.size).toBe(16);
        expect(await rows()).toHaveLength(16);
      } finally {
        await other.stop();
      }
    });

    it('stores and returns text byte for byte, emoji and all', async () => {
      const name = 'Ficus 🌿 Ωμέγα — 「盆栽」 👩🏽‍🌾';
      const tag = ' spaced  tag\t';
      const res = await create(acme, { name, tag });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ name, tag });
      await expect(rows()).resolves.toMatchObject([{ name, tag }]);
      const list = await t.http.get('/plants').set(bearer(acme));
      expect(list.body).toEqual([{ name, tag }]);
      expect(Buffer.from(list.text).includes(Buffer.from(name))).toBe(true);
    });

    it('accepts 255 characters counted as code points (emoji included)', async () => {
      await create(acme, { name: '🌵'.repeat(255), tag: 'é'.repeat(255) }).expect(201);
      expect((await rows())[0].name).toBe('🌵'.repeat(255));
    });

    it.each([
      ['name missing', {}, 'name is required'],
      ['name empty', { name: '' }, 'name must be 1 to 255 characters'],
      ['name only white space', { name: ' \t\n ' }, 'name must not be only white space'],
      ['name too long', { name: 'x'.repeat(256) }, 'name must be 1 to 255 characters'],
      ['name a number', { name: 5 }, 'name must be a string'],
      ['name null', { name: null }, 'name must be a string'],
      ['name with a lone surrogate', { name: 'bad \ud800' }, 'name must be well-formed Unicode text'],
      ['tag too long', { name: 'a', tag: 't'.repeat(256) }, 'tag must be at most 255 characters'],
      ['tag a number', { name: 'a', tag: 1 }, 'tag must be a string'],
      ['id a string', { name: 'a', id: '5' }, 'id must be a positive integer no larger than 9007199254740991'],
      ['id a fraction', { name: 'a', id: 5.5 }, 'id must be a positive integer no larger than 9007199254740991'],
      ['id zero', { name: 'a', id: 0 }, 'id must be a positive integer no larger than 9007199254740991'],
      ['id negative', { name: 'a', id: -3 }, 'id must be a positive integer no larger than 9007199254740991'],
      ['id 2^53', { name: 'a', id: 9007199254740992 }, 'id must be a positive integer no larger than 9007199254740991'],
      ['id a boolean', { name: 'a', id: true }, 'id must be a positive integer no larger than 9007199254740991'],
      ['an unknown field', { name: 'a', colour: 'green' }, 'unknown field colour'],
      ['an array body', [{ name: 'a' }], 'request body must be a JSON object'],
    ])('answers 400 for %s and writes nothing', async (_, body, message) => {
      const res = await create(acme, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.stringContaining(message) });
      expect(Object.keys(res.body).sort()).toEqual(['error', 'message']);
      expect(await rows()).toEqual([]);
    });
  });

  describe('GET /plants', () => {
    const seed = async (team: string, count: number, tag?: (i: number) => string | undefined) => {
      const repo = t.dataSource.getRepository(Plant);
      await repo.insert(Array.from({ length: count }, (_, i) => ({ team, id: i + 1, name: `plant ${i + 1}`, tag: tag?.(i + 1) ?? null })));
    };

    it("lists the team's plants by id, name and tag only, default limit 100", async () => {
      await seed('acme', 120, (i) => (i % 2 ? 'odd' : undefined));
      await seed('rival', 3);
      const res = await t.http.get('/plants').set(bearer(acme));
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(100);
      expect(res.body[0]).toEqual({ name: 'plant 1', tag: 'odd' });
      expect(res.body[1]).toEqual({ name: 'plant 2' });
      expect(res.body.map((p: { name: string }) => p.name)).toEqual(Array.from({ length: 100 }, (_, i) => `plant ${i + 1}`));
      expect(res.headers.link).toBe('</plants?limit=100&after=100>; rel="next"');
    });

    it('pages through everything with the Link header', async () => {
      await seed('acme', 25, (i) => (i % 3 === 0 ? 'third' : 'other'));
      const seen: string[] = [];
      let next: string | undefined = '/plants?limit=4&tag=third';
      let pages = 0;
      while (next) {
        const res: Response = await t.http.get(next).set(bearer(acme));
        expect(res.status).toBe(200);
        seen.push(...res.body.map((p: { name: string }) => p.name));
        next = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '')?.[1];
        pages++;
      }
      expect(seen).toEqual([3, 6, 9, 12, 15, 18, 21, 24].map((i) => `plant ${i}`));
      expect(pages).toBe(2);
    });

    it('has no Link header on the last page', async () => {
      await seed('acme', 3);
      const res = await t.http.get('/plants?limit=3').set(bearer(acme));
      expect(res.body).toHaveLength(3);
      expect(res.headers.link).toBeUndefined();
    });

    it('filters by exactly that tag', async () => {
      const repo = t.dataSource.getRepository(Plant);
      await repo.insert([
        { team: 'acme', id: 1, name: 'a', tag: 'Fern' },
        { team: 'acme', id: 2, name: 'b', tag: 'fern' },
        { team: 'acme', id: 3, name: 'c', tag: 'fern ' },
        { team: 'acme', id: 4, name: 'd', tag: 'fern' },
        { team: 'rival', id: 5, name: 'e', tag: 'fern' },
      ]);
      const res = await t.http.get('/plants').query({ tag: 'fern' }).set(bearer(acme));
      expect(res.body).toEqual([
        { name: 'b', tag: 'fern' },
        { name: 'd', tag: 'fern' },
      ]);
      const spaced = await t.http.get('/plants').query({ tag: 'fern ' }).set(bearer(acme));
      expect(spaced.body).toEqual([{ name: 'c', tag: 'fern ' }]);
    });

    it('takes after as a cursor', async () => {
      await seed('acme', 6);
      const res = await t.http.get('/plants?after=4').set(bearer(acme));
      expect(res.body).toEqual([{ name: 'plant 5' }, { name: 'plant 6' }]);
      await expect(t.http.get('/plants?after=0&limit=1').set(bearer(acme))).resolves.toMatchObject({ status: 200, body: [{ name: 'plant 1' }] });
    });

    it('accepts limit 1 and 1000', async () => {
      await seed('acme', 2);
      await expect(t.http.get('/plants?limit=1').set(bearer(acme))).resolves.toMatchObject({ status: 200, body: [{ name: 'plant 1' }] });
      await expect(t.http.get('/plants?limit=1000').set(bearer(acme))).resolves.toMatchObject({ status: 200 });
    });

    it.each(['0', '1001', '-1', '1.5', 'abc', '', '1e2', '%2010', '10&limit=20'])('answers 400 for limit=%s', async (limit) => {
      const res = await t.http.get(`/plants?limit=${limit}`).set(bearer(acme));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: 'limit must be an integer from 1 to 1000' });
    });

    it.each([['after=-1'], ['after=x'], ['after=9007199254740992'], ['sort=name']])('answers 400 for %s', async (query) => {
      const res = await t.http.get(`/plants?${query}`).set(bearer(acme));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(400);
    });

    it("never shows another team's plants", async () => {
      await seed('rival', 5);
      const res = await t.http.get('/plants').set(bearer(acme));
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });

  describe('DELETE /plants/{id}', () => {
    it('deletes: 204, no body, row gone', async () => {
      await create(acme, { id: 3, name: 'doomed' }).expect(201);
      await create(acme, { id: 4, name: 'stays' }).expect(201);
      const res = await t.http.delete('/plants/3').set(bearer(acme));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      await expect(rows()).resolves.toMatchObject([{ id: 4, name: 'stays' }]);
      const again = await t.http.delete('/plants/3').set(bearer(acme));
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: 404, message: 'plant 3 not found' });
    });

    it("answers 404 for another team's plant, exactly as for a missing one, and keeps it", async () => {
      await create(acme, { id: 7, name: 'ours' }).expect(201);
      const theirs = await t.http.delete('/plants/7').set(bearer(rival));
      const missing = await t.http.delete('/plants/8').set(bearer(rival));
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual({ error: 404, message: 'plant 7 not found' });
      expect(missing.body).toEqual({ error: 404, message: 'plant 8 not found' });
      await expect(rows('acme')).resolves.toMatchObject([{ team: 'acme', id: 7, name: 'ours' }]);
    });

    it('lets any token of the team delete', async () => {
      await create(acme, { id: 9, name: 'shared' }).expect(201);
      await t.http.delete('/plants/9').set(bearer(acmeBob)).expect(204);
      expect(await rows()).toEqual([]);
    });

    it.each(['abc', '0', '-1', '1.5', '01', '+1', '1e3', '9007199254740992', '99999999999999999999'])(
      'answers 400 for id %s and deletes nothing',
      async (id) => {
        await create(acme, { id: 1, name: 'safe' }).expect(201);
        const res = await t.http.delete(`/plants/${id}`).set(bearer(acme));
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 400, message: 'plant id must be a positive integer no larger than 9007199254740991' });
        expect(await rows()).toHaveLength(1);
      },
    );
  });
});
