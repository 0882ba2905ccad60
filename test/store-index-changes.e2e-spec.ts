import { haversineMiles, type Point } from '../src/shared/great-circle.js';
import { CHANGE_LOG_MAX_STORES } from '../src/stores/store-catalog.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { startServer, type ServerProcess } from './support/server.js';
import { importStores, storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = {
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  STORE_INDEX_REFRESH_MS: '300',
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CHELSEA: Point = { lat: 40.75, lng: -73.99 };

interface Location {
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  business_hours: Record<string, string>;
  lat: string;
  lng: string;
  distance: number;
}

/** Stores on a grid around Chelsea, several on each point, so that ties by name then code matter. */
const grid = (count: number, prefix: string): StoreInput[] =>
  Array.from({ length: count }, (_, i) => ({
    code: `${prefix}${String(i).padStart(4, '0')}`,
    name: `Grid ${i % 7}`,
    lat: 40.7 + (i % 10) * 0.01,
    lng: -74.03 + (Math.floor(i / 10) % 10) * 0.01,
  }));

/**
 * Two instances on one database: this test's app (A) writes, and a server process (B) learns of
 * each write from the change log, applying only the stores it names. What B answers is checked
 * against the database's rows, and against what A answers.
 */
describe('the search index takes catalogue changes from the change log', () => {
  let a: TestApp;
  let b: ServerProcess;
  let admin: string;
  let team: string;

  beforeAll(async () => {
    a = await createTestApp({ env: ENV });
    admin = (await a.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await a.tokenFor('shop');
    await importStores(a, storesCsv(grid(300, 'G')));
    b = await startServer(a.database, ENV);
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
    await a?.close();
  });

  const version = async () => Number((await a.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  const logged = async (v: number) => {
    const rows: Array<{ stores: string | null }> = await a.dataSource.query('SELECT stores FROM store_changes WHERE version = ?', [v]);
    return rows.length === 0 ? undefined : rows[0].stores === null ? null : (JSON.parse(rows[0].stores) as string[]).sort();
  };
  const search = (http: TestApp['http'], body: object, center = CHELSEA) =>
    http
      .post('/locations/nearest')
      .set(bearer(team))
      .send({ customer_address: { zip: '10001', ...center }, ...body });
  const locations = async (http: TestApp['http'], body: object, center = CHELSEA): Promise<Location[]> => {
    const res = await search(http, body, center);
    expect(res.status).toBe(200);
    return (res.body as { locations: Location[] }).locations;
  };
  /** Searches B until `done` holds (at most 15 s: B polls every 300 ms), and gives its last answer. */
  const onB = async (body: object, done: (found: Location[]) => boolean, center = CHELSEA): Promise<Location[]> => {
    let found = await locations(b.http, body, center);
    for (const deadline = Date.now() + 15_000; !done(found) && Date.now() < deadline;) {
      await sleep(100);
      found = await locations(b.http, body, center);
    }
    return found;
  };

  /** The answer of a search with `max_distance` and `limit` worked out from the database's rows. */
  const expected = async (miles: number, limit: number, center = CHELSEA) => {
    const rows = await a.dataSource.getRepository(Store).find();
    return rows
      .map((s) => ({ s, d: haversineMiles(center, s) }))
      .filter(({ d }) => d <= miles)
      .sort((x, y) => x.d - y.d || (x.s.name < y.s.name ? -1 : x.s.name > y.s.name ? 1 : 0) || (x.s.code < y.s.code ? -1 : 1))
      .slice(0, limit)
      .map(({ s, d }) => [s.name, s.address, s.lat.toFixed(6), s.lng.toFixed(6), Math.round(d * 100) / 100]);
  };
  const brief = (found: Location[]) => found.map((l) => [l.name, l.address, l.lat, l.lng, l.distance]);

  it('an edit made through A reaches B with every field and its new distance; the log names the store', async () => {
    const before = await version();
    const body = {
      name: 'Moved Grid',
      address: '9 New Street',
      city: 'Hoboken',
      state: 'NJ',
      zip: '07030',
      lat: '40.750100',
      lng: '-73.990100',
      ...WEEK_OPEN,
      sunday: '11:00 AM - 3:00 PM',
    };
    await a.http.put('/admin/stores/G0005').set(bearer(admin)).send(body).expect(200);
    expect(await version()).toBe(before + 1);
    expect(await logged(before + 1)).toEqual(['G0005']);
    await expect(a.dataSource.getRepository(Store).findOneByOrFail({ code: 'G0005' })).resolves.toMatchObject({
      name: 'Moved Grid',
      city: 'Hoboken',
      lat: 40.7501,
    });
    // Grid stores stand on Chelsea's point itself, nearer than the moved one.
    const found = (await onB({ max_distance: 0.1, limit: 50 }, (l) => l.some((x) => x.name === 'Moved Grid'))).filter((l) => l.name === 'Moved Grid');
    expect(found).toEqual([
      {
        name: 'Moved Grid',
        address: '9 New Street',
        city: 'Hoboken',
        state: 'NJ',
        zip: '07030',
        business_hours: {
          Monday: WEEK_OPEN.monday,
          Tuesday: WEEK_OPEN.tuesday,
          Wednesday: WEEK_OPEN.wednesday,
          Thursday: WEEK_OPEN.thursday,
          Friday: WEEK_OPEN.friday,
          Saturday: WEEK_OPEN.saturday,
          Sunday: '11:00 AM - 3:00 PM',
        },
        lat: '40.750100',
        lng: '-73.990100',
        distance: Math.round(haversineMiles(CHELSEA, { lat: 40.7501, lng: -73.9901 }) * 100) / 100,
      },
    ]);
    // Its old place (40.75, -73.98) no longer lists it, in a region search either: NJ has it now, NY not.
    const ny = await locations(b.http, { region: { state: 'NY' }, limit: 200 });
    expect(ny.map((l) => l.name)).not.toContain('Moved Grid');
    expect((await locations(b.http, { region: { state: 'NJ' } })).map((l) => l.name)).toEqual(['Moved Grid']);
    expect(brief(await locations(b.http, { max_distance: 3, limit: 40 }))).toEqual(await expected(3, 40));
  });

  it('a removal through A leaves B without the store, and the log names it', async () => {
    const near = await locations(b.http, { max_distance: 0.05, limit: 5 });
    expect(near.map((l) => l.name)).toContain('Moved Grid');
    const before = await version();
    await a.http.delete('/admin/stores/G0005').set(bearer(admin)).expect(204);
    expect(await logged(before + 1)).toEqual(['G0005']);
    await expect(a.dataSource.getRepository(Store).countBy({ code: 'G0005' })).resolves.toBe(0);
    const found = await onB({ max_distance: 0.05, limit: 5 }, (l) => !l.some((x) => x.name === 'Moved Grid'));
    expect(found.map((l) => l.name)).not.toContain('Moved Grid');
    expect(brief(await locations(b.http, { max_distance: 3, limit: 40 }))).toEqual(await expected(3, 40));
  });

  it('an import through A that adds, changes and prunes stores reaches B; one too big to list is logged as a reload, and B reloads', async () => {
    const before = await version();
    // The last 10 grid stores go, the first 10 are renamed (G0005, removed above, comes back so), 5 are new.
    const kept = grid(300, 'G').slice(0, 290);
    const file = [...kept.map((s, i) => (i < 10 ? { ...s, name: `Renamed ${i}` } : s)), ...grid(5, 'N')];
    const summary = await importStores(a, storesCsv(file), { prune: true, expectedRemovals: 10 });
    expect(summary).toMatchObject({ inserted: 6, updated: 9, pruned: 10 });
    expect(await version()).toBe(before + 1);
    expect(await logged(before + 1)).toHaveLength(25);
    // From the renamed stores' column of the grid: they are among the nearest 200.
    const column = { lat: 40.745, lng: -74.03 };
    const want = await expected(10, 200, column);
    expect(want.filter(([name]) => String(name).startsWith('Renamed'))).toHaveLength(10);
    const seen = await onB({ max_distance: 10, limit: 200 }, (l) => JSON.stringify(brief(l)) === JSON.stringify(want), column);
    expect(brief(seen)).toEqual(want);

    // A file of more stores than the log lists: the log says "reload", and B loads them all.
    const big = grid(CHANGE_LOG_MAX_STORES + 50, 'B');
    await importStores(a, storesCsv(big));
    expect(await logged(before + 2)).toBeNull();
    await expect(a.dataSource.getRepository(Store).count()).resolves.toBe(295 + CHANGE_LOG_MAX_STORES + 50);
    const wantAll = await expected(20, 200);
    // Each grid point now holds twice or three times as many stores: B answers so only once it has them all.
    const all = await onB({ max_distance: 20, limit: 200 }, (l) => JSON.stringify(brief(l)) === JSON.stringify(wantAll));
    expect(brief(all)).toEqual(wantAll);
  });

  it('a version the log does not hold (a change made by hand) makes B load every store', async () => {
    await a.dataSource.query("UPDATE stores SET name = 'By Hand' WHERE code = 'G0100'");
    await a.dataSource.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
    expect(await logged(await version())).toBeUndefined();
    const column = { lat: 40.7, lng: -74.03 };
    const found = await onB({ max_distance: 0.01, limit: 25 }, (l) => l.some((x) => x.name === 'By Hand'), column);
    expect(found.map((l) => l.name)).toContain('By Hand');
    expect(brief(found)).toEqual(await expected(0.01, 25, column));
  });

  it('after a burst of edits on both instances, searched all along, neither answers anything stale', async () => {
    const searches = [
      { max_distance: 1, limit: 10 },
      { max_distance: 3, limit: 50 },
      { max_distance: 0.2, limit: 25, nearest_if_none: true },
      { max_distance: 2, limit: 30, distance_unit: 'km' },
      { region: { state: 'NY', city: 'New York' }, limit: 20 },
      { region: { state: 'NJ' } },
    ];
    const codes = grid(290, 'G').map((s) => s.code);
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 40; i++) {
      const http = i % 2 === 0 ? a.http : b.http;
      const code = codes[(i * 37) % codes.length];
      const write =
        i % 9 === 8
          ? http.delete(`/admin/stores/${code}`).set(bearer(admin))
          : http
              .put(`/admin/stores/${code}`)
              .set(bearer(admin))
              .send({
                name: `Burst ${i}`,
                address: `${i} Burst Lane`,
                city: i % 3 === 0 ? 'Jersey City' : 'New York',
                state: i % 3 === 0 ? 'NJ' : 'NY',
                zip: '10001',
                lat: (40.74 + (i % 5) * 0.004).toFixed(6),
                lng: (-73.995 + (i % 4) * 0.004).toFixed(6),
                ...WEEK_OPEN,
              });
      writes.push(write.then((res) => expect([200, 201, 204, 404]).toContain(res.status)));
      // Searches on both between the writes fill both instances' kept answers.
      for (const body of searches) await Promise.all([search(a.http, body), search(b.http, body)]);
    }
    await Promise.all(writes);
    const target = await version();
    const rows = await a.dataSource.getRepository(Store).countBy({ name: 'Burst 39' });
    expect(rows).toBe(1);
    // Each instance takes the other's writes when it next polls: then every search agrees, byte for byte across the two.
    const answers = async () => Promise.all(searches.map(async (body) => [body, (await search(a.http, body)).text, (await search(b.http, body)).text]));
    let compared = await answers();
    for (const deadline = Date.now() + 15_000; compared.some(([, x, y]) => x !== y) && Date.now() < deadline;) {
      await sleep(200);
      compared = await answers();
    }
    for (const [body, fromA, fromB] of compared) expect([body, fromB]).toEqual([body, fromA]);
    expect(brief(await locations(a.http, { max_distance: 3, limit: 60 }))).toEqual(await expected(3, 60));
    expect(brief(await locations(b.http, { max_distance: 3, limit: 60 }))).toEqual(await expected(3, 60));
    expect(await version()).toBe(target);
  }, 120_000);
});
