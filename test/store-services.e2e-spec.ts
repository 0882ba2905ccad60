import { Service } from '../src/stores/service.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

/**
 * Stores around Penn Station (the customer stands at A), one in Hoboken (NJ, about 1.9 miles west)
 * and one 17 miles north, with their services. A is closed on Mondays: 2026-11-23 is a Monday.
 */
const STORES: StoreInput[] = [
  { code: 'NY-A', name: 'A Alder', lat: 40.7506, lng: -73.9973, hours: { monday: 'Closed' }, services: 'curbside_pickup|delivery' },
  { code: 'NY-B', name: 'B Birch', lat: 40.7516, lng: -73.9973, services: 'delivery' },
  { code: 'NY-C', name: 'C Cedar', lat: 40.7526, lng: -73.9973, services: 'greenhouse|delivery|curbside_pickup' },
  { code: 'NY-D', name: 'D Far North', lat: 41.0, lng: -73.9973, services: 'curbside_pickup' },
  { code: 'NJ-H', name: 'Hoboken', lat: 40.744, lng: -74.0324, zip: '07030', city: 'Hoboken', state: 'NJ', services: 'curbside_pickup|delivery' },
];
const VOCABULARY = { curbside_pickup: 'Curbside pickup', delivery: 'Delivery', greenhouse: 'Greenhouse', repotting: 'Repotting', workshops: 'Workshops' };
const AT_A = { zip: '10001', lat: 40.7506, lng: -73.9973 };

type Located = { name: string; code?: string; services?: string[]; travel_time?: null };

