import { Metrics } from '../src/metrics/metrics.js';
import { importStores, storesCsv } from './support/stores.js';
import { eastMetres, loadRoads, northMetres, RIVER_ROADS, RIVER_STORES, roadsDatabase, seconds } from './support/roads.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * `travel_mode` with ROUTER=pgrouting, on the machine's PostgreSQL holding
 * test/fixtures/river-roads.osm (loaded by scripts/load-roads.sh): the stores ordered by the times
 * worked out by hand over the bridge and around the one-way street, the unreachable ones after them,
 * `max_travel_time` and `limit`; and each way the engine can fail answering the straight-line order,
 * never a 5xx.
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const MILE = 1609.344;

/** The fixture's places (see its comment): the customer stands at n3 on the west bank. */
const N3 = { lat: 40.02, lng: -100.02 };

/** By hand: the roads from n3 to each store (see test/roads.e2e-spec.ts for the pieces). */
const BRIDGE = 2 * eastMetres(40, 0.015) + eastMetres(40, 0.01);
const ROAD_METRES: Record<string, number> = {
  WEST: northMetres(40.01, 0.02) + northMetres(39.99, 0.02), // n3 - n2 - n1
  EAST: northMetres(40.01, 0.02) + BRIDGE + northMetres(40.01, 0.02), // n3 - n2, the bridge, n12 - n13
  LOOP: northMetres(40.01, 0.02) + BRIDGE + northMetres(40.02, 0.04), // … n12 - n14
  ONEWAY: northMetres(40.01, 0.02) + BRIDGE + northMetres(40.02, 0.04) + eastMetres(40.04, 0.02), // … n14 → n31
};

type Location = { name: string; distance: number; travel_time: number | null; travel_distance: number | null };
type Answer = { status: number; headers: Record<string, string | undefined>; body: { locations: Location[] } };

