import { parse } from 'csv-parse/sync';
import { ZipGeocoder } from '../src/geo/zip-geocoder.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { startServer } from './support/server.js';
import { bearer, createTestApp, createTestDatabase, type TestApp } from './support/test-app.js';

const ENV = {
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  EVENTS_NATS_URL: '',
};

const STORES: StoreInput[] = [
  { code: 'NY-1', name: 'Chelsea Ferns', city: 'New York', state: 'NY', zip: '10001' },
  { code: 'NY-2', name: '100% Cacti_Shop', city: 'New York', state: 'NY', zip: '10018' },
  { code: 'NJ-1', name: 'Hoboken Palms', address: '1 River St', city: 'Hoboken', state: 'NJ', zip: '07030' },
  { code: 'NJ-2', name: 'Jersey Ferns', city: 'Jersey City', state: 'NJ', zip: '07302' },
  { code: '=HACK', name: 'Formula Code', city: 'Newark', state: 'NJ', zip: '07102' },
];

/**
 * The admin routes the operator's console reads, for any admin client: the status,
 * the search's admin door, a ZIP code's point, the store list's filters and the export's columns.
 */
describe('admin API: status, search, ZIP points, store filters and export columns (what the console reads)', () => {
  let t: TestApp;
  let admin: string;
  let team: string;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('acme');
    await importStores(t, storesCsv(STORES));
  });
  afterAll(() => t.close());

  it.each([
    ['get', '/admin/status', undefined],
    ['post', '/admin/locations/nearest', { customer_address: { zip: '10001' } }],
    ['get', '/admin/zips/10001', undefined],
  ] as const)('%s %s: 401 without a token, 403 for read and write tokens', async (method, path, body) => {
    const send = (token?: string) => {
      const req = t.http[method](path);
      if (token) req.set(bearer(token));
      return body ? req.send(body) : req;
    };
    await send().expect(401);
    for (const scope of ['read', 'write'] as const) {
      const { token } = await t.app.get(TokensService).create({ team: 'acme', scope });
      const res = await send(token).expect(403);
      expect(res.body).toEqual({ error: 403, message: expect.stringMatching(/^this token is not an admin token; .+ needs scope admin$/) });
    }
  });

  it('GET /admin/status: ready, the counts of the database, change events off', async () => {
    const res = await t.http.get('/admin/status').set(bearer(admin)).expect(200);
    const [{ version }] = await t.dataSource.query('SELECT version FROM store_catalog WHERE id = 1');
    expect(res.body).toEqual({
      ready: true,
      problem: null,
      stores: await t.dataSource.getRepository(Store).count(),
      catalog_version: Number(version),
      change_events: { enabled: false, stream: null, backlog: null, plant_events: 'off', stream_problem: null },
      geocoder: { engine: 'off', breaker: null, cached: 0 },
      router: { engine: 'off', breaker: null, cached: 0 },
    });
    expect(res.body.stores).toBe(STORES.length);
  });

  it('POST /admin/locations/nearest answers what POST /locations/nearest answers, byte for byte, errors included', async () => {
    for (const body of [
      { customer_address: { zip: '10001' }, max_distance: 30 },
      { customer_address: { zip: '07030' }, max_distance: 2, limit: 1 },
      { customer_address: { zip: '00000' } },
      { customer_address: { zip: 'abc' } },
      { max_distance: 5 },
    ]) {
      const customer = await t.http.post('/locations/nearest').set(bearer(team)).send(body);
      const operator = await t.http.post('/admin/locations/nearest').set(bearer(admin)).send(body);
      expect({ body, status: operator.status, text: operator.text }).toEqual({ body, status: customer.status, text: customer.text });
    }
    // An admin token stays refused at the team's door.
    await t.http
      .post('/locations/nearest')
      .set(bearer(admin))
      .send({ customer_address: { zip: '10001' } })
      .expect(403);
  });

  it("GET /admin/zips/{zip}: the search's point for the ZIP code, 400 otherwise", async () => {
    const point = t.app.get(ZipGeocoder).lookup('10001')!;
    await expect(
      t.http
        .get('/admin/zips/10001')
        .set(bearer(admin))
        .expect(200)
        .then((r) => r.body),
    ).resolves.toEqual({ zip: '10001', lat: point.lat, lng: point.lng });
    await expect(
      t.http
        .get('/admin/zips/10001-1234')
        .set(bearer(admin))
        .expect(200)
        .then((r) => r.body.zip),
    ).resolves.toBe('10001');
    expect((await t.http.get('/admin/zips/00000').set(bearer(admin)).expect(400)).body).toEqual({ error: 400, message: 'unknown ZIP code 00000' });
    expect((await t.http.get('/admin/zips/1234').set(bearer(admin)).expect(400)).body).toEqual({
      error: 400,
      message: 'zip must be a US ZIP code such as 12345 or 12345-6789',
    });
  });

  describe('GET /admin/stores with state and q', () => {
    const codes = (query: string) =>
      t.http
        .get(`/admin/stores?${query}`)
        .set(bearer(admin))
        .expect(200)
        .then((r) => (r.body as Array<{ code: string }>).map((s) => s.code));

    it('narrows by state (any case) and by text in code, name, address, city or ZIP, ignoring case', async () => {
      await expect(codes('state=nj')).resolves.toEqual(['=HACK', 'NJ-1', 'NJ-2']);
      await expect(codes('q=FERNS')).resolves.toEqual(['NJ-2', 'NY-1']);
      await expect(codes('q=ferns&state=NY')).resolves.toEqual(['NY-1']);
      await expect(codes('q=river')).resolves.toEqual(['NJ-1']);
      await expect(codes('q=07302')).resolves.toEqual(['NJ-2']);
      await expect(codes('q=hoboken')).resolves.toEqual(['NJ-1']);
    });

    it('takes %, _ and ! as text, not as patterns', async () => {
      await expect(codes('q=%25')).resolves.toEqual(['NY-2']);
      await expect(codes('q=i_s')).resolves.toEqual(['NY-2']);
      await expect(codes('q=_')).resolves.toEqual(['NY-2']);
      await expect(codes('q=!')).resolves.toEqual([]);
    });

    it('pages with the filters kept in the Link header', async () => {
      const first = await t.http.get('/admin/stores?state=NJ&q=N&limit=2').set(bearer(admin)).expect(200);
      expect(first.body.map((s: { code: string }) => s.code)).toEqual(['=HACK', 'NJ-1']);
      const next = /<([^>]+)>; rel="next"/.exec(first.headers.link)![1];
      expect(new URL(next, 'http://x').searchParams.toString()).toBe('limit=2&after=NJ-1&state=NJ&q=N');
      const second = await t.http.get(next).set(bearer(admin)).expect(200);
      expect(second.body.map((s: { code: string }) => s.code)).toEqual(['NJ-2']);
      expect(second.headers.link).toBeUndefined();
    });

    it.each([
      ['state=XX', 'state must be a US state or territory code such as NY', 'bad_state'],
      ['q=', 'q must be 1 to 100 characters', 'empty'],
      [`q=${'a'.repeat(101)}`, 'q must be 1 to 100 characters', 'too_long'],
      ['q=a&q=b', 'q must be a string', 'not_string'],
    ])('400 for %s, the problem as data', async (query, message, code) => {
      const [field] = message.split(' ');
      expect((await t.http.get(`/admin/stores?${query}`).set(bearer(admin)).expect(400)).body).toEqual({
        error: 400,
        message,
        problems: [{ field, code, message: message.slice(field.length + 1) }],
      });
    });
  });

  describe('GET /admin/stores.csv?columns', () => {
    const csv = (query: string) =>
      t.http
        .get(`/admin/stores.csv${query}`)
        .set(bearer(admin))
        .expect(200)
        .then((r) => r.text);

    it('gives the chosen columns in their order, guarded like the full export', async () => {
      const records: string[][] = parse(await csv('?columns=code,lat,lng'));
      const full: string[][] = parse(await csv(''));
      expect(records[0]).toEqual(['code', 'lat', 'lng']);
      expect(records.slice(1)).toEqual(full.slice(1).map((row) => [row[0], row[6], row[7]]));
      expect(records.slice(1).map((row) => row[0])).toContain("'=HACK");
      const stored = await t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } });
      expect(records.length - 1).toBe(stored.length);
      const reversed: string[][] = parse(await csv('?columns=lng,name'));
      expect(reversed[0]).toEqual(['lng', 'name']);
    });

    it.each(['columns=', 'columns=code,code', 'columns=code,id', 'columns=Code', 'columns=code&columns=lat'])('400 for %s', async (query) => {
      const res = await t.http.get(`/admin/stores.csv?${query}`).set(bearer(admin)).expect(400);
      expect(res.body.message).toMatch(/^columns must be (a comma-separated list of code, name, .*, each at most once|a string)$/);
    });
  });

  // A process of its own (the built service): @nestjs/serve-static picks its loader when the
  // module is compiled, before a testing module has an HTTP adapter, so an in-process app never
  // serves the files.
  describe('the console at /console', () => {
    it.each([
      ['true', 200],
      ['false', 404],
    ])('CONSOLE_ENABLED=%s: %s', async (enabled, status) => {
      const database = await createTestDatabase();
      const server = await startServer(database, { CONSOLE_ENABLED: enabled });
      try {
        const page = await fetch(`${server.url}/console`);
        expect(page.status).toBe(status);
        expect(page.headers.get('cache-control')).toBe('no-store');
        const script = await fetch(`${server.url}/console/console.js`);
        expect(script.status).toBe(status);
        if (status === 200) {
          expect(page.headers.get('content-type')).toMatch(/^text\/html/);
          expect(await page.text()).toContain('<script type="module" src="/console/console.js"></script>');
          expect(script.headers.get('content-type')).toMatch(/javascript/);
        } else {
          expect(await page.json()).toEqual({ error: 404, message: 'no route for GET /console' });
        }
        // An unknown file is the API's 404, not the page.
        expect(await (await fetch(`${server.url}/console/nothing.js`)).json()).toEqual({ error: 404, message: 'no route for GET /console/nothing.js' });
      } finally {
        await server.stop();
        await database.drop();
      }
    });
  });
});