describe('store services', () => {
  let t: TestApp;
  let admin: string;
  let team: string;
  let before: string;
  const search = (body: object) =>
    t.http
      .post('/locations/nearest')
      .set(bearer(team))
      .send({ customer_address: AT_A, ...body });
  const names = async (body: object, scope = 'radius'): Promise<string[]> => {
    const res = await search(body);
    expect([res.status, res.headers['search-scope']]).toEqual([200, scope]);
    return (res.body as { locations: Located[] }).locations.map((l) => l.name);
  };
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);
  const putService = (slug: string, body: object) => t.http.put(`/admin/services/${slug}`).set(bearer(admin)).send(body);
  const services = async () =>
    (await t.dataSource.getRepository(Service).find({ order: { slug: 'ASC' } })).map(({ slug, label, description }) => ({ slug, label, description }));
  const storedServices = async () =>
    Object.fromEntries((await t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } })).map((store) => [store.code, store.services]));

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('shop');
    await upload(storesCsv(STORES.map(({ services: _, ...store }) => store))).expect(200);
    // The answer of a catalogue without services, to compare with once they are there.
    before = (await search({ max_distance: 5 }).expect(200)).text;
    for (const [slug, label] of Object.entries(VOCABULARY)) await putService(slug, { label }).expect(201);
    await upload(storesCsv(STORES)).expect(200);
  });
  afterAll(() => t.close());

  describe('the vocabulary, /admin/services', () => {
    it('creates (201, Location), replaces (200), leaves as it is, lists and shows', async () => {
      const created = await putService('valet', { label: 'Valet parking', description: 'We park it.' }).expect(201);
      expect(created.headers.location).toBe('/admin/services/valet');
      expect(created.body).toEqual({ slug: 'valet', label: 'Valet parking', description: 'We park it.', updated_at: expect.any(String) as string });
      const version = async () => Number((await t.dataSource.query<Array<{ version: number | string }>>('SELECT version FROM store_catalog'))[0].version);
      const at = await version();
      await putService('valet', { label: 'Valet parking', description: 'We park it.' }).expect(200);
      expect(await version()).toBe(at);
      const replaced = await putService('valet', { label: 'Valet' }).expect(200);
      expect(replaced.body).toMatchObject({ slug: 'valet', label: 'Valet', description: null });
      expect(await version()).toBe(at + 1);
      const list = await t.http.get('/admin/services').set(bearer(admin)).expect(200);
      expect((list.body as Array<{ slug: string }>).map((s) => s.slug)).toEqual([
        'curbside_pickup',
        'delivery',
        'greenhouse',
        'repotting',
        'valet',
        'workshops',
      ]);
      await expect(t.http.get('/admin/services/valet').set(bearer(admin)).expect(200)).resolves.toMatchObject({ body: { label: 'Valet' } });
      await t.http.delete('/admin/services/valet').set(bearer(admin)).expect(204);
      expect((await services()).map((s) => s.slug)).toEqual(Object.keys(VOCABULARY));
      await t.http.get('/admin/services/valet').set(bearer(admin)).expect(404);
    });

    it('refuses a bad slug or body with 400, and a team token with 403, changing nothing', async () => {
      const was = await services();
      for (const slug of ['Curbside', '1day', 'curbside-pickup', 'a'.repeat(41), '_x']) {
        const res = await putService(encodeURIComponent(slug), { label: 'X' });
        expect([slug, res.status, (res.body as { message: string }).message]).toEqual([
          slug,
          400,
          `slug ${JSON.stringify(slug)} must be a lowercase slug: a letter, then at most 39 letters, digits or underscores`,
        ]);
      }
      await putService('a'.repeat(40), { label: '' }).expect(400);
      await putService('x', { label: 'x'.repeat(101) }).expect(400);
      await putService('x', { label: '   ' }).expect(400);
      await putService('x', { label: 'X', description: 'd'.repeat(501) }).expect(400);
      const unknown = await putService('x', { label: 'X', color: 'green' }).expect(400);
      expect(unknown.body).toMatchObject({ error: 400, problems: [{ field: 'color', code: 'unknown_field' }] });
      await t.http.delete('/admin/services/Bad').set(bearer(admin)).expect(400);
      await t.http.put('/admin/services/x').set(bearer(team)).send({ label: 'X' }).expect(403);
      expect(await services()).toEqual(was);
    });

    it('refuses to delete a service stores still have (409, saying how many), and an unknown one (404), changing nothing', async () => {
      const stored = await storedServices();
      const res = await t.http.delete('/admin/services/curbside_pickup').set(bearer(admin)).expect(409);
      expect(res.body).toEqual({ error: 409, message: 'service curbside_pickup is offered by 4 stores; take it off those stores first' });
      const one = await t.http.delete('/admin/services/greenhouse').set(bearer(admin)).expect(409);
      expect((one.body as { message: string }).message).toBe('service greenhouse is offered by 1 store; take it off that store first');
      await expect(t.http.delete('/admin/services/valet').set(bearer(admin)).expect(404)).resolves.toMatchObject({
        body: { error: 404, message: 'service valet not found' },
      });
      expect((await services()).map((s) => s.slug)).toEqual(Object.keys(VOCABULARY));
      expect(await storedServices()).toEqual(stored);
      // `delivery` as a prefix of nothing, `_` as no wildcard: a service no store has goes.
      await t.http.delete('/admin/services/repotting').set(bearer(admin)).expect(204);
      await putService('repotting', { label: 'Repotting' }).expect(201);
    });

    it('the command line lists, puts and deletes', async () => {
      const put = await runCli(t.database, ['services', 'put', 'plant_doctor', '--label', 'Plant doctor', '--description', 'Bring a sick plant.']);
      expect([put.code, put.stderr]).toEqual([0, 'service plant_doctor created\n']);
      const again = await runCli(t.database, ['services', 'put', 'plant_doctor', '--label', 'Plant doctor']);
      expect([again.code, again.stderr]).toEqual([0, 'service plant_doctor set\n']);
      const list = await runCli(t.database, ['services', 'list']);
      expect([list.code, list.stdout]).toEqual([
        0,
        'curbside_pickup\tCurbside pickup\t-\ndelivery\tDelivery\t-\ngreenhouse\tGreenhouse\t-\nplant_doctor\tPlant doctor\t-\nrepotting\tRepotting\t-\nworkshops\tWorkshops\t-\n',
      ]);
      const bad = await runCli(t.database, ['services', 'put', 'Plant', '--label', 'x']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('must be a lowercase slug');
      const used = await runCli(t.database, ['services', 'delete', 'delivery']);
      expect([used.code, used.stderr]).toEqual([1, 'error: service delivery is offered by 4 stores; take it off those stores first\n']);
      const gone = await runCli(t.database, ['services', 'delete', 'plant_doctor']);
      expect([gone.code, gone.stderr]).toEqual([0, 'service plant_doctor deleted\n']);
      const missing = await runCli(t.database, ['services', 'delete', 'plant_doctor']);
      expect([missing.code, missing.stderr]).toEqual([1, 'error: service plant_doctor not found\n']);
      expect((await services()).map((s) => s.slug)).toEqual(Object.keys(VOCABULARY));
    }, 300_000);
  });

  describe("a store's services", () => {
    it('are stored sorted and each once from the CSV, and an export imports back unchanged', async () => {
      expect(await storedServices()).toEqual({
        'NJ-H': 'curbside_pickup|delivery',
        'NY-A': 'curbside_pickup|delivery',
        'NY-B': 'delivery',
        'NY-C': 'curbside_pickup|delivery|greenhouse',
        'NY-D': 'curbside_pickup',
      });
      const exported = await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200);
      const [header, ...rows] = exported.text.trim().split('\n');
      expect(header.endsWith(',services')).toBe(true);
      expect(rows.find((row) => row.startsWith('NY-C,'))?.endsWith(',curbside_pickup|delivery|greenhouse')).toBe(true);
      const back = await upload(exported.text).expect(200);
      expect(back.body).toMatchObject({ read: 5, inserted: 0, updated: 0, unchanged: 5 });
    });

    it('a file without the column keeps them; an empty cell clears them; the admin API takes and answers lists', async () => {
      const without = await upload(storesCsv(STORES.map(({ services: _, ...store }) => store))).expect(200);
      expect(without.body).toMatchObject({ unchanged: 5 });
      const cleared = await upload(storesCsv([{ ...STORES[1], services: '' }])).expect(200);
      expect(cleared.body).toMatchObject({ updated: 1, changes: [{ code: 'NY-B', fields: [{ field: 'services', old: 'delivery', new: '' }] }] });
      const put = await t.http
        .put('/admin/stores/NY-B')
        .set(bearer(admin))
        .send({
          name: 'B Birch',
          address: '1 Test Street',
          city: 'New York',
          state: 'NY',
          zip: '10001',
          lat: '40.7516',
          lng: '-73.9973',
          ...WEEK_OPEN,
          services: ['delivery', 'workshops', 'delivery'],
        })
        .expect(200);
      expect(put.body).toMatchObject({ services: ['delivery', 'workshops'] });
      expect((await storedServices())['NY-B']).toBe('delivery|workshops');
      // Left out: kept; the store's view has them.
      const kept = await t.http
        .put('/admin/stores/NY-B')
        .set(bearer(admin))
        .send({ name: 'B Birch', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', lat: '40.7516', lng: '-73.9973', ...WEEK_OPEN })
        .expect(200);
      expect(kept.body).toMatchObject({ services: ['delivery', 'workshops'] });
      await upload(storesCsv([STORES[1]])).expect(200);
      expect((await storedServices())['NY-B']).toBe('delivery');
    });

    it('refuses a service the chain does not have: a 400 naming it in the admin API, a problem with line and column in the CSV and its preview', async () => {
      const was = await storedServices();
      const body = { name: 'B Birch', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN };
      const unknown = await t.http
        .put('/admin/stores/NY-B')
        .set(bearer(admin))
        .send({ ...body, services: ['delivery', 'valet'] })
        .expect(400);
      expect(unknown.body).toEqual({
        error: 400,
        message: 'services: "valet" is not a service of the chain (GET /admin/services lists them)',
        problems: [{ field: 'services', code: 'unknown_service', message: '"valet" is not a service of the chain (GET /admin/services lists them)' }],
      });
      const notSlug = await t.http
        .put('/admin/stores/NY-B')
        .set(bearer(admin))
        .send({ ...body, services: ['delivery', 'Valet|x'] })
        .expect(400);
      expect(notSlug.body).toMatchObject({ problems: [{ field: 'services[1]', code: 'unknown_service' }] });
      await t.http
        .put('/admin/stores/NY-B')
        .set(bearer(admin))
        .send({ ...body, services: 'delivery' })
        .expect(400);
      await t.http
        .put('/admin/stores/NY-NEW')
        .set(bearer(admin))
        .send({ ...body, services: ['valet'] })
        .expect(400);
      const csv = storesCsv([STORES[0], { ...STORES[1], services: 'delivery|valet' }]);
      const refused = await upload(csv).expect(422);
      expect(refused.body).toMatchObject({
        problems: [{ line: 3, column: 'services', code: 'unknown_service', message: '"valet" is not a service of the chain (GET /admin/services lists them)' }],
      });
      const preview = await upload(csv, '?dry_run=true').set('Prefer', 'handling=lenient').expect(200);
      expect(preview.body).toMatchObject({ problem_count: 1, problems: [{ line: 3, column: 'services', code: 'unknown_service' }] });
      expect(await storedServices()).toEqual(was);
    });
  });

  describe('the search', () => {
    it('without include answers byte for byte as before the services existed', async () => {
      expect((await search({ max_distance: 5 }).expect(200)).text).toBe(before);
      expect((await search({ max_distance: 5, include: [] }).expect(200)).text).toBe(before);
      expect((await search({ max_distance: 5, services: [] }).expect(200)).text).toBe(before);
    });

    it('keeps only the stores that have every service asked for, alone and with every other option', async () => {
      await expect(names({ max_distance: 5 })).resolves.toEqual(['A Alder', 'B Birch', 'C Cedar', 'Hoboken']);
      await expect(names({ max_distance: 5, services: ['curbside_pickup'] })).resolves.toEqual(['A Alder', 'C Cedar', 'Hoboken']);
      await expect(names({ services: ['delivery', 'curbside_pickup'] })).resolves.toEqual(['A Alder', 'C Cedar', 'Hoboken']);
      await expect(names({ services: ['greenhouse', 'delivery'] })).resolves.toEqual(['C Cedar']);
      await expect(names({ services: ['workshops'] })).resolves.toEqual([]);
      // radius, and `limit` counting the stores kept
      await expect(names({ max_distance: 1, services: ['curbside_pickup'] })).resolves.toEqual(['A Alder', 'C Cedar']);
      await expect(names({ max_distance: 30, limit: 3, services: ['curbside_pickup'] })).resolves.toEqual(['A Alder', 'C Cedar', 'Hoboken']);
      await expect(names({ max_distance: 30, services: ['curbside_pickup'], distance_unit: 'km' })).resolves.toEqual([
        'A Alder',
        'C Cedar',
        'Hoboken',
        'D Far North',
      ]);
      // region
      await expect(names({ region: { state: 'NY' }, services: ['curbside_pickup'] }, 'region')).resolves.toEqual(['A Alder', 'C Cedar', 'D Far North']);
      await expect(names({ region: { state: 'NJ' }, services: ['greenhouse'] }, 'region')).resolves.toEqual([]);
      // nearest_if_none: none with a greenhouse within 0.05 miles, the nearest one however far
      await expect(names({ max_distance: 0.05, nearest_if_none: true, services: ['greenhouse'] }, 'nearest')).resolves.toEqual(['C Cedar']);
      await expect(names({ max_distance: 0.05, nearest_if_none: true, services: ['curbside_pickup'] })).resolves.toEqual(['A Alder']);
      // open_only: A is closed on Mondays
      const monday = { open_at: '2026-11-23T10:00:00-05:00', open_only: true };
      await expect(names({ max_distance: 5, services: ['curbside_pickup'], ...monday })).resolves.toEqual(['C Cedar', 'Hoboken']);
      await expect(names({ max_distance: 0.05, nearest_if_none: true, services: ['curbside_pickup'], ...monday }, 'nearest')).resolves.toEqual(['C Cedar']);
      // travel_mode: no routing engine here, the straight-line answer of the same stores
      const driving = await search({ max_distance: 5, services: ['curbside_pickup'], travel_mode: 'driving' }).expect(200);
      expect(driving.headers['travel-source']).toBe('straight-line');
      expect((driving.body as { locations: Located[] }).locations.map((l) => [l.name, l.travel_time])).toEqual([
        ['A Alder', null],
        ['C Cedar', null],
        ['Hoboken', null],
      ]);
    });

    it('adds the fields `include` names, last and in one order, and follows an edit at once', async () => {
      const res = await search({ max_distance: 1, include: ['services', 'code'] }).expect(200);
      const locations = (res.body as { locations: Array<Record<string, unknown>> }).locations;
      expect(locations.map((l) => Object.keys(l).slice(-3))).toEqual(Array(3).fill(['distance', 'code', 'services']));
      expect(locations.map(({ code, services: list }) => [code, list])).toEqual([
        ['NY-A', ['curbside_pickup', 'delivery']],
        ['NY-B', ['delivery']],
        ['NY-C', ['curbside_pickup', 'delivery', 'greenhouse']],
      ]);
      const plain = JSON.parse(before) as { locations: object[] };
      expect(locations.map(({ code: _, services: __, ...rest }) => rest)).toEqual(plain.locations.slice(0, 3));
      const onlyCode = await search({ max_distance: 1, include: ['code'] }).expect(200);
      expect((onlyCode.body as { locations: Located[] }).locations.map((l) => [l.code, l.services])).toEqual([
        ['NY-A', undefined],
        ['NY-B', undefined],
        ['NY-C', undefined],
      ]);
      // An edit moves the index at once: the kept answer of the same search is not given again.
      await upload(storesCsv([{ ...STORES[1], services: 'curbside_pickup|greenhouse' }])).expect(200);
      await expect(names({ services: ['greenhouse'] })).resolves.toEqual(['B Birch', 'C Cedar']);
      const edited = await search({ max_distance: 1, include: ['services', 'code'] }).expect(200);
      expect((edited.body as { locations: Located[] }).locations[1]).toMatchObject({ code: 'NY-B', services: ['curbside_pickup', 'greenhouse'] });
      await upload(storesCsv([STORES[1]])).expect(200);
      await expect(names({ services: ['greenhouse'] })).resolves.toEqual(['C Cedar']);
    });

    it('follows a new service at once, and refuses one the chain does not have or a bad list with 400', async () => {
      await putService('valet', { label: 'Valet' }).expect(201);
      await expect(names({ services: ['valet'] })).resolves.toEqual([]);
      await t.http.delete('/admin/services/valet').set(bearer(admin)).expect(204);
      const cases: Array<[object, string]> = [
        [{ services: ['valet'] }, 'services: "valet" is not a service of the chain'],
        [{ services: ['delivery', 'valet'], region: { state: 'NY' } }, 'services: "valet" is not a service of the chain'],
        [{ services: 'delivery' }, 'services must be a list'],
        [{ services: ['Delivery'] }, 'services: "Delivery" must be a lowercase slug: a letter, then at most 39 letters, digits or underscores'],
        [{ services: [1] }, 'services: 1 must be a lowercase slug: a letter, then at most 39 letters, digits or underscores'],
        [{ services: ['delivery', 'delivery'] }, 'services names an entry twice'],
        [{ include: ['phone_number'] }, 'include: "phone_number" is not one of code, phone, website, email, services'],
        [{ include: 'code' }, 'include must be a list'],
        [{ include: ['code', 'code'] }, 'include names an entry twice'],
      ];
      for (const [body, message] of cases) {
        const res = await search(body);
        expect([JSON.stringify(body), res.status, res.body]).toEqual([JSON.stringify(body), 400, { error: 400, message }]);
      }
    });
  });
});
