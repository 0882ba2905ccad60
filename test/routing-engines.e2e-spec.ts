import { ConsoleLogger } from '@nestjs/common';
import { Metrics } from '../src/metrics/metrics.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { FakeRouters, type RouterBehaviour } from './support/fake-routers.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * `travel_mode` with ROUTER=osrm and ROUTER=valhalla, against a local stand-in speaking each
 * server's format (test/support/fake-routers.ts): the request each engine gets, the order by its
 * times, the stores it cannot reach, and each way it can fail answering the straight-line order.
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const CUSTOMER = { lat: 39.32, lng: -94.6 };
const STORES: StoreInput[] = [
  // 0.9 mi north in a straight line, but across the river: three times that by road.
  { code: 'ACROSS', name: 'Across the River', lat: 39.333, lng: -94.6 },
  { code: 'DOWN', name: 'Down the Road', lat: 39.3, lng: -94.6 },
  { code: 'FAR', name: 'Further Down', lat: 39.25, lng: -94.6 },
  // On a road that leads nowhere; and 16 miles away with no road near it.
  { code: 'DEAD', name: 'Dead End', lat: 39.2777, lng: -94.6 },
  { code: 'FIELD', name: 'In a Field', lat: 39.555, lng: -94.6 },
].map((store) => ({ ...store, city: 'Kansas City', state: 'MO', zip: '64105' }));

/** Every line the app logs, at every level (the router's failures are debug lines). */
class EveryLine extends ConsoleLogger {
  readonly lines: string[] = [];
  log(message: unknown, context?: string) {
    this.lines.push(`${context}: ${JSON.stringify(message)}`);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.lines.push(JSON.stringify([message, ...rest]));
  }
  warn(message: unknown, context?: string) {
    this.log(message, context);
  }
  debug(message: unknown, context?: string) {
    this.log(message, context);
  }
  verbose(message: unknown, context?: string) {
    this.log(message, context);
  }
}

type Location = { name: string; distance: number; travel_time: number | null; travel_distance: number | null };
type Answer = { status: number; headers: Record<string, string | undefined>; body: { locations: Location[] } };

