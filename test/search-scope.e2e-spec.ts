import { haversineMiles, type Point } from '../src/shared/great-circle.js';
import { ZipGeocoder } from '../src/geo/zip-geocoder.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { importStores, storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const KM_PER_MILE = 1.609344;
const round = (value: number) => Math.round(value * 100) / 100;
/** A point `miles` due north of `from`. */
const north = (from: Point, miles: number): Point => ({ lat: from.lat + (miles / 3958.8) * (180 / Math.PI), lng: from.lng });

type Found = { name: string; distance: number; open?: boolean };
type Answer = { status: number; text: string; headers: Record<string, string>; body: { locations: Found[] } };

describe('POST /locations/nearest: distance_unit, nearest_if_none and region', () => {
  let t: TestApp;
  let token: string;
  let admin: string;
  let wichita: Point;
  let alliance: Point;
  let rows: Map<string, Store>;

  /** A search; every 200 must say its unit and scope. */
  const search = async (body: object, as = token, path = '/locations/nearest'): Promise<Answer> => {
    const res = (await t.http.post(path).set(bearer(as)).send(body)) as unknown as Answer;
    if (res.status === 200) {
      expect(['mi', 'km']).toContain(res.headers['distance-unit']);
      expect(['radius', 'nearest', 'region']).toContain(res.headers['search-scope']);
    }
    return res;
  };
  const names = (res: Answer) => res.body.locations.map((l) => l.name);
  const headers = (res: Answer) => [res.status, res.headers['distance-unit'], res.headers['search-scope']];
  const milesFrom = (from: Point, name: string) => {
    const row = [...rows.values()].find((r) => r.name === name)!;
    return haversineMiles(from, { lat: row.lat, lng: row.lng });
  };

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    token = await t.tokenFor('shop');
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    const zips = t.app.get(ZipGeocoder);
    wichita = zips.lookup('67202')!;
    alliance = zips.lookup('69301')!;
  });
  afterAll(async () => {
    await t.close();
  });

  it('with an empty catalogue, nearest_if_none answers an empty list (scope radius), and a region search too', async () => {
    await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(0);
    const nearest = await search({ customer_address: { zip: '67202' }, nearest_if_none: true });
    expect(headers(nearest)).toEqual([200, 'mi', 'radius']);
    expect(nearest.text).toBe('{"Code":"Success","locations":[]}');
    const region = await search({ customer_address: { zip: '67202' }, region: { state: 'KS' } });
    expect(headers(region)).toEqual([200, 'mi', 'region']);
    expect(region.text).toBe('{"Code":"Success","locations":[]}');
  });

  describe('on a catalogue in Kansas, Nebraska and New York', () => {
    const ALL_DAY = Object.fromEntries(Object.keys(WEEK_OPEN).map((day) => [day, day === 'sunday' ? 'Closed' : '12:00 AM - 12:00 AM']));
    beforeAll(async () => {
      const at = (p: Point) => ({ lat: p.lat, lng: p.lng });
      const stores: StoreInput[] = [
        { code: 'WIC-1', name: 'Wichita Half Mile', city: 'Wichita', state: 'KS', zip: '67202', ...at(north(wichita, 0.5)) },
        { code: 'WIC-2', name: 'Wichita Two Miles', city: 'Wichita', state: 'KS', zip: '67202', ...at(north(wichita, 2)) },
        { code: 'WIC-3', name: 'Wichita Four Miles', city: 'Wichita', state: 'KS', zip: '67202', ...at(north(wichita, 4)) },
        { code: 'TOP-1', name: 'Topeka', city: 'Topeka', state: 'KS', zip: '66603' },
        { code: 'GC-1', name: 'Garden City Main', city: 'Garden City', state: 'KS', zip: '67846' },
        { code: 'GC-2', name: 'Garden City East', city: 'garden city', state: 'KS', zip: '67846', ...at(north(t.app.get(ZipGeocoder).lookup('67846')!, 1)) },
        { code: 'GC-NY', name: 'Garden City New York', city: 'Garden City', state: 'NY', zip: '11530' },
        // The Nebraska panhandle: nothing within 35 miles of Alliance; one store 40 miles north, one open all day (but Sundays) 60 miles north.
        { code: 'NE-40', name: 'Forty Miles North', city: 'Hay Springs', state: 'NE', zip: '69347', ...at(north(alliance, 40)) },
        { code: 'NE-60', name: 'Sixty Miles North, All Day', city: 'Gordon', state: 'NE', zip: '69343', ...at(north(alliance, 60)), hours: ALL_DAY },
      ];
      await importStores(t, storesCsv(stores));
      rows = new Map((await t.dataSource.getRepository(Store).find()).map((r) => [r.code, r]));
      expect(rows.size).toBe(stores.length);
    });

    describe('distance_unit', () => {
      it('without the new fields, the answer is byte for byte the one with their defaults given, in miles, scope radius', async () => {
        const plain = await search({ customer_address: { zip: '67202' } });
        expect(headers(plain)).toEqual([200, 'mi', 'radius']);
        expect(names(plain)).toEqual(['Wichita Half Mile', 'Wichita Two Miles', 'Wichita Four Miles']);
        for (const extra of [
          { distance_unit: 'mi', nearest_if_none: false },
          { distance_unit: null, nearest_if_none: null, region: null },
        ]) {
          const same = await search({ customer_address: { zip: '67202' }, ...extra });
          expect(headers(same)).toEqual([200, 'mi', 'radius']);
          expect(same.text).toBe(plain.text);
        }
        for (const location of plain.body.locations)
          expect(Object.keys(location)).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']);
      });

      it('in kilometres: max_distance read in km, each distance the haversine in miles × 1.609344, rounded to two decimals', async () => {
        const miles = await search({ customer_address: { zip: '67202' }, max_distance: 5 });
        const km = await search({ customer_address: { zip: '67202' }, max_distance: 5 * KM_PER_MILE, distance_unit: 'km' });
        expect(headers(km)).toEqual([200, 'km', 'radius']);
        expect(names(km)).toEqual(names(miles));
        expect(km.body.locations.map((l) => l.distance)).toEqual(names(km).map((name) => round(milesFrom(wichita, name) * KM_PER_MILE)));
        expect(miles.body.locations.map((l) => l.distance)).toEqual(names(miles).map((name) => round(milesFrom(wichita, name))));
        // The same stores, the same order, only `distance` differs.
        expect(km.body.locations.map(({ distance: _, ...rest }) => rest)).toEqual(miles.body.locations.map(({ distance: _, ...rest }) => rest));
        // 5 km (3.1 miles): the stores within 3.1 miles only.
        const five = await search({ customer_address: { zip: '67202' }, distance_unit: 'km', max_distance: 5 });
        expect(names(five)).toEqual(['Wichita Half Mile', 'Wichita Two Miles']);
        // The default max_distance is 5 in the request's unit.
        const byDefault = await search({ customer_address: { zip: '67202' }, distance_unit: 'km' });
        expect(byDefault.text).toBe(five.text);
      });

      it('counts a store exactly at max_distance kilometres, and not one just beyond', async () => {
        const edge = milesFrom(wichita, 'Wichita Two Miles') * KM_PER_MILE;
        const at = await search({ customer_address: { zip: '67202' }, distance_unit: 'km', max_distance: edge });
        expect(names(at)).toEqual(['Wichita Half Mile', 'Wichita Two Miles']);
        const below = await search({ customer_address: { zip: '67202' }, distance_unit: 'km', max_distance: edge * (1 - 1e-12) });
        expect(names(below)).toEqual(['Wichita Half Mile']);
      });

      it('bounds max_distance by the same distance in either unit: 500 miles, 804.672 km', async () => {
        const MILES = 'max_distance must be a number of miles greater than 0 and at most 500';
        const KM = 'max_distance must be a number of kilometres greater than 0 and at most 804.672';
        expect(headers(await search({ customer_address: { zip: '67202' }, max_distance: 500 }))).toEqual([200, 'mi', 'radius']);
        expect(headers(await search({ customer_address: { zip: '67202' }, max_distance: 804.672, distance_unit: 'km' }))).toEqual([200, 'km', 'radius']);
        expect(headers(await search({ customer_address: { zip: '67202' }, max_distance: 600, distance_unit: 'km' }))).toEqual([200, 'km', 'radius']);
        await t.http
          .post('/locations/nearest')
          .set(bearer(token))
          .send({ customer_address: { zip: '67202' }, max_distance: 600 })
          .expect(400, { error: 400, message: MILES });
        await t.http
          .post('/locations/nearest')
          .set(bearer(token))
          .send({ customer_address: { zip: '67202' }, max_distance: 500.001, distance_unit: 'mi' })
          .expect(400, { error: 400, message: MILES });
        for (const max_distance of [804.673, 0, -1, '5']) {
          await t.http
            .post('/locations/nearest')
            .set(bearer(token))
            .send({ customer_address: { zip: '67202' }, max_distance, distance_unit: 'km' })
            .expect(400, { error: 400, message: KM });
        }
      });

      it('works with the admin door too, headers included', async () => {
        const res = await search({ customer_address: { zip: '67202' }, distance_unit: 'km' }, admin, '/admin/locations/nearest');
        expect(headers(res)).toEqual([200, 'km', 'radius']);
        expect(res.text).toBe((await search({ customer_address: { zip: '67202' }, distance_unit: 'km' })).text);
      });
    });

    describe('nearest_if_none', () => {
      it('answers the single nearest store, 40 miles away, when none is within 5 miles (scope nearest); without it the list is empty', async () => {
        const none = await search({ customer_address: { zip: '69301' }, max_distance: 5 });
        expect(headers(none)).toEqual([200, 'mi', 'radius']);
        expect(none.body.locations).toEqual([]);
        const nearest = await search({ customer_address: { zip: '69301' }, max_distance: 5, nearest_if_none: true });
        expect(headers(nearest)).toEqual([200, 'mi', 'nearest']);
        expect(nearest.body.locations.map((l) => [l.name, l.distance])).toEqual([['Forty Miles North', round(milesFrom(alliance, 'Forty Miles North'))]]);
        expect(nearest.body.locations[0].distance).toBeCloseTo(40, 1);
        const km = await search({ customer_address: { zip: '69301' }, max_distance: 5, nearest_if_none: true, distance_unit: 'km' });
        expect(headers(km)).toEqual([200, 'km', 'nearest']);
        expect(km.body.locations.map((l) => [l.name, l.distance])).toEqual([
          ['Forty Miles North', round(milesFrom(alliance, 'Forty Miles North') * KM_PER_MILE)],
        ]);
      });

      it('answers the stores in range as usual when there are some (scope radius)', async () => {
        const inRange = await search({ customer_address: { zip: '67202' }, nearest_if_none: true });
        expect(headers(inRange)).toEqual([200, 'mi', 'radius']);
        expect(inRange.text).toBe((await search({ customer_address: { zip: '67202' } })).text);
        const wide = await search({ customer_address: { zip: '69301' }, max_distance: 70, nearest_if_none: true });
        expect([headers(wide), names(wide)]).toEqual([
          [200, 'mi', 'radius'],
          ['Forty Miles North', 'Sixty Miles North, All Day'],
        ]);
      });

      it('with open_only at night answers the nearest open store, and nothing when no store is open anywhere', async () => {
        // Wednesday 2026-11-25, 3 AM in Nebraska's panhandle (Mountain time): only the all-day store is open.
        const night = await search({ customer_address: { zip: '69301' }, nearest_if_none: true, open_at: '2026-11-25T03:00:00-07:00', open_only: true });
        expect(headers(night)).toEqual([200, 'mi', 'nearest']);
        expect(night.body.locations.map((l) => [l.name, l.open, l.distance])).toEqual([
          ['Sixty Miles North, All Day', true, round(milesFrom(alliance, 'Sixty Miles North, All Day'))],
        ]);
        // Sunday 3 AM: every store is closed.
        const sunday = await search({ customer_address: { zip: '69301' }, nearest_if_none: true, open_at: '2026-11-29T03:00:00-07:00', open_only: true });
        expect(headers(sunday)).toEqual([200, 'mi', 'radius']);
        expect(sunday.text).toBe('{"Code":"Success","locations":[]}');
        // Without open_only the nearest store is the nearest, open or not, and says it is closed.
        const any = await search({ customer_address: { zip: '69301' }, nearest_if_none: true, open_at: '2026-11-25T03:00:00-07:00' });
        expect(any.body.locations.map((l) => [l.name, l.open])).toEqual([['Forty Miles North', false]]);
      });
    });

    describe('region', () => {
      it('answers every store of the state and no other, nearest first from the customer, whatever the distance (scope region)', async () => {
        const res = await search({ customer_address: { zip: '67202' }, region: { state: 'ks' } });
        expect(headers(res)).toEqual([200, 'mi', 'region']);
        const kansas = [...rows.values()].filter((r) => r.state === 'KS');
        expect(new Set(names(res))).toEqual(new Set(kansas.map((r) => r.name)));
        expect(names(res)).toHaveLength(kansas.length);
        const distances = res.body.locations.map((l) => l.distance);
        expect(distances).toEqual(names(res).map((name) => round(milesFrom(wichita, name))));
        expect([...distances].sort((a, b) => a - b)).toEqual(distances);
        expect(Math.max(...distances)).toBeGreaterThan(150); // Garden City, far beyond the default 5 miles
        expect(names(res).slice(0, 3)).toEqual(['Wichita Half Mile', 'Wichita Two Miles', 'Wichita Four Miles']);
      });

      it('honours limit', async () => {
        const all = await search({ customer_address: { zip: '67202' }, region: { state: 'KS' } });
        const two = await search({ customer_address: { zip: '67202' }, region: { state: 'KS' }, limit: 2 });
        expect(two.body.locations).toEqual(all.body.locations.slice(0, 2));
      });

      it('answers the stores of a city of the state, its name compared without regard to case or surrounding spaces, leaving out the same-named city of another state', async () => {
        for (const city of ['Garden City', '  GARDEN city ']) {
          const res = await search({ customer_address: { zip: '67202' }, region: { state: 'KS', city } });
          expect(headers(res)).toEqual([200, 'mi', 'region']);
          expect(names(res).sort()).toEqual(['Garden City East', 'Garden City Main']);
          expect(res.body.locations.map((l) => l.distance)).toEqual(names(res).map((name) => round(milesFrom(wichita, name))));
        }
        const newYork = await search({ customer_address: { zip: '67202' }, region: { state: 'NY', city: 'garden city' } });
        expect(names(newYork)).toEqual(['Garden City New York']);
        const none = await search({ customer_address: { zip: '67202' }, region: { state: 'KS', city: 'Dodge City' } });
        expect([headers(none), none.text]).toEqual([[200, 'mi', 'region'], '{"Code":"Success","locations":[]}']);
      });

      it("measures from the device's position, and works with distance_unit and open_only", async () => {
        const topeka = rows.get('TOP-1')!;
        const device = { lat: topeka.lat + 0.01, lng: topeka.lng };
        const res = await search({ customer_address: { zip: '67202', lat: device.lat, lng: device.lng }, region: { state: 'KS' }, distance_unit: 'km' });
        expect([...headers(res), res.headers['customer-position']]).toEqual([200, 'km', 'region', 'device']);
        expect(names(res)[0]).toBe('Topeka');
        expect(res.body.locations.map((l) => l.distance)).toEqual(names(res).map((name) => round(milesFrom(device, name) * KM_PER_MILE)));
        // Sunday afternoon: every Kansas store keeps WEEK_OPEN, closed on Sundays.
        const sunday = await search({ customer_address: { zip: '67202' }, region: { state: 'KS' }, open_at: '2026-11-29T14:00:00-06:00', open_only: true });
        expect([headers(sunday), sunday.body.locations]).toEqual([[200, 'mi', 'region'], []]);
        const nebraska = await search({ customer_address: { zip: '67202' }, region: { state: 'NE' }, open_at: '2026-11-25T03:00:00-07:00', open_only: true });
        expect(names(nebraska)).toEqual(['Sixty Miles North, All Day']);
      });

      it('refuses max_distance beside it, whatever its value', async () => {
        const message = 'max_distance cannot be given with region: a region search takes every store of the region, at any distance';
        for (const max_distance of [5, 500, 0]) {
          await t.http
            .post('/locations/nearest')
            .set(bearer(token))
            .send({ customer_address: { zip: '67202' }, region: { state: 'KS' }, max_distance })
            .expect(400, { error: 400, message });
        }
        // null is "not given", as for every optional field.
        expect(headers(await search({ customer_address: { zip: '67202' }, region: { state: 'KS' }, max_distance: null }))).toEqual([200, 'mi', 'region']);
      });
    });
  });

  describe('bad input: 400 naming the field', () => {
    const UNIT = 'distance_unit must be "mi" or "km"';
    it.each([
      [{ distance_unit: 'miles' }, UNIT],
      [{ distance_unit: 'KM' }, UNIT],
      [{ distance_unit: '' }, UNIT],
      [{ distance_unit: 1 }, UNIT],
      [{ distance_unit: 'kilometres', max_distance: 700 }, UNIT],
      [{ nearest_if_none: 'true' }, 'nearest_if_none must be true or false'],
      [{ nearest_if_none: 1 }, 'nearest_if_none must be true or false'],
      [{ nearest_if_none: true, region: { state: 'KS' } }, 'nearest_if_none cannot be given with region: a region search has no radius to look beyond'],
      [{ region: 'KS' }, 'region must be an object'],
      [{ region: ['KS'] }, 'region must be an object'],
      [{ region: {} }, 'region.state is required'],
      [{ region: { city: 'Wichita' } }, 'region.state is required'],
      [{ region: { state: 'XX' } }, 'region.state must be a US state or territory code such as NY'],
      [{ region: { state: 'Kansas' } }, 'region.state must be a US state or territory code such as NY'],
      [{ region: { state: 20 } }, 'region.state must be a US state or territory code such as NY'],
      [{ region: { state: 'KS', city: '' } }, 'region.city must be 1 to 200 characters'],
      [{ region: { state: 'KS', city: '   ' } }, 'region.city must not be only white space'],
      [{ region: { state: 'KS', city: 'c'.repeat(201) } }, 'region.city must be 1 to 200 characters'],
      [{ region: { state: 'KS', city: 7 } }, 'region.city must be a string'],
      [{ region: { state: 'KS', zip: '67202' } }, 'unknown field region.zip'],
      [
        { region: { state: 'KS' }, max_distance: 10 },
        'max_distance cannot be given with region: a region search takes every store of the region, at any distance',
      ],
    ])('%j', async (extra, message) => {
      await t.http
        .post('/locations/nearest')
        .set(bearer(token))
        .send({ customer_address: { zip: '67202' }, ...extra })
        .expect(400, { error: 400, message });
    });
  });
});
