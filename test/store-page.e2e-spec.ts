import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { withClockAt } from './support/clock.js';
import { schemaOrgProblems } from './support/schema-org.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

/**
 * A New York store with a special day (Christmas Eve, a Thursday), the chain's Christmas Day
 * holiday and a closure in January, and a plain one. WEEK_OPEN: Monday to Wednesday 9:00 AM -
 * 6:00 PM, Thursday and Friday 9:00 AM - 8:00 PM, Saturday 10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM,
 * Sunday closed. Every expected value is worked out by hand: 2026-12-18 is a Friday.
 */
const STORES: StoreInput[] = [
  {
    code: 'NY-PAGE',
    name: 'Fern & Fig Chelsea',
    address: '1083 Cedar Lane',
    lat: 40.755823,
    lng: -74.001164,
    special: '2026-12-24=9:00 AM - 2:00 PM',
    closure: '2027-01-04/2027-01-10',
  },
  { code: 'NY-PLAIN', name: 'Plain Store', lat: 40.7526, lng: -73.9973 },
];

/** Contact fields as an operator types them: the phone is answered in E.164. */
const CONTACT = { phone: '(212) 555-0142', website: 'https://example.com/stores/plain', email: 'plain@example.com' };

const FRIDAY_NOON = Date.parse('2026-12-18T12:00:00-05:00');

const WEEKLY = {
  Monday: '9:00 AM - 6:00 PM',
  Tuesday: '9:00 AM - 6:00 PM',
  Wednesday: '9:00 AM - 6:00 PM',
  Thursday: '9:00 AM - 8:00 PM',
  Friday: '9:00 AM - 8:00 PM',
  Saturday: '10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM',
  Sunday: 'Closed',
};

const day = (name: string) => `https://schema.org/${name}`;
const hours = (days: string[], opens: string, closes: string, valid: object = {}) => ({
  '@type': 'OpeningHoursSpecification',
  dayOfWeek: days.map(day),
  opens,
  closes,
  ...valid,
});

