import { readFileSync } from 'node:fs';
import { FakeRouters } from './support/fake-routers.js';
import { RIVER_STORES } from './support/roads.js';
import { importStores, storesCsv } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * ROUTER=osrm against the answers a real OSRM server gave (test/fixtures/osrm-river-roads.json:
 * osrm-routed 6.0.0 with its car profile on test/fixtures/river-roads.osm, the network the
 * pgRouting specs use), replayed byte for byte in meaning by the stand-in: the service reads OSRM's
 * own answers (hints, names, moved locations, a store moved 8.5 km onto the nearest road, null for
 * the island with no route) as it should. The road distances are the ones worked out by hand in
 * test/drive-times.e2e-spec.ts; the times are OSRM's car profile's.
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const RECORDED = JSON.parse(readFileSync(new URL('./fixtures/osrm-river-roads.json', import.meta.url), 'utf8')) as {
  answers: Array<{ url: string; status: number; body: unknown }>;
};

type Location = { name: string; travel_time: number | null; travel_distance: number | null };

describe('POST /locations/nearest with travel_mode, ROUTER=osrm, on a real OSRM server’s recorded answers', () => {
  let fake: FakeRouters;
  let t: TestApp;
  let token: string;

  const search = async (point: { lat: number; lng: number }) => {
    const res = await t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send({ customer_address: { zip: '69001', ...point }, max_distance: 50, travel_mode: 'driving' })
      .expect(200);
    return {
      source: res.headers['travel-source'],
      locations: (res.body.locations as Location[]).map(({ name, travel_time, travel_distance }) => [name, travel_time, travel_distance]),
    };
  };

  beforeAll(async () => {
    fake = await new FakeRouters().start();
    fake.replay = new Map(RECORDED.answers.map(({ url, status, body }) => [url, { status, body }]));
    t = await createTestApp({ env: { ...ENV, ROUTER: 'osrm', ROUTER_URL: fake.url, ROUTER_TIMEOUT_MS: '2000' } });
    token = await t.tokenFor('shop');
    await importStores(t, storesCsv(RIVER_STORES));
  });
  afterAll(async () => {
    await t.close();
    await fake.stop();
  });

  it('from the west bank: over the bridge after the road south, the store moved 8.5 km and the island last', async () => {
    expect(await search({ lat: 40.02, lng: -100.02 })).toEqual({
      source: 'osrm',
      locations: [
        // n3 - n2 - n1: 4,441 m by hand.
        ['West Road South (n1)', 5.6, 2.76],
        // n3 - n2, the bridge, n12 - n13: 7,858 m; nearest in a straight line, second by road.
        ['East Bank (n13)', 10, 4.88],
        ['Loop Corner (n14)', 12.8, 6.26],
        ['One Way End (n31)', 14.9, 7.32],
        // OSRM moved it 8,536 m onto the west road (and answered 0 s): further than ROUTER_SNAP_MILES.
        ['Middle of a Field', null, null],
        // No route (null in OSRM's table).
        ['Island Lane', null, null],
      ],
    });
  });

  it('from the end of the one-way street: back to its start is the loop, not the street', async () => {
    const { locations } = await search({ lat: 40.04, lng: -99.96 });
    expect(locations.slice(0, 2)).toEqual([
      ['One Way End (n31)', 0, 0],
      ['Loop Corner (n14)', 7.7, 3.82],
    ]);
  });

  it('from a place off the roads: every store unreachable', async () => {
    const { source, locations } = await search({ lat: 40.02, lng: -100.13 });
    expect(source).toBe('osrm');
    expect(locations.map(([, time, distance]) => [time, distance])).toEqual(RIVER_STORES.map(() => [null, null]));
  });

  it('from either side of the west road: the same point of it, the same times', async () => {
    const west = await search({ lat: 40.0105, lng: -100.0201 });
    const east = await search({ lat: 40.0105, lng: -100.0199 });
    expect(west.locations.map(([name, time]) => [name, time])).toEqual([
      ['West Road South (n1)', 4.2],
      ['East Bank (n13)', 8.7],
      ['Loop Corner (n14)', 11.5],
      ['One Way End (n31)', 13.6],
      ['Middle of a Field', null],
      ['Island Lane', null],
    ]);
    expect(east.locations).toEqual(west.locations);
  });
});