describe('POST /locations/nearest with travel_mode, routed by pgRouting', () => {
  let db: Awaited<ReturnType<typeof roadsDatabase>>;
  let t: TestApp;
  /** Each app's token (each app has a database of its own). */
  const tokens = new Map<TestApp, string>();

  const search = async (app: TestApp, body: object): Promise<Answer> =>
    await app.http
      .post('/locations/nearest')
      .set(bearer(tokens.get(app)!))
      .send(body);
  const at = (point: { lat: number; lng: number }, extra: object = {}) => ({
    customer_address: { zip: '69001', ...point },
    max_distance: 50,
    travel_mode: 'driving',
    ...extra,
  });
  const outcomes = async (app: TestApp) =>
    Object.fromEntries((await app.app.get(Metrics).routerRequests.get()).values.map(({ labels, value }) => [String(labels.outcome), value]));
  /** An app routing on the roads database, with `env` over the defaults. */
  const app = async (env: Record<string, string> = {}) => {
    const created = await createTestApp({
      // Generous: the machine may be busy; the timeout spec below sets its own.
      env: { ...ENV, ROUTER: 'pgrouting', ROUTER_DATABASE_URL: db.url, ROUTER_TIMEOUT_MS: '5000', ...env },
    });
    await importStores(created, storesCsv(RIVER_STORES));
    tokens.set(created, await created.tokenFor('shop'));
    return created;
  };

  beforeAll(async () => {
    db = await roadsDatabase('drive_times');
    await loadRoads(RIVER_ROADS, db.url);
    t = await app();
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('orders by the time over the bridge, not the straight line, and puts the stores no road reaches last', async () => {
    const res = await search(t, at(N3));
    expect([res.status, res.headers['travel-source']]).toEqual([200, 'pgrouting']);
    const expected = ['WEST', 'EAST', 'LOOP', 'ONEWAY'].map((code) => ({
      name: RIVER_STORES.find((s) => s.code === code)!.name,
      travel_time: Math.round(seconds(ROAD_METRES[code]) / 6) / 10,
      travel_distance: Math.round((ROAD_METRES[code] / MILE) * 100) / 100,
    }));
    expect(res.body.locations.map(({ name, travel_time, travel_distance }) => ({ name, travel_time, travel_distance }))).toEqual([
      ...expected,
      // Unreachable, in straight-line order.
      { name: 'Middle of a Field', travel_time: null, travel_distance: null },
      { name: 'Island Lane', travel_time: null, travel_distance: null },
    ]);
    // In a straight line the east bank is the nearest store.
    const byDistance = [...res.body.locations].sort((a, b) => a.distance - b.distance).map((l) => l.name);
    expect(byDistance[0]).toBe('East Bank (n13)');
    expect(expected.map((e) => e.travel_time)).toEqual([4.4, 7.9, 10.1, 11.8]);
  });

  it('respects the one-way street: back from its end is the loop, four times as long', async () => {
    const there = await search(t, at({ lat: 40.04, lng: -99.98 }, { max_distance: 2 }));
    const back = await search(t, at({ lat: 40.04, lng: -99.96 }, { max_distance: 2 }));
    const one = (answer: Answer, name: string) => answer.body.locations.find((l) => l.name === name)!;
    expect(one(there, 'One Way End (n31)').travel_time).toBe(Math.round(seconds(eastMetres(40.04, 0.02)) / 6) / 10);
    const loop = 2 * northMetres(40.05, 0.02) + eastMetres(40.06, 0.02);
    expect(one(back, 'Loop Corner (n14)')).toMatchObject({
      travel_time: Math.round(seconds(loop) / 6) / 10,
      travel_distance: Math.round((loop / MILE) * 100) / 100,
    });
  });

  it('leaves out the slower stores and the unreachable ones under max_travel_time, then applies limit; km too', async () => {
    const quick = await search(t, at(N3, { max_travel_time: 8 }));
    expect(quick.body.locations.map((l) => l.name)).toEqual(['West Road South (n1)', 'East Bank (n13)']);
    const two = await search(t, at(N3, { limit: 2 }));
    expect(two.body.locations.map((l) => l.name)).toEqual(['West Road South (n1)', 'East Bank (n13)']);
    const km = await search(t, at(N3, { distance_unit: 'km', max_distance: 80, limit: 1 }));
    expect(km.body.locations).toMatchObject([{ name: 'West Road South (n1)', travel_distance: Math.round(ROAD_METRES.WEST / 10) / 100 }]);
  });

  it('asks the engine once per search, and not again for the same search', async () => {
    const before = (await outcomes(t)).ok ?? 0;
    const first = await search(t, at({ lat: 40.0201, lng: -100.0201 }));
    const again = await search(t, at({ lat: 40.0201, lng: -100.0201 }));
    expect(again.body).toEqual(first.body);
    expect((await outcomes(t)).ok).toBe(before + 1);
  });

  it('routes a new customer moved onto the same point of a road as an earlier one by the kept times: only the move is asked', async () => {
    // 9 m either side of the road n2 - n3 (north-south at -100.02), level with each other: both are moved to one point of it.
    const west = await search(t, at({ lat: 40.0105, lng: -100.0201 }));
    expect(west.headers['travel-source']).toBe('pgrouting');
    // Routing now fails (its cost column is gone); moving a point onto a road does not use it.
    await db.client.query('ALTER TABLE roads.ways RENAME COLUMN cost_s TO cost_s_away');
    try {
      const east = await search(t, at({ lat: 40.0105, lng: -100.0199 }));
      expect(east.headers['travel-source']).toBe('pgrouting');
      const times = (res: Answer) => res.body.locations.map((l) => [l.name, l.travel_time, l.travel_distance]);
      expect(times(east)).toEqual(times(west));
      // A customer moved elsewhere is routed, and that fails: the straight line.
      expect((await search(t, at({ lat: 40.0106, lng: -100.0201 }))).headers['travel-source']).toBe('straight-line');
    } finally {
      await db.client.query('ALTER TABLE roads.ways RENAME COLUMN cost_s_away TO cost_s');
    }
  });

  it('answers a store added meanwhile: a kept answer goes when the catalogue changes within its reach', async () => {
    const place = at({ lat: 40.0202, lng: -100.0202 }, { limit: 1 });
    expect((await search(t, place)).body.locations.map((l) => l.name)).toEqual(['West Road South (n1)']);
    // A store a minute up the road from the customer.
    await importStores(
      t,
      storesCsv([...RIVER_STORES, { code: 'NEAR', name: 'Just Up the Road', lat: 40.03, lng: -100.02, city: 'McCook', state: 'NE', zip: '69001' }]),
    );
    expect((await search(t, place)).body.locations.map((l) => l.name)).toEqual(['Just Up the Road']);
  });

  it('answers a customer far from any road with every store unreachable, in straight-line order', async () => {
    const res = await search(t, at({ lat: 40.02, lng: -100.13 }));
    expect(res.headers['travel-source']).toBe('pgrouting');
    expect(res.body.locations.every((l) => l.travel_time === null && l.travel_distance === null)).toBe(true);
    const distances = res.body.locations.map((l) => l.distance);
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
  });

  describe('when the engine cannot answer: the straight-line order, Travel-Source: straight-line, never a 5xx', () => {
    const straightLine = async (other: TestApp, tries: number) => {
      const plain = await search(other, { customer_address: { zip: '69001', ...N3 }, max_distance: 50 });
      const statuses: number[] = [];
      for (let i = 0; i < tries; i++) {
        const res = await search(other, at({ lat: N3.lat + i / 10_000, lng: N3.lng }, { max_travel_time: 1 }));
        statuses.push(res.status);
        expect(res.headers['travel-source']).toBe('straight-line');
        if (i === 0)
          expect(res.body.locations.map(({ name, travel_time }) => ({ name, travel_time }))).toEqual(
            plain.body.locations.map(({ name }) => ({ name, travel_time: null })),
          );
      }
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    };

    it('a database that refuses connections: errors, then the breaker skips it', async () => {
      const down = await app({ ROUTER_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/roads', ROUTER_BREAKER_FAILURES: '3' });
      try {
        await straightLine(down, 6);
        expect(await outcomes(down)).toEqual({ error: 3, breaker_open: 3 });
      } finally {
        await down.close();
      }
    });

    it('a schema without the network (a query error)', async () => {
      const wrong = await app({ ROUTER_SCHEMA: 'no_such_schema' });
      try {
        await straightLine(wrong, 2);
        expect(await outcomes(wrong)).toEqual({ error: 2 });
      } finally {
        await wrong.close();
      }
    });

    it('an engine slower than ROUTER_TIMEOUT_MS', async () => {
      // A network whose every road piece takes a quarter of a second to read.
      await db.client.query('CREATE SCHEMA slow');
      await db.client.query('CREATE VIEW slow.ways AS SELECT w.*, pg_sleep(0.25) IS NULL AS slept FROM roads.ways w');
      const slow = await app({ ROUTER_SCHEMA: 'slow', ROUTER_TIMEOUT_MS: '300' });
      try {
        await straightLine(slow, 2);
        expect(await outcomes(slow)).toEqual({ timeout: 2 });
      } finally {
        await slow.close();
      }
    });
  });
});
