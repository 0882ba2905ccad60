import { readFileSync } from 'node:fs';
import { DEMO_STORES_FILE } from '../src/demo/demo-seed.service.js';
import { haversineMiles } from '../src/shared/great-circle.js';
import { ZipGeocoder } from '../src/geo/zip-geocoder.js';
import { StoreIndex } from '../src/locations/store-index.js';
import { Store } from '../src/stores/store.entity.js';
import { importStores, storesCsv } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

describe('POST /locations/nearest', () => {
  let t: TestApp;
  let token: string;
  const search = (body: unknown) =>
    t.http
      .post('/locations/nearest')
      .set(bearer(token))
      .send(body as object);
  const names = (res: { body: { locations: Array<{ name: string }> } }) => res.body.locations.map((l) => l.name);
  /** Empties the stores table by hand, and has the index load it again: a write made around the catalogue's door is no change the index hears of. */
  const clearStores = async () => {
    await t.dataSource.getRepository(Store).clear();
    await t.app.get(StoreIndex).reload();
  };

  beforeAll(async () => {
    t = await createTestApp();
    token = await t.tokenFor('shop');
  });
  afterAll(() => t.close());

  describe('on the demo store list', () => {
    beforeAll(async () => {
      await clearStores();
      await importStores(t, readFileSync(DEMO_STORES_FILE, 'utf8'));
    });

    it('answers Success with the stores within range, nearest first, in the documented shape', async () => {
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 5 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['Code', 'locations']);
      expect(res.body.Code).toBe('Success');
      const locations = res.body.locations as Array<Record<string, unknown>>;
      expect(locations.length).toBeGreaterThanOrEqual(3);
      const distances = locations.map((l) => l.distance as number);
      expect([...distances].sort((a, b) => a - b)).toEqual(distances);
      expect(distances.every((d) => d <= 5)).toBe(true);
      for (const location of locations) {
        expect(Object.keys(location).sort()).toEqual(['address', 'business_hours', 'city', 'distance', 'lat', 'lng', 'name', 'state', 'zip']);
        expect(location.lat).toMatch(/^-?\d{1,3}\.\d{6}$/);
        expect(location.lng).toMatch(/^-?\d{1,3}\.\d{6}$/);
        expect(Number((location.distance as number).toFixed(2))).toBe(location.distance);
        expect(Object.keys(location.business_hours as object)).toEqual(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']);
        expect(Object.values(location.business_hours as object).every((h) => typeof h === 'string' && h.length > 0)).toBe(true);
      }
    });

    it('reports each distance as the haversine from the ZIP point, to two decimals', async () => {
      const center = t.app.get(ZipGeocoder).lookup('10001')!;
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 3 });
      for (const l of res.body.locations) {
        const expected = haversineMiles(center, { lat: Number(l.lat), lng: Number(l.lng) });
        expect(l.distance).toBe(Math.round(expected * 100) / 100);
      }
    });

    it('defaults max_distance to 5 and limit to 25', async () => {
      const defaults = await search({ customer_address: { zip: '10001' } });
      const explicit = await search({ customer_address: { zip: '10001' }, max_distance: 5, limit: 25 });
      expect(defaults.status).toBe(200);
      expect(defaults.body).toEqual(explicit.body);
      const nulls = await search({ customer_address: { zip: '10001', city: null }, max_distance: null, limit: null });
      expect(nulls.body).toEqual(explicit.body);
      const wide = await search({ customer_address: { zip: '10001' }, max_distance: 500 });
      expect(wide.body.locations).toHaveLength(25);
    });

    it('honours limit', async () => {
      const all = await search({ customer_address: { zip: '10001' }, max_distance: 50, limit: 200 });
      const two = await search({ customer_address: { zip: '10001' }, max_distance: 50, limit: 2 });
      expect(all.body.locations.length).toBeGreaterThan(2);
      expect(two.body.locations).toEqual(all.body.locations.slice(0, 2));
    });

    it.each(['10001-1234', '100011234', '  10001 ', '\t10001-0000\n'])('takes ZIP form %j as 10001', async (zip) => {
      const canonical = await search({ customer_address: { zip: '10001' } });
      const res = await search({ customer_address: { zip } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(canonical.body);
    });

    it('keeps leading zeros (02108, Boston)', async () => {
      const res = await search({ customer_address: { zip: '02108', city: 'Boston', state: 'ma' }, max_distance: 10 });
      expect(res.status).toBe(200);
      expect(res.body.locations.length).toBeGreaterThan(0);
      expect(res.body.locations.every((l: { state: string }) => ['MA'].includes(l.state))).toBe(true);
    });

    it('knows PO-box ZIPs that have no ZCTA (00501, Holtsville NY)', async () => {
      const res = await search({ customer_address: { zip: '00501' }, max_distance: 60 });
      expect(res.status).toBe(200);
      // Holtsville sits on Long Island; its nearest demo stores are across the Sound and in New York City.
      expect(res.body.locations.length).toBeGreaterThan(0);
      expect(res.body.locations.every((l: { state: string }) => ['NY', 'CT', 'NJ'].includes(l.state))).toBe(true);
    });

    it('returns an empty array when nothing is in range', async () => {
      const res = await search({ customer_address: { zip: '99950' }, max_distance: 100 });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ Code: 'Success', locations: [] });
    });
  });

  describe('distance rules', () => {
    let center: { lat: number; lng: number };
    beforeAll(async () => {
      await clearStores();
      center = t.app.get(ZipGeocoder).lookup('10001')!;
      await importStores(
        t,
        storesCsv([
          { code: 'B-2', name: 'Same Spot', lat: center.lat, lng: center.lng },
          { code: 'B-1', name: 'Same Spot', lat: center.lat, lng: center.lng },
          { code: 'A-9', name: 'Another Spot', lat: center.lat, lng: center.lng },
          { code: 'EDGE', name: 'Edge', lat: center.lat + 0.043, lng: center.lng },
          { code: 'FAR', name: 'Far', lat: center.lat + 0.1, lng: center.lng + 0.1 },
        ]),
      );
    });

    it('orders ties by name, then by store code', async () => {
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 1 });
      expect(res.body.locations.map((l: { name: string; distance: number }) => [l.name, l.distance])).toEqual([
        ['Another Spot', 0],
        ['Same Spot', 0],
        ['Same Spot', 0],
      ]);
      const rows = await t.dataSource.getRepository(Store).find({ where: { name: 'Same Spot' } });
      expect(rows.map((r) => r.code).sort()).toEqual(['B-1', 'B-2']);
    });

    it('includes a store exactly at max_distance and excludes it just inside', async () => {
      const edge = await t.dataSource.getRepository(Store).findOneByOrFail({ code: 'EDGE' });
      const exact = haversineMiles(center, edge);
      const at = await search({ customer_address: { zip: '10001' }, max_distance: exact });
      expect(names(at)).toContain('Edge');
      const below = await search({ customer_address: { zip: '10001' }, max_distance: exact - 1e-9 });
      expect(names(below)).not.toContain('Edge');
      expect(names(below)).toHaveLength(3);
    });

    it('does not include a store that is only inside the bounding box', async () => {
      // FAR is about 8.5 miles away diagonally; a 7.5-mile box holds its latitude and longitude, the circle does not.
      const far = await t.dataSource.getRepository(Store).findOneByOrFail({ code: 'FAR' });
      expect(haversineMiles(center, far)).toBeGreaterThan(7.5);
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 7.5 });
      expect(names(res)).not.toContain('Far');
    });
  });

  describe('response text', () => {
    // Each store's JSON is written once when the index loads and copied into responses (StoreIndex):
    // the text must be exactly what JSON.stringify of the documented object gives.
    const center = { lat: 40.75065, lng: -73.997293 };
    const stores = [
      {
        code: 'Q-1',
        name: 'Fern "Quoted" \\ Back\\slash',
        address: 'Zweigstraße 5 ½',
        city: 'Saint-Étienne',
        lat: center.lat,
        lng: center.lng,
        hours: { sunday: '10:00 AM - 2:00 PM' },
      },
      { code: 'Q-2', name: '植物の店 🌿', address: 'Line\tTab', city: 'Ōsaka', lat: center.lat + 0.01, lng: center.lng, hours: { monday: 'Closed' } },
      { code: 'Q-3', name: 'Plain', lat: center.lat + 0.02, lng: center.lng },
    ];

    beforeAll(async () => {
      await clearStores();
      await importStores(t, storesCsv(stores));
    });

    it('is byte for byte the JSON of the documented object, escapes and UTF-8 included, with each store its own hours', async () => {
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 5 });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const rows = await t.dataSource.getRepository(Store).find();
      const byName = new Map(rows.map((r) => [r.name, r]));
      const expected = {
        Code: 'Success',
        locations: (res.body.locations as Array<{ name: string; distance: number }>).map(({ name, distance }) => {
          const s = byName.get(name)!;
          return {
            name: s.name,
            address: s.address,
            city: s.city,
            state: s.state,
            zip: s.zip,
            business_hours: {
              Monday: s.monday,
              Tuesday: s.tuesday,
              Wednesday: s.wednesday,
              Thursday: s.thursday,
              Friday: s.friday,
              Saturday: s.saturday,
              Sunday: s.sunday,
            },
            lat: s.lat.toFixed(6),
            lng: s.lng.toFixed(6),
            distance,
          };
        }),
      };
      expect(res.body.locations.map((l: { name: string }) => l.name)).toEqual(stores.map((s) => s.name));
      expect(res.text).toBe(JSON.stringify(expected));
      expect(Buffer.byteLength(res.text)).toBe(Number(res.headers['content-length']));
      expect(res.body.locations[0].business_hours.Sunday).toBe('10:00 AM - 2:00 PM');
      expect(res.body.locations[1].business_hours.Monday).toBe('Closed');
      expect(res.body.locations[2].business_hours).toEqual({
        Monday: '9:00 AM - 6:00 PM',
        Tuesday: '9:00 AM - 6:00 PM',
        Wednesday: '9:00 AM - 6:00 PM',
        Thursday: '9:00 AM - 8:00 PM',
        Friday: '9:00 AM - 8:00 PM',
        Saturday: '10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM',
        Sunday: 'Closed',
      });
    });

    it('answers an empty list as {"Code":"Success","locations":[]}', async () => {
      const res = await search({ customer_address: { zip: '99501' }, max_distance: 1 });
      expect(res.status).toBe(200);
      expect(res.text).toBe('{"Code":"Success","locations":[]}');
    });
  });

  describe('validation', () => {
    it('answers 400 for a ZIP that no source knows', async () => {
      const res = await search({ customer_address: { zip: '00000' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: 'unknown ZIP code 00000' });
    });

    it.each([
      ['a JSON number', 10001, 'customer_address.zip must be a string'],
      ['four digits', '1234', 'customer_address.zip must be a US ZIP code'],
      ['letters', 'abcde', 'customer_address.zip must be a US ZIP code'],
      ['full-width digits', '１２３４５', 'customer_address.zip must be a US ZIP code'],
      ['ZIP+3', '12345-678', 'customer_address.zip must be a US ZIP code'],
      ['a space in ZIP+4', '12345 6789', 'customer_address.zip must be a US ZIP code'],
      ['empty', '', 'customer_address.zip must be a US ZIP code'],
      ['missing', undefined, 'customer_address.zip'],
    ])('answers 400 for a ZIP that is %s', async (_, zip, message) => {
      const res = await search({ customer_address: { zip } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.stringContaining(message) });
    });

    it.each([
      ['max_distance 0', { max_distance: 0 }, 'max_distance must be a number of miles greater than 0 and at most 500'],
      ['max_distance negative', { max_distance: -1 }, 'max_distance must be a number of miles greater than 0 and at most 500'],
      ['max_distance over 500', { max_distance: 500.01 }, 'max_distance must be a number of miles greater than 0 and at most 500'],
      ['max_distance as text', { max_distance: '5' }, 'max_distance must be a number of miles greater than 0 and at most 500'],
      ['limit 0', { limit: 0 }, 'limit must be an integer from 1 to 200'],
      ['limit 201', { limit: 201 }, 'limit must be an integer from 1 to 200'],
      ['limit fractional', { limit: 2.5 }, 'limit must be an integer from 1 to 200'],
      ['limit as text', { limit: '3' }, 'limit must be an integer from 1 to 200'],
      ['an unknown field', { radius: 3 }, 'unknown field radius'],
      ['an unknown address field', { customer_address: { zip: '10001', country: 'US' } }, 'unknown field customer_address.country'],
      ['a state that is not a code', { customer_address: { zip: '10001', state: 'New York' } }, 'customer_address.state must be a US state or territory code'],
      ['an unknown state code', { customer_address: { zip: '10001', state: 'XX' } }, 'customer_address.state must be a US state or territory code'],
      ['a city over 200 characters', { customer_address: { zip: '10001', city: 'c'.repeat(201) } }, 'customer_address.city must be at most 200 characters'],
      ['an address that is a number', { customer_address: { zip: '10001', address: 12 } }, 'customer_address.address must be a string'],
      ['no customer_address', { customer_address: undefined }, 'customer_address must be an object'],
      ['customer_address a string', { customer_address: '10001' }, 'customer_address must be an object'],
      ['customer_address an array', { customer_address: [{ zip: '10001' }] }, 'customer_address must be an object'],
    ])('answers 400 for %s', async (_, patch, message) => {
      const res = await search({ customer_address: { zip: '10001' }, ...patch });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.stringContaining(message) });
    });

    it('accepts a huge number as out of range, not as a 500', async () => {
      const res = await t.http
        .post('/locations/nearest')
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send('{"customer_address":{"zip":"10001"},"max_distance":1e400}');
      expect(res.status).toBe(400);
      expect(res.body.error).toBe(400);
    });
  });
});