describe('GET /locations/{code}: a store page', () => {
  let t: TestApp;
  let admin: string;
  let team: string;
  const page = (code: string, accept?: string) => {
    const req = t.http.get(`/locations/${encodeURIComponent(code)}`).set(bearer(team));
    return accept ? req.set('Accept', accept) : req;
  };
  const pageAt = (at: number, code: string, accept?: string) => withClockAt(at, async () => page(code, accept));
  const jsonLd = (res: { text: string }) => JSON.parse(res.text) as Record<string, unknown>;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('shop');
    await t.http.post('/admin/stores.csv').set(bearer(admin)).set('Content-Type', 'text/csv').send(storesCsv(STORES)).expect(200);
    await t.http.put('/admin/holidays/2026-12-25').set(bearer(admin)).send({ name: 'Christmas Day', hours: 'Closed' }).expect(201);
  });
  afterAll(() => t.close());

  describe('as JSON', () => {
    it('shows the Location, the code, the zone, the days ahead, the closure, and whether it is open now', async () => {
      const res = await pageAt(FRIDAY_NOON, 'NY-PAGE');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({
        name: 'Fern & Fig Chelsea',
        address: '1083 Cedar Lane',
        city: 'New York',
        state: 'NY',
        zip: '10001',
        business_hours: WEEKLY,
        lat: '40.755823',
        lng: '-74.001164',
        code: 'NY-PAGE',
        time_zone: 'America/New_York',
        special_days: [
          { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null },
          { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day' },
        ],
        temporarily_closed: { from: '2027-01-04', until: '2027-01-10' },
        open: true,
        next_change: '2026-12-18T20:00:00-05:00',
        hours_today: { date: '2026-12-18', hours: '9:00 AM - 8:00 PM', kind: 'weekly', holiday: null },
      });
      // The contract's Location fields in the search's order, then the page's own.
      expect(Object.keys(res.body as object).slice(0, 8)).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng']);
      expect(res.headers['cache-control']).toBe('private, max-age=60, must-revalidate');
      expect(res.headers.vary).toBe('Accept');
      expect(res.headers.etag).toMatch(/^"[\w-]{43}"$/);
    });

    it('shows the Location exactly as the search does, without distance', async () => {
      const found = await t.http
        .post('/locations/nearest')
        .set(bearer(team))
        .send({ customer_address: { zip: '10001' }, max_distance: 5 })
        .expect(200);
      const searched = (found.body.locations as Array<Record<string, unknown>>).find((l) => l.name === 'Fern & Fig Chelsea')!;
      const { distance: _distance, ...location } = searched;
      const res = await page('NY-PAGE').expect(200);
      expect(Object.fromEntries(Object.keys(location).map((key) => [key, (res.body as Record<string, unknown>)[key]]))).toEqual(location);
    });

    it('follows the special day, the holiday and the closure at fixed times', async () => {
      // Christmas Eve after its 2:00 PM closing: Christmas Day is closed, Saturday opens at 10:00 AM.
      const eve = await pageAt(Date.parse('2026-12-24T15:00:00-05:00'), 'NY-PAGE');
      expect(eve.status).toBe(200);
      expect(eve.body).toMatchObject({
        open: false,
        next_change: '2026-12-26T10:00:00-05:00',
        hours_today: { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null },
      });
      // In the closure: closed through Sunday 2027-01-10, open again Monday at 9:00 AM; its days are gone from the window.
      const closed = await pageAt(Date.parse('2027-01-05T12:00:00-05:00'), 'NY-PAGE');
      expect(closed.status).toBe(200);
      expect(closed.body).toMatchObject({
        open: false,
        next_change: '2027-01-11T09:00:00-05:00',
        special_days: [],
        temporarily_closed: { from: '2027-01-04', until: '2027-01-10' },
        hours_today: { date: '2027-01-05', hours: 'Closed', kind: 'temporarily_closed', holiday: null },
      });
      // After the closure it is no longer shown.
      const after = await pageAt(Date.parse('2027-01-11T12:00:00-05:00'), 'NY-PAGE');
      expect(after.body).toMatchObject({ open: true, next_change: '2027-01-11T18:00:00-05:00', temporarily_closed: null });
    });

    it('lets a cache keep the page no longer than until open changes', async () => {
      const closing = await pageAt(Date.parse('2026-12-18T19:59:30-05:00'), 'NY-PAGE');
      expect(closing.status).toBe(200);
      expect(closing.body).toMatchObject({ open: true, next_change: '2026-12-18T20:00:00-05:00' });
      expect(closing.headers['cache-control']).toBe('private, max-age=30, must-revalidate');
      const closed = await pageAt(Date.parse('2026-12-18T20:00:00-05:00'), 'NY-PAGE');
      expect(closed.body).toMatchObject({ open: false, next_change: '2026-12-19T10:00:00-05:00' });
      // The JSON-LD has no `open`: it keeps until the store's midnight, within the cap.
      const ld = await pageAt(Date.parse('2026-12-18T23:59:40-05:00'), 'NY-PAGE', 'application/ld+json');
      expect(ld.headers['cache-control']).toBe('private, max-age=20, must-revalidate');
    });
  });

  describe('as JSON-LD', () => {
    it("is schema.org's GardenStore with the week, the special days and the closure", async () => {
      const res = await pageAt(FRIDAY_NOON, 'NY-PAGE', 'application/ld+json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/ld+json; charset=utf-8');
      expect(res.headers.vary).toBe('Accept');
      const document = jsonLd(res);
      expect(schemaOrgProblems(document)).toEqual([]);
      expect(document['@id']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/locations\/NY-PAGE$/);
      expect(document).toEqual({
        '@context': 'https://schema.org',
        '@type': 'GardenStore',
        '@id': document['@id'],
        name: 'Fern & Fig Chelsea',
        branchCode: 'NY-PAGE',
        address: {
          '@type': 'PostalAddress',
          streetAddress: '1083 Cedar Lane',
          addressLocality: 'New York',
          addressRegion: 'NY',
          postalCode: '10001',
          addressCountry: 'US',
        },
        geo: { '@type': 'GeoCoordinates', latitude: 40.755823, longitude: -74.001164 },
        openingHoursSpecification: [
          hours(['Monday', 'Tuesday', 'Wednesday'], '09:00', '18:00'),
          hours(['Thursday', 'Friday'], '09:00', '20:00'),
          hours(['Saturday'], '10:00', '12:00'),
          hours(['Saturday'], '13:00', '17:00'),
          hours(['Sunday'], '00:00', '00:00'),
          hours(['Thursday'], '09:00', '14:00', { validFrom: '2026-12-24', validThrough: '2026-12-24' }),
          hours(['Friday'], '00:00', '00:00', { validFrom: '2026-12-25', validThrough: '2026-12-25' }),
          hours(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], '00:00', '00:00', {
            validFrom: '2027-01-04',
            validThrough: '2027-01-10',
          }),
        ],
      });
    });

    it('answers JSON to */* and no Accept, and 406 to a type it has not', async () => {
      const any = await page('NY-PLAIN', '*/*').expect(200);
      expect(any.headers['content-type']).toBe('application/json; charset=utf-8');
      const preferred = await page('NY-PLAIN', 'text/html, application/ld+json;q=0.9, */*;q=0.1').expect(200);
      expect(preferred.headers['content-type']).toBe('application/ld+json; charset=utf-8');
      const html = await page('NY-PLAIN', 'text/html');
      expect(html.status).toBe(406);
      expect(html.body).toEqual({ error: 406, message: 'a store page is application/json or application/ld+json' });
    });
  });

  describe('ETag and If-None-Match', () => {
    it('answers 304 to its ETag (weak or strong, in a list, or *), and 200 to another', async () => {
      const first = await pageAt(FRIDAY_NOON, 'NY-PAGE');
      const tag = first.headers.etag;
      for (const inm of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
        const res = await withClockAt(FRIDAY_NOON, async () => page('NY-PAGE').set('If-None-Match', inm));
        expect(res.status).toBe(304);
        expect(res.text).toBeFalsy();
        expect(res.headers.etag).toBe(tag);
        expect(res.headers['cache-control']).toBe('private, max-age=60, must-revalidate');
        expect(res.headers.vary).toBe('Accept');
      }
      const other = await withClockAt(FRIDAY_NOON, async () => page('NY-PAGE').set('If-None-Match', '"something-else"'));
      expect(other.status).toBe(200);
      // Each form has its own tag; the same form at the same moment, the same.
      const ld = await pageAt(FRIDAY_NOON, 'NY-PAGE', 'application/ld+json');
      expect(ld.headers.etag).not.toBe(tag);
      expect((await pageAt(FRIDAY_NOON, 'NY-PAGE')).headers.etag).toBe(tag);
      // Time moves `open` on: another tag.
      expect((await pageAt(Date.parse('2026-12-18T21:00:00-05:00'), 'NY-PAGE')).headers.etag).not.toBe(tag);
    });

    it('shows an admin edit at once, under a new ETag', async () => {
      const before = await pageAt(FRIDAY_NOON, 'NY-PLAIN');
      const ldBefore = await pageAt(FRIDAY_NOON, 'NY-PLAIN', 'application/ld+json');
      const body = {
        name: 'Plain Store Renamed',
        address: '2 Test Street',
        city: 'New York',
        state: 'NY',
        zip: '10001',
        lat: '40.752600',
        lng: '-73.997300',
        ...WEEK_OPEN,
      };
      await t.http
        .put('/admin/stores/NY-PLAIN')
        .set(bearer(admin))
        .send({ ...body, sunday: '11:00 AM - 4:00 PM', ...CONTACT })
        .expect(200);
      const stored = await t.dataSource.getRepository(Store).findOneByOrFail({ code: 'NY-PLAIN' });
      expect([stored.name, stored.sunday, stored.phone, stored.website, stored.email]).toEqual([
        'Plain Store Renamed',
        '11:00 AM - 4:00 PM',
        '+12125550142',
        CONTACT.website,
        CONTACT.email,
      ]);

      const after = await withClockAt(FRIDAY_NOON, async () => page('NY-PLAIN').set('If-None-Match', before.headers.etag));
      expect(after.status).toBe(200);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect(after.body).toMatchObject({
        name: 'Plain Store Renamed',
        address: '2 Test Street',
        business_hours: { ...WEEKLY, Sunday: '11:00 AM - 4:00 PM' },
        phone: '+12125550142',
        website: CONTACT.website,
        email: CONTACT.email,
      });
      const ld = await withClockAt(FRIDAY_NOON, async () => page('NY-PLAIN', 'application/ld+json').set('If-None-Match', ldBefore.headers.etag));
      expect(ld.status).toBe(200);
      expect(jsonLd(ld)).toMatchObject({
        name: 'Plain Store Renamed',
        address: { streetAddress: '2 Test Street' },
        telephone: '+12125550142',
        url: CONTACT.website,
        email: CONTACT.email,
      });
      expect(schemaOrgProblems(jsonLd(ld))).toEqual([]);
      expect(jsonLd(ld).openingHoursSpecification).toContainEqual(hours(['Sunday'], '11:00', '16:00'));

      // Deleted through the admin API: gone from its page at once.
      await t.http.delete('/admin/stores/NY-PLAIN').set(bearer(admin)).expect(204);
      await expect(t.dataSource.getRepository(Store).findOneBy({ code: 'NY-PLAIN' })).resolves.toBeNull();
      const gone = await page('NY-PLAIN');
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ error: 404, message: 'store "NY-PLAIN" not found' });
    });
  });

  describe('refusals', () => {
    it('answers 404 for an unknown code and for a code longer than any store can have', async () => {
      const unknown = await page('NOPE-1');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 404, message: 'store "NOPE-1" not found' });
      expect(unknown.headers['cache-control']).toBe('no-store');
      const long = await page('X'.repeat(65));
      expect(long.status).toBe(404);
      expect(long.body).toEqual({ error: 404, message: 'no store has a code longer than 64 characters' });
      // Codes are compared exactly, as the search's index keeps them.
      expect((await page('ny-page')).status).toBe(404);
    });

    it('answers 401 without a token, whatever the code, and 403 to an admin token', async () => {
      const res = await t.http.get('/locations/NOPE-1');
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="plant-store"');
      expect(res.body).toEqual({ error: 401, message: 'missing bearer token' });
      const bad = await t.http.get('/locations/NY-PAGE').set(bearer('pst_not-a-token'));
      expect(bad.status).toBe(401);
      const asAdmin = await t.http.get('/locations/NY-PAGE').set(bearer(admin));
      expect(asAdmin.status).toBe(403);
    });
  });
});
