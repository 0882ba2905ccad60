import { Metrics } from '../src/metrics/metrics.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { FakeRouters, ISLAND } from './support/fake-routers.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * The router's breaker counts the engine's health only: a table the server refuses as too big (OSRM's
 * `TooBig`, Valhalla's error 150) is split and answered with drive times, a matrix Valhalla refuses
 * for stores in unconnected regions (error 170) answers that search in straight-line order, and
 * neither opens the breaker; a server answering 503 still does. Against the local stand-in of each
 * server (test/support/fake-routers.ts), which refuses as the servers' own checks do.
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
/** Thirty stores in a line south of the customers, 0.002° (about 0.14 mi) apart, all within 7 miles of them. */
const STORES: StoreInput[] = Array.from({ length: 30 }, (_, i) => ({ code: `S${i}`, name: `Store ${i}`, lat: 39.3 - i * 0.002, lng: -94.6 }));
/** On an island 8.6 miles north of the customers: no road joins it to theirs. */
const ISLANDER: StoreInput = { code: 'ISLE', name: 'Island Store', lat: 39 + ISLAND, lng: -94.6 };
/** Customers a few metres from the first store, alone within 0.1 mi of them (the next store is 0.17 mi away). */
const NEAR_FIRST = [
  { lat: 39.3005, lng: -94.6 },
  { lat: 39.3006, lng: -94.6 },
];
/** The i-th customer: each moved onto a road of its own, so that no kept leg or answer hides the engine. */
const customer = (i: number) => ({ lat: 39.32 + i * 0.001, lng: -94.6 });

type Location = { name: string; travel_time: number | null };
type Answer = { status: number; headers: Record<string, string | undefined>; body: { locations: Location[] } };

describe.each(['osrm', 'valhalla'] as const)('the breaker of ROUTER=%s under refusals of the request', (engine) => {
  let fake: FakeRouters;
  let t: TestApp;
  let token: string;
  let admin: string;
  let customers = 0;

  const search = async (maxDistance: number, point = customer(customers++)): Promise<Answer> =>
    await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send({ customer_address: { zip: '64105', ...point }, travel_mode: 'driving', max_distance: maxDistance, limit: 50 });
  const outcomes = async () =>
    Object.fromEntries((await t.app.get(Metrics).routerRequests.get()).values.map(({ labels, value }) => [String(labels.outcome), value]));
  const breaker = async () => ((await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body as { router: { breaker: string } }).router.breaker;
  /** How many points each request held: the customer and its stores. */
  const sizes = () =>
    fake.requests.map((r) => (engine === 'osrm' ? r.url.split('?')[0].split(';').length : 1 + (r.body as { targets: unknown[] }).targets.length));
  /** Every location of a search with the stand-in's own time to it, as the service rounds it. */
  const expectDriveTimes = (res: Answer, from: { lat: number; lng: number }, stores: number) => {
    expect([res.status, res.headers['travel-source']]).toEqual([200, engine]);
    expect(res.body.locations).toHaveLength(stores);
    for (const location of res.body.locations) {
      const store = STORES.find((s) => s.name === location.name)!;
      const leg = FakeRouters.leg(from, { lat: Number(store.lat), lng: Number(store.lng) })!;
      // The seconds as each server sends them: OSRM's to a tenth, Valhalla's whole.
      const seconds = engine === 'osrm' ? Math.round(leg.seconds * 10) / 10 : Math.round(leg.seconds);
      expect(location.travel_time).toBe(Math.round(seconds / 6) / 10);
    }
  };

  beforeAll(async () => {
    fake = await new FakeRouters().start();
    t = await createTestApp({
      env: { ...ENV, ROUTER: engine, ROUTER_URL: fake.url, ROUTER_TIMEOUT_MS: '2000', ROUTER_BREAKER_FAILURES: '5', ROUTER_BREAKER_SECONDS: '3600' },
    });
    token = await t.tokenFor('shop');
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    await importStores(t, storesCsv([...STORES, ISLANDER].map((store) => ({ ...store, city: 'Kansas City', state: 'MO', zip: '64105' }))));
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  it('splits a table the server refuses as too big: six such searches answered with drive times, then a small one, the breaker closed', async () => {
    // A server that takes 9 points a table: OSRM run with --max-table-size 3 (1 source × 9 ≤ 3²), Valhalla with 8 pairs.
    if (engine === 'osrm') fake.osrmMaxTableSize = 3;
    else fake.valhallaMaxPairs = 8;
    const first = customer(customers);
    expectDriveTimes(await search(7), first, 30);
    // 31 points refused, then its two halves of 16, then four tables of 9 and 8 points answered.
    expect(sizes().sort((a, b) => a - b)).toEqual([8, 8, 9, 9, 16, 16, 31]);
    for (let i = 0; i < 5; i++) {
      fake.requests.length = 0;
      const from = customer(customers);
      expectDriveTimes(await search(7), from, 30);
      // Split from the start, as the server takes it: no refusal more.
      expect(sizes().sort((a, b) => a - b)).toEqual([7, 9, 9, 9]);
    }
    fake.requests.length = 0;
    const small = await search(0.1, NEAR_FIRST[0]);
    expectDriveTimes(small, NEAR_FIRST[0], 1);
    expect(sizes()).toEqual([2]);
    expect(await breaker()).toBe('closed');
    expect(await outcomes()).toEqual({ ok: 7 });
  });

  if (engine === 'valhalla') {
    it('answers a matrix refused for stores in unconnected regions (error 170) in straight-line order, six times, and the breaker stays closed', async () => {
      fake.valhallaMaxPairs = 2500;
      const before = await outcomes();
      for (let i = 0; i < 6; i++) {
        const res = await search(10);
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'straight-line']);
        expect(res.body.locations.map((l) => l.name)).toContain('Island Store');
        expect(res.body.locations.every((l) => l.travel_time === null)).toBe(true);
      }
      expect(await breaker()).toBe('closed');
      expectDriveTimes(await search(0.1, NEAR_FIRST[1]), NEAR_FIRST[1], 1);
      expect(await outcomes()).toEqual({ ...before, refused: 6, ok: before.ok + 1 });
    });
  }

  it('still opens on the engine’s own failures: five 503s, then the engine is skipped', async () => {
    fake.behaviour = 'status:503';
    for (let i = 0; i < 5; i++) expect((await search(10)).headers['travel-source']).toBe('straight-line');
    expect(await breaker()).toBe('open');
    fake.behaviour = 'ok';
    fake.requests.length = 0;
    const res = await search(10);
    expect([res.status, res.headers['travel-source']]).toEqual([200, 'straight-line']);
    expect(fake.requests).toHaveLength(0);
    expect(await outcomes()).toMatchObject({ error: 5, breaker_open: 1 });
  });
});
