import { Holiday } from '../src/stores/holiday.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { FakeRouters } from './support/fake-routers.js';
import { importStores, storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * The legs the router keeps are the ways to the stores' points: a write to a store far away or a
 * holiday leaves every kept leg in use (the next search asks the engine for nothing it had), and a
 * moved store is asked for again, alone. Against the local stand-in of each server
 * (test/support/fake-routers.ts).
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const CUSTOMER = { lat: 39.32, lng: -94.6 };
/** Twenty stores in a line south of the customer, within 4 miles, and one in Denver, 530 miles west. */
const NEAR: StoreInput[] = Array.from({ length: 20 }, (_, i) => ({ code: `KC${i}`, name: `Kansas City ${i}`, lat: 39.3 - i * 0.002, lng: -94.6 }));
const FAR: StoreInput = { code: 'DEN', name: 'Denver', lat: 39.74, lng: -104.99, city: 'Denver', state: 'CO', zip: '80202' };
const AT_KC = { city: 'Kansas City', state: 'MO', zip: '64105' };

type Location = { name: string; travel_time: number | null };
type Answer = { status: number; headers: Record<string, string | undefined>; body: { locations: Location[] } };

describe.each(['osrm', 'valhalla'] as const)('the legs ROUTER=%s keeps', (engine) => {
  let fake: FakeRouters;
  let t: TestApp;
  let token: string;
  let admin: string;
  /** Each search a `limit` of its own, so that no kept answer stands in for the legs. */
  let limit = 20;

  const search = async (): Promise<Answer> =>
    await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send({ customer_address: { zip: '64105', ...CUSTOMER }, travel_mode: 'driving', max_distance: 10, limit: limit++ });
  /** The store points the engine was asked for since the last look, to 4 decimals. */
  const asked = () => {
    const points =
      engine === 'osrm'
        ? fake.requests.flatMap((r) =>
            r.url
              .split('?')[0]
              .slice('/table/v1/driving/'.length)
              .split(';')
              .slice(1)
              .map((pair) => pair.split(',').map(Number).reverse()),
          )
        : fake.requests.flatMap((r) => (r.body as { targets: Array<{ lat: number; lon: number }> }).targets.map(({ lat, lon }) => [lat, lon]));
    fake.requests.length = 0;
    return points.map(([lat, lng]) => `${lat.toFixed(4)},${lng.toFixed(4)}`).sort();
  };
  const pointsOf = (stores: StoreInput[]) => stores.map((s) => `${Number(s.lat).toFixed(4)},${Number(s.lng).toFixed(4)}`).sort();
  const put = (store: StoreInput) =>
    t.http
      .put(`/admin/stores/${store.code}`)
      .set(bearer(admin))
      .send({
        name: store.name,
        address: '1 Test Street',
        city: store.city,
        state: store.state,
        zip: store.zip,
        lat: String(store.lat),
        lng: String(store.lng),
        ...WEEK_OPEN,
      });
  const expectDriveTimes = (res: Answer, stores: StoreInput[]) => {
    expect([res.status, res.headers['travel-source']]).toEqual([200, engine]);
    expect(res.body.locations.map((l) => l.name).sort()).toEqual(stores.map((s) => s.name).sort());
    for (const location of res.body.locations) {
      const store = stores.find((s) => s.name === location.name)!;
      const leg = FakeRouters.leg(CUSTOMER, { lat: Number(store.lat), lng: Number(store.lng) })!;
      // The seconds as each server sends them: OSRM's to a tenth, Valhalla's whole.
      const seconds = engine === 'osrm' ? Math.round(leg.seconds * 10) / 10 : Math.round(leg.seconds);
      expect(location.travel_time).toBe(Math.round(seconds / 6) / 10);
    }
  };

  beforeAll(async () => {
    fake = await new FakeRouters().start();
    t = await createTestApp({ env: { ...ENV, ROUTER: engine, ROUTER_URL: fake.url, ROUTER_TIMEOUT_MS: '2000' } });
    token = await t.tokenFor('shop');
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    await importStores(t, storesCsv([...NEAR.map((store) => ({ ...store, ...AT_KC })), FAR]));
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });

  it('asks for every store once; a PUT of a store far away leaves the legs in use: the next search asks for none', async () => {
    expectDriveTimes(await search(), NEAR);
    expect(asked()).toEqual(pointsOf(NEAR));
    expectDriveTimes(await search(), NEAR);
    expect(asked()).toEqual([]);

    await put({ ...FAR, name: 'Denver Downtown' }).expect(200);
    await expect(t.dataSource.getRepository(Store).findOneByOrFail({ code: 'DEN' })).resolves.toMatchObject({ name: 'Denver Downtown', lat: 39.74 });
    expectDriveTimes(await search(), NEAR);
    expect(asked()).toEqual([]);
  });

  it('a holiday leaves the legs in use too', async () => {
    await t.http.put('/admin/holidays/2026-12-25').set(bearer(admin)).send({ name: 'Christmas Day', hours: 'Closed' }).expect(201);
    await expect(t.dataSource.getRepository(Holiday).findOneByOrFail({ date: '2026-12-25' })).resolves.toMatchObject({ name: 'Christmas Day' });
    expectDriveTimes(await search(), NEAR);
    expect(asked()).toEqual([]);
  });

  it('asks for a moved store again, and for it alone', async () => {
    // KC3 moves 0.0015° (about 170 m) north; the other nineteen stay where they were.
    const moved = { ...NEAR[3], lat: Number(NEAR[3].lat) + 0.0015 };
    await put({ ...moved, ...AT_KC }).expect(200);
    await expect(t.dataSource.getRepository(Store).findOneByOrFail({ code: 'KC3' })).resolves.toMatchObject({ lat: moved.lat });
    const now = NEAR.map((store) => (store.code === 'KC3' ? moved : store));
    expectDriveTimes(await search(), now);
    expect(asked()).toEqual(pointsOf([moved]));
    expectDriveTimes(await search(), now);
    expect(asked()).toEqual([]);
  });
});