describe.each(['osrm', 'valhalla'] as const)('POST /locations/nearest with travel_mode, ROUTER=%s', (engine) => {
  let fake: FakeRouters;
  let t: TestApp;
  let token: string;
  const logger = new EveryLine();
  /** Places used so far by the failure tests (see below). */
  let places = 0;

  const search = async (body: object, point = CUSTOMER): Promise<Answer> =>
    await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send({ customer_address: { zip: '64105', ...point }, travel_mode: 'driving', ...body });
  const outcomes = async () =>
    Object.fromEntries((await t.app.get(Metrics).routerRequests.get()).values.map(({ labels, value }) => [String(labels.outcome), value]));
  /** The stand-in's leg to a store, as the service rounds it. */
  const expected = (code: string) => {
    const store = STORES.find((s) => s.code === code)!;
    const leg = FakeRouters.leg(CUSTOMER, { lat: Number(store.lat), lng: Number(store.lng) })!;
    return { name: store.name, travel_time: Math.round(leg.seconds / 6) / 10, travel_distance: Math.round((leg.metres / 1609.344) * 100) / 100 };
  };

  beforeAll(async () => {
    fake = await new FakeRouters().start();
    t = await createTestApp({ env: { ...ENV, ROUTER: engine, ROUTER_URL: fake.url, ROUTER_TIMEOUT_MS: '1000', ROUTER_BREAKER_FAILURES: '100' }, logger });
    token = await t.tokenFor('shop');
    await importStores(t, storesCsv(STORES));
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });
  beforeEach(() => {
    fake.behaviour = 'ok';
    fake.requests.length = 0;
  });

  it('asks in the engine’s own format, once, and orders by its times: the store across the river after the ones down the road', async () => {
    const res = await search({ max_distance: 10 });
    expect([res.status, res.headers['travel-source']]).toEqual([200, engine]);
    expect(fake.requests).toHaveLength(1);
    const [sent] = fake.requests;
    if (engine === 'osrm') {
      expect(sent.url).toMatch(
        /^\/table\/v1\/driving\/-94\.600000,39\.320000;(-?\d+\.\d{6},\d+\.\d{6};){3}-?\d+\.\d{6},\d+\.\d{6}\?sources=0&annotations=duration,distance$/,
      );
    } else {
      expect(sent.body).toMatchObject({ costing: 'auto', units: 'kilometers', sources: [{ lat: 39.32, lon: -94.6, search_cutoff: 1609 }] });
      expect((sent.body as { targets: unknown[] }).targets).toHaveLength(4);
    }
    const found = res.body.locations.map(({ name, travel_time, travel_distance }) => ({ name, travel_time, travel_distance }));
    expect(found.slice(0, 3).map((l) => l.name)).toEqual(['Down the Road', 'Across the River', 'Further Down']);
    for (const [i, code] of ['DOWN', 'ACROSS', 'FAR'].entries()) {
      expect(found[i].travel_time).toBeCloseTo(expected(code).travel_time, 1);
      expect(found[i].travel_distance).toBeCloseTo(expected(code).travel_distance, 1);
    }
    // The store at the end of a road that leads nowhere: last, without times.
    expect(found[3]).toEqual({ name: 'Dead End', travel_time: null, travel_distance: null });
    // In a straight line, the store across the river is the nearest.
    expect([...res.body.locations].sort((a, b) => a.distance - b.distance)[0].name).toBe('Across the River');
    expect((await search({ max_distance: 10, max_travel_time: 3.9 })).body.locations.map((l) => l.name)).toEqual(['Down the Road']);
  });

  it('takes a store the engine finds no road for within ROUTER_SNAP_MILES as unreachable: last, without times', async () => {
    const res = await search({ max_distance: 20 });
    expect([res.status, res.headers['travel-source']]).toEqual([200, engine]);
    expect(fake.requests).toHaveLength(1);
    expect(res.body.locations.map((l) => l.name).slice(0, 3)).toEqual(['Down the Road', 'Across the River', 'Further Down']);
    expect(res.body.locations.slice(-2)).toMatchObject([
      { name: 'Dead End', travel_time: null, travel_distance: null },
      { name: 'In a Field', travel_time: null, travel_distance: null },
    ]);
    if (engine === 'valhalla') expect(fake.requests[0].body).toMatchObject({ verbose: true });
  });

  it('takes every store as unreachable from a customer far from any road, in straight-line order', async () => {
    const res = await search({ max_distance: 40 }, { lat: 39.555, lng: -94.65 });
    expect([res.status, res.headers['travel-source']]).toEqual([200, engine]);
    expect(res.body.locations.length).toBeGreaterThan(0);
    expect(res.body.locations.every((l) => l.travel_time === null && l.travel_distance === null)).toBe(true);
    const distances = res.body.locations.map((l) => l.distance);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
  });

  it('keeps the travel times by where the engine moved the customer onto a road: a second customer moved there adds none', async () => {
    const admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    const kept = async () => ((await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body as { router: { cached: number } }).router.cached;
    // Two customers 4 m apart, both moved onto the road at 39.3000.
    const first = await search({ max_distance: 10 }, { lat: 39.30002, lng: -94.6 });
    const before = await kept();
    const second = await search({ max_distance: 10 }, { lat: 39.29998, lng: -94.6 });
    expect(second.body.locations.map((l) => [l.name, l.travel_time])).toEqual(first.body.locations.map((l) => [l.name, l.travel_time]));
    expect(await kept()).toBe(before);
    // The first customer again, further out: only the store not asked for before is asked for.
    fake.requests.length = 0;
    await search({ max_distance: 20 }, { lat: 39.30002, lng: -94.6 });
    if (engine === 'osrm') expect(fake.requests.map((r) => r.url.split(';').length)).toEqual([2]);
    else expect(fake.requests.map((r) => (r.body as { targets: unknown[] }).targets.length)).toEqual([1]);
  });

  if (engine === 'valhalla') {
    describe('Valhalla before 3.7, which refuses a whole matrix for one point with no road near it', () => {
      beforeEach(() => {
        fake.valhalla = 'before-3.7';
      });
      afterEach(() => {
        fake.valhalla = 'current';
      });

      it('asks /locate too when the verbose answer fails on such a point (500, error 499), as Valhalla 3.7’s serializer reads', async () => {
        fake.valhalla = 'fails-on-null';
        const res = await search({ max_distance: 40 }, { lat: 39.555, lng: -94.67 });
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'valhalla']);
        expect(fake.requests.map((r) => r.url)).toEqual(['/sources_to_targets', '/locate']);
        expect(res.body.locations.length).toBeGreaterThan(0);
        expect(res.body.locations.every((l) => l.travel_time === null && l.travel_distance === null)).toBe(true);
      });

      it('asks /locate which points have none, asks again without them, and leaves them out of later requests', async () => {
        const res = await search({ max_distance: 20 }, { lat: 39.3201, lng: -94.61 });
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'valhalla']);
        expect(fake.requests.map((r) => r.url)).toEqual(['/sources_to_targets', '/locate', '/sources_to_targets']);
        expect((fake.requests[1].body as { locations: unknown[] }).locations).toHaveLength(6);
        expect((fake.requests[2].body as { targets: unknown[] }).targets).toHaveLength(4);
        expect(res.body.locations.slice(-2)).toMatchObject([
          { name: 'Dead End', travel_time: null },
          { name: 'In a Field', travel_time: null, travel_distance: null },
        ]);
        expect(res.body.locations[0]).toMatchObject({ name: 'Down the Road', travel_time: expect.any(Number) as number });

        fake.requests.length = 0;
        const later = await search({ max_distance: 20 }, { lat: 39.3202, lng: -94.62 });
        expect(later.headers['travel-source']).toBe('valhalla');
        expect(fake.requests.map((r) => [r.url, (r.body as { targets: unknown[] }).targets.length])).toEqual([['/sources_to_targets', 4]]);
        expect(later.body.locations.at(-1)).toMatchObject({ name: 'In a Field', travel_time: null });
      });

      it('takes Valhalla before 3.4, which sends the points as given rather than where it moved them, at its search_cutoff', async () => {
        fake.valhalla = 'before-3.4';
        const res = await search({ max_distance: 20 }, { lat: 39.3203, lng: -94.63 });
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'valhalla']);
        expect(res.body.locations.map((l) => [l.name, l.travel_time === null])).toEqual([
          ['Down the Road', false],
          ['Across the River', false],
          ['Further Down', false],
          ['Dead End', true],
          ['In a Field', true],
        ]);
      });

      it('takes every store as unreachable when /locate finds no road near the customer', async () => {
        const res = await search({ max_distance: 40 }, { lat: 39.555, lng: -94.66 });
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'valhalla']);
        expect(fake.requests.map((r) => r.url)).toEqual(['/sources_to_targets', '/locate']);
        expect(res.body.locations.every((l) => l.travel_time === null)).toBe(true);
      });
    });
  }

  it.each<[RouterBehaviour, string]>([
    ['status:429', 'rate_limited'],
    ['status:503', 'error'],
    ['malformed', 'malformed'],
    ['not-json', 'malformed'],
    // Valhalla's answer to an exception of its own; /locate finds every point on a road, so it is the engine's failure.
    ['unknown-error', 'error'],
    ['slow', 'timeout'],
  ])('answers the straight-line order, 200, when the engine answers %s (outcome %s)', async (behaviour, outcome) => {
    fake.behaviour = behaviour;
    const before = (await outcomes())[outcome] ?? 0;
    // A place of its own, a hundredth of a degree from the others, so that no kept time or answer hides the engine.
    const place = { lat: CUSTOMER.lat, lng: CUSTOMER.lng + 0.01 * ++places };
    const plain = await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send({ customer_address: { zip: '64105', ...place }, max_distance: 10 });
    const res = await search({ max_distance: 10 }, place);
    expect([res.status, res.headers['travel-source']]).toEqual([200, 'straight-line']);
    expect(res.body.locations.map((l) => [l.name, l.travel_time])).toEqual(plain.body.locations.map((l: Location) => [l.name, null]));
    expect((await outcomes())[outcome]).toBe(before + 1);
  });

  it('shows the engine, its breaker and the kept travel times on the status page', async () => {
    const admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    const status = await t.http.get('/admin/status').set(bearer(admin)).expect(200);
    expect(status.body.router).toEqual({ engine, breaker: 'closed', cached: expect.any(Number) as number });
    expect(status.body.router.cached).toBeGreaterThan(0);
  });

  it('puts the customer’s position in no log line and no metric, whatever happened', async () => {
    expect(logger.lines.some((line) => line.includes('Router'))).toBe(true);
    const position = /39\.32|-94\.[56]\d/;
    expect(logger.lines.filter((line) => position.test(line))).toEqual([]);
    expect(position.test(await t.app.get(Metrics).registry.metrics())).toBe(false);
  });
});
