import type { Point } from '../src/shared/great-circle.js';
import { ZipGeocoder } from '../src/geo/zip-geocoder.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
/** A point `miles` due north of `from`. */
const north = (from: Point, miles: number): Point => ({ lat: from.lat + (miles / 3958.8) * (180 / Math.PI), lng: from.lng });

type Answer = { status: number; text: string; headers: Record<string, string | undefined>; body: { locations: Array<Record<string, unknown>> } };

/**
 * `travel_mode` and `max_travel_time` while the service asks no routing engine: every answer is
 * the straight-line one (the stores, order and limit of the same search without them), each
 * location with null times, and `Travel-Source: straight-line`; without them nothing changes.
 */
describe('POST /locations/nearest with travel_mode: the straight-line answer', () => {
  let t: TestApp;
  let token: string;
  let admin: string;

  const search = async (body: object, path = '/locations/nearest', as = token): Promise<Answer> => await t.http.post(path).set(bearer(as)).send(body);

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    token = await t.tokenFor('shop');
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    const wichita = t.app.get(ZipGeocoder).lookup('67202')!;
    const at = (miles: number) => north(wichita, miles);
    const stores: StoreInput[] = [0.5, 1, 2, 3, 4, 8, 30].map((miles, i) => ({
      code: `WIC-${i}`,
      name: `Wichita ${miles} mi`,
      city: 'Wichita',
      state: 'KS',
      zip: '67202',
      ...at(miles),
    }));
    await importStores(t, storesCsv(stores));
  });
  afterAll(() => t.close());

  const ZIP = { customer_address: { zip: '67202' } };
  const SEARCHES: Array<[string, object]> = [
    ['a radius search', { ...ZIP, max_distance: 5, limit: 3 }],
    ['in kilometres', { ...ZIP, max_distance: 10, distance_unit: 'km' }],
    ['a region', { ...ZIP, region: { state: 'KS', city: 'Wichita' }, limit: 4 }],
    ['the nearest store when none is in range', { customer_address: { zip: '66044' }, max_distance: 1, nearest_if_none: true }],
    ['at a moment, open stores only', { ...ZIP, max_distance: 50, open_at: '2026-11-25T17:30:00Z', open_only: true, limit: 5 }],
    ['with nothing in range', { ...ZIP, max_distance: 0.1 }],
  ];

  it.each(SEARCHES)('%s: the same stores in the same order, each with null times, Travel-Source: straight-line', async (_, body) => {
    const plain = await search(body);
    expect(plain.status).toBe(200);
    expect(plain.headers['travel-source']).toBeUndefined();
    for (const extra of [{ travel_mode: 'driving' }, { travel_mode: 'driving', max_travel_time: 0.5 }]) {
      const driving = await search({ ...body, ...extra });
      expect(driving.status).toBe(200);
      expect(driving.headers['travel-source']).toBe('straight-line');
      expect([driving.headers['search-scope'], driving.headers['distance-unit']]).toEqual([plain.headers['search-scope'], plain.headers['distance-unit']]);
      // max_travel_time leaves nothing out: there are no times to compare with it.
      expect(driving.body.locations).toEqual(plain.body.locations.map((location) => ({ ...location, travel_time: null, travel_distance: null })));
      expect(Object.keys(driving.body.locations[0] ?? { travel_time: null }).slice(-2)).toEqual(
        driving.body.locations.length > 0 ? ['travel_time', 'travel_distance'] : ['travel_time'],
      );
    }
  });

  it('answers the admin search the same way', async () => {
    const body = { ...ZIP, max_distance: 5, travel_mode: 'driving' };
    const [customer, operator] = [await search(body), await search(body, '/admin/locations/nearest', admin)];
    expect(operator.status).toBe(200);
    expect(operator.headers['travel-source']).toBe('straight-line');
    expect(operator.text).toBe(customer.text);
    expect(customer.body.locations).toHaveLength(5);
  });

  it('takes null for either field as not given: the answer is byte for byte the one without them', async () => {
    const plain = await search({ ...ZIP, max_distance: 5 });
    for (const extra of [{ travel_mode: null }, { max_travel_time: null }, { travel_mode: null, max_travel_time: null }]) {
      const res = await search({ ...ZIP, max_distance: 5, ...extra });
      expect(res.status).toBe(200);
      expect(res.headers['travel-source']).toBeUndefined();
      expect(res.text).toBe(plain.text);
    }
  });

  describe('bad input: 400 naming the field, and nothing else answered', () => {
    const MODE = 'travel_mode must be "driving"';
    const TIME = 'max_travel_time must be a number of minutes greater than 0 and at most 600';
    const NEEDS = 'max_travel_time needs travel_mode: the travel times it bounds';
    it.each([
      [{ travel_mode: 'walking' }, MODE],
      [{ travel_mode: 'DRIVING' }, MODE],
      [{ travel_mode: '' }, MODE],
      [{ travel_mode: 1 }, MODE],
      [{ travel_mode: ['driving'] }, MODE],
      [{ travel_mode: 'driving', max_travel_time: 0 }, TIME],
      [{ travel_mode: 'driving', max_travel_time: -5 }, TIME],
      [{ travel_mode: 'driving', max_travel_time: 600.5 }, TIME],
      [{ travel_mode: 'driving', max_travel_time: '20' }, TIME],
      [{ travel_mode: 'driving', max_travel_time: true }, TIME],
      [{ max_travel_time: 20 }, NEEDS],
      [{ travel_mode: null, max_travel_time: 20 }, NEEDS],
    ])('%j', async (extra, message) => {
      const res = await search({ ...ZIP, ...extra });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 400, message } });
      expect(res.headers['travel-source']).toBeUndefined();
    });

    it('takes the bounds themselves: 600 minutes, and a fraction of one', async () => {
      for (const minutes of [600, 0.1]) {
        const res = await search({ ...ZIP, travel_mode: 'driving', max_travel_time: minutes });
        expect([res.status, res.headers['travel-source']]).toEqual([200, 'straight-line']);
      }
    });
  });
});
