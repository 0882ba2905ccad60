import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConsoleLogger } from '@nestjs/common';
import pg from 'pg';
import { haversineMiles, type Point } from '../src/shared/great-circle.js';
import { Metrics } from '../src/metrics/metrics.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { withClockAt } from './support/clock.js';
import { FakeGeocoders, type Behaviour, type EngineName } from './support/fake-geocoders.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { startServer } from './support/server.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const TIGER_DB = fileURLToPath(new URL('../scripts/tiger-fixture-db.sh', import.meta.url));
/** The ConfigModule writes what it validated back into process.env: each app states its geocoder in full. */
const ENV = {
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  GEOCODER: 'off',
  GEOCODER_URL: '',
};

/** Every line any logger printed, every level: no address may be among them. */
class LogCapture extends ConsoleLogger {
  readonly lines: string[] = [];
  private keep(message: unknown, rest: unknown[]) {
    this.lines.push(JSON.stringify([message, ...rest]));
  }
  log(message: unknown, ...rest: unknown[]) {
    this.keep(message, rest);
  }
  warn(message: unknown, ...rest: unknown[]) {
    this.keep(message, rest);
  }
  error(message: unknown, ...rest: unknown[]) {
    this.keep(message, rest);
  }
  debug(message: unknown, ...rest: unknown[]) {
    this.keep(message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]) {
    this.keep(message, rest);
  }
}

/** Manhattan stores around ZIP 10001, at known points. */
const NYC: StoreInput[] = [
  { code: 'NY-1', name: 'Herald Square', lat: 40.7496, lng: -73.9877, zip: '10001' },
  { code: 'NY-2', name: 'Empire', lat: 40.7484, lng: -73.9857, zip: '10001' },
  { code: 'NY-3', name: 'Chelsea', lat: 40.7465, lng: -74.0014, zip: '10011' },
  { code: 'NY-4', name: 'Midtown East', lat: 40.7527, lng: -73.9772, zip: '10017' },
  { code: 'NY-5', name: 'Hudson Yards', lat: 40.7538, lng: -74.0005, zip: '10001' },
];
/** The Empire State Building: 350 5th Ave, New York, NY 10001. */
const EMPIRE = { lat: 40.748441, lng: -73.985664 };

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: { Code: string; locations: Array<{ name: string; lat: string; lng: string; distance: number }> } & { error?: number; message?: string };
}

const round2 = (miles: number) => Math.round(miles * 100) / 100;
/** Each location's distance is the haversine distance from `from`, to the cent of a mile. */
function expectDistancesFrom(answer: Answer, from: Point): void {
  expect(answer.body.locations.length).toBeGreaterThan(0);
  for (const location of answer.body.locations) {
    expect(Math.abs(location.distance - round2(haversineMiles(from, { lat: Number(location.lat), lng: Number(location.lng) })))).toBeLessThanOrEqual(0.01);
  }
}

async function appWith(env: Record<string, string>, stores: StoreInput[]): Promise<{ t: TestApp; token: string; admin: string; logs: LogCapture }> {
  const logs = new LogCapture();
  logs.setLogLevels(['fatal', 'error', 'warn', 'log', 'debug', 'verbose']);
  const t = await createTestApp({ env: { ...ENV, ...env }, logger: logs });
  await importStores(t, storesCsv(stores));
  const token = await t.tokenFor('shop');
  const admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
  return { t, token, admin, logs };
}

describe('searches from the customer’s street address: the HTTP engines, each against a local server in its documented format', () => {
  let fake: FakeGeocoders;
  beforeAll(async () => {
    fake = await new FakeGeocoders().start();
  });
  afterAll(() => fake.stop());

  describe.each<EngineName>(['census', 'nominatim', 'pelias'])('GEOCODER=%s', (engine) => {
    let t: TestApp;
    let token: string;
    let admin: string;
    let logs: LogCapture;
    let streets = 0;
    /** A street no other test used: the cache knows nothing of it. */
    const street = (label: string) => `${++streets} ${label} St`;
    const search = async (customer: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Answer> => {
      const res = await t.http
        .post('/locations/nearest')
        .set(bearer(token))
        .send({ customer_address: customer, max_distance: 10, limit: 50, ...extra });
      return { status: res.status, headers: res.headers, body: res.body as Answer['body'] };
    };
    const fromZip = async () => (await search({ zip: '10001' })).body;
    const count = async (name: string, labels: Record<string, string>) => {
      const metric = (await t.app.get(Metrics).registry.getMetricsAsJSON()).find((m) => m.name === name);
      return (metric?.values ?? []).filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value)).reduce((sum, v) => sum + v.value, 0);
    };

    beforeAll(async () => {
      ({ t, token, admin, logs } = await appWith(
        {
          GEOCODER: engine,
          GEOCODER_URL: fake.url,
          GEOCODER_TIMEOUT_MS: '300',
          // More than the failures in a row of the fallback cases below (five cases, each asked by the
          // search and by the position look-up: failures are not cached), which must each reach the engine.
          GEOCODER_BREAKER_FAILURES: '12',
          GEOCODER_BREAKER_SECONDS: '1',
          GEOCODER_USER_AGENT: 'plant-store-tests/1.0 ops@example.test',
        },
        NYC,
      ));
    });
    afterAll(() => t.close());
    beforeEach(() => fake.reset());

    it('measures from the engine’s street-level match, sends the address in the engine’s parameters, and says Customer-Position: address', async () => {
      const at = street('Fifth Avenue');
      fake.behaviours.set(at, { kind: 'match', ...EMPIRE, zip: '10001', state: 'NY' });
      const answer = await search({ address: at, city: 'New York', state: 'ny', zip: '10001-1234' });
      expect(answer.status).toBe(200);
      expect(answer.headers['customer-position']).toBe('address');
      expectDistancesFrom(answer, EMPIRE);
      expect(answer.body).not.toEqual(await fromZip());
      expect(fake.calls[engine]).toBe(1);
      const sent = Object.fromEntries(fake.queries[0]);
      const [streetKey, cityKey, stateKey, zipKey] = {
        census: ['street', 'city', 'state', 'zip'],
        nominatim: ['street', 'city', 'state', 'postalcode'],
        pelias: ['address', 'locality', 'region', 'postalcode'],
      }[engine];
      expect([sent[streetKey], sent[cityKey], sent[stateKey], sent[zipKey]]).toEqual([at, 'New York', 'NY', '10001']);
      expect(fake.userAgents).toEqual(['plant-store-tests/1.0 ops@example.test']);
      const position = await t.http
        .post('/admin/locations/position')
        .set(bearer(admin))
        .send({ customer_address: { address: at, city: 'New York', state: 'NY', zip: '10001' } })
        .expect(200);
      expect(position.body).toEqual({ source: 'address', ...EMPIRE, zip: { zip: '10001', lat: expect.any(Number), lng: expect.any(Number) }, fallback: null });
    });

    const FALLBACKS: Array<[string, Behaviour, string]> = [
      ['no match', { kind: 'none' }, 'no_match'],
      ['only a coarser match (a street or a town)', { kind: 'coarse', ...EMPIRE }, 'no_match'],
      ['a match 2,400 miles away', { kind: 'match', lat: 34.052235, lng: -118.243683, zip: '90012', state: 'CA' }, 'implausible'],
      ['a match nearby but in another state', { kind: 'match', lat: 40.7357, lng: -74.0326, zip: '07030', state: 'NJ' }, 'implausible'],
      ['429', { kind: 'status', status: 429 }, 'rate_limited'],
      ['500', { kind: 'status', status: 500 }, 'error'],
      ['no answer within GEOCODER_TIMEOUT_MS', { kind: 'delay', ms: 2000 }, 'timeout'],
      ['a body of the wrong shape', { kind: 'malformed' }, 'malformed'],
      ['an HTML error page', { kind: 'not-json' }, 'malformed'],
    ];

    it.each(FALLBACKS)(
      'falls back to the ZIP code’s point on %s: 200, the ZIP search’s answer exactly, Customer-Position: zip',
      async (_label, behaviour, reason) => {
        const zipOnly = await fromZip();
        // The Census geocoder has no coarser answer than an address: its "no match" is the same case.
        const at = street('Fallback');
        fake.behaviours.set(at, behaviour);
        const before = await count('plant_store_geocoder_fallbacks_total', { reason });
        const answer = await search({ address: at, city: 'New York', state: 'NY', zip: '10001' });
        expect(answer.status).toBe(200);
        expect(answer.headers['customer-position']).toBe('zip');
        expect(answer.body).toEqual(zipOnly);
        expect(await count('plant_store_geocoder_fallbacks_total', { reason })).toBe(before + 1);
        const position = await t.http
          .post('/admin/locations/position')
          .set(bearer(admin))
          .send({ customer_address: { address: at, city: 'New York', state: 'NY', zip: '10001' } })
          .expect(200);
        expect(position.body.fallback).toBe(reason);
      },
    );

    it('asks the engine once for an address searched again (a digest-keyed cache), and once for concurrent searches of it', async () => {
      const at = street('Cached');
      fake.behaviours.set(at, { kind: 'match', ...EMPIRE, zip: '10001', state: 'NY' });
      const looked = async () => ({
        hit: await count('plant_store_geocoder_cache_lookups_total', { result: 'hit' }),
        miss: await count('plant_store_geocoder_cache_lookups_total', { result: 'miss' }),
      });
      const before = await looked();
      const answers = await Promise.all(Array.from({ length: 5 }, () => search({ address: at, zip: '10001' })));
      expect(fake.calls[engine]).toBe(1);
      await search({ address: `  ${at.toUpperCase()} `, zip: '10001' });
      expect(fake.calls[engine]).toBe(1);
      expect(answers.every((a) => a.status === 200 && a.headers['customer-position'] === 'address')).toBe(true);
      // Six look-ups; the concurrent ones that missed the cache waited for the one request in flight.
      const after = await looked();
      expect(after.hit - before.hit + (after.miss - before.miss)).toBe(6);
      expect(after.hit - before.hit).toBeGreaterThanOrEqual(1);
      expect((await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body.geocoder).toEqual({
        engine,
        breaker: 'closed',
        cached: expect.any(Number),
      });

      // Five searches at once for an address the engine takes 150 ms over: one request to it.
      const slow = street('Slow');
      fake.behaviours.set(slow, { kind: 'delay', ms: 150 });
      const calls = fake.calls[engine];
      const slowAnswers = await Promise.all(Array.from({ length: 5 }, () => search({ address: slow, zip: '10001' })));
      expect(slowAnswers.map((a) => a.headers['customer-position'])).toEqual(Array(5).fill('zip'));
      expect(fake.calls[engine] - calls).toBe(1);
    });

    it('takes the device’s lat and lng before any address, without asking the engine', async () => {
      const at = street('Device');
      fake.behaviours.set(at, { kind: 'match', ...EMPIRE, zip: '10001', state: 'NY' });
      const device = { lat: 40.7527, lng: -73.9772 };
      const answer = await search({ address: at, zip: '10001', ...device });
      expect(answer.headers['customer-position']).toBe('device');
      expectDistancesFrom(answer, device);
      expect(fake.calls[engine]).toBe(0);
    });

    it('refuses bad coordinates with a 400 naming the field, and never a 5xx for odd addresses', async () => {
      const refused: Array<[Record<string, unknown>, string]> = [
        [{ lat: 40.75 }, 'customer_address.lat and lng must be given together'],
        [{ lng: -73.99 }, 'customer_address.lng and lat must be given together'],
        [{ lat: 95, lng: -73.99 }, 'customer_address.lat must be a number of degrees within the US and its territories (-15 to 72)'],
        [{ lat: 48.85, lng: 2.35 }, 'customer_address.lng must be a number of degrees within the US and its territories (-180 to -64, or 144 to 180)'],
        [{ lat: '40.75', lng: -73.99 }, 'customer_address.lat must be a number of degrees within the US and its territories (-15 to 72)'],
        [{ lat: null, lng: -73.99 }, 'customer_address.lng and lat must be given together'],
        [{ address: 'x'.repeat(10_000) }, 'customer_address.address must be at most 200 characters'],
      ];
      for (const [fields, message] of refused) {
        const answer = await search({ zip: '10001', ...fields });
        expect({ fields: Object.keys(fields), status: answer.status, body: answer.body }).toEqual({
          fields: Object.keys(fields),
          status: 400,
          body: { error: 400, message },
        });
      }
      // Guam and the western Aleutians are in range; an unknown ZIP code stays a 400 whatever else is given.
      expect((await search({ zip: '96910', lat: 13.4443, lng: 144.7937 })).status).toBe(200);
      expect((await search({ zip: '00000', lat: 40.75, lng: -73.99 })).body).toEqual({ error: 400, message: 'unknown ZIP code 00000' });
      const odd = [
        '350 5th Ave\u0000\u001b[31m',
        '\u202e1 Main St',
        '   ',
        '1 Main St\n\r\t',
        '💐 1 Flower Rd',
        "1 O'Brien St; DROP TABLE stores",
        '%00%0a',
        '\\u0000',
      ];
      const statuses = await Promise.all(odd.map((address) => search({ address, zip: '10001' }).then((a) => a.status)));
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200)).toBe(true);
      // The engine got no control character.
      for (const query of fake.queries) expect(Object.values(Object.fromEntries(query)).join('')).not.toMatch(/[\p{Cc}\u202e]/u);
    });

    it('never puts an address into a log line, a metric or an error, whatever the engine answers', async () => {
      const secret = street('Confidential Customer Lane 7f3a');
      for (const behaviour of [
        { kind: 'status', status: 500 },
        { kind: 'malformed' },
        { kind: 'match', ...EMPIRE, zip: '10001', state: 'NY' },
      ] as Behaviour[]) {
        fake.reset();
        const at = `${secret} ${behaviour.kind}`;
        fake.behaviours.set(at, behaviour);
        expect((await search({ address: at, city: 'Secretville', zip: '10001' })).status).toBe(200);
      }
      expect((await search({ address: secret, lat: 1 })).status).toBe(400);
      const metrics = await t.app.get(Metrics).registry.metrics();
      for (const text of [logs.lines.join('\n'), metrics]) {
        expect(text).not.toContain('Confidential');
        expect(text).not.toContain('Secretville');
      }
    });

    it('skips a failing engine after GEOCODER_BREAKER_FAILURES failures in a row, then tries it again after GEOCODER_BREAKER_SECONDS', async () => {
      fake.down = true;
      for (let i = 0; i < 12; i++) expect((await search({ address: street('Down'), zip: '10001' })).headers['customer-position']).toBe('zip');
      expect(fake.calls[engine]).toBe(12);
      const skipped = await Promise.all(Array.from({ length: 20 }, () => search({ address: street('Skipped'), zip: '10001' })));
      expect(skipped.filter((a) => a.status !== 200 || a.headers['customer-position'] !== 'zip')).toEqual([]);
      expect(fake.calls[engine]).toBe(12);
      expect((await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body.geocoder.breaker).toBe('open');
      expect(await count('plant_store_geocoder_breaker_open', { engine })).toBe(1);
      expect(await count('plant_store_geocoder_fallbacks_total', { reason: 'breaker_open' })).toBeGreaterThanOrEqual(20);

      // The engine is back; after the pause one request tries it, and it is used again.
      fake.down = false;
      const back = street('Back');
      fake.behaviours.set(back, { kind: 'match', ...EMPIRE, zip: '10001', state: 'NY' });
      // The pause (1 s here) passes on the clock the app reads, set by the test instead of waited for.
      const answer = await withClockAt(Date.now() + 1100, () => search({ address: back, zip: '10001' }));
      expect(answer.headers['customer-position']).toBe('address');
      expect(fake.calls[engine]).toBe(13);
      expect((await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body.geocoder.breaker).toBe('closed');
      expect(await count('plant_store_geocoder_breaker_open', { engine })).toBe(0);
    });
  });
});

describe('GEOCODER=off (the default)', () => {
  it('measures from the ZIP code’s point with or without a street address, and says so', async () => {
    const { t, token } = await appWith({}, NYC);
    try {
      const zip = await t.http
        .post('/locations/nearest')
        .set(bearer(token))
        .send({ customer_address: { zip: '10001' } })
        .expect(200);
      const withAddress = await t.http
        .post('/locations/nearest')
        .set(bearer(token))
        .send({ customer_address: { address: '350 5th Ave', city: 'New York', state: 'NY', zip: '10001' } })
        .expect(200);
      expect(zip.headers['customer-position']).toBe('zip');
      expect(withAddress.headers['customer-position']).toBe('zip');
      expect(withAddress.body).toEqual(zip.body);
    } finally {
      await t.close();
    }
  });
});

/** The fixture's Springfield streets (scripts/tiger-fixture.sql): Main St runs east from 39.8103, -89.6394. */
const SPRINGFIELD: StoreInput[] = [
  { code: 'IL-1', name: 'Capitol', lat: 39.7983, lng: -89.6544, zip: '62701', city: 'Springfield', state: 'IL' },
  { code: 'IL-2', name: 'Main Street', lat: 39.8112, lng: -89.6371, zip: '62701', city: 'Springfield', state: 'IL' },
  { code: 'IL-3', name: 'East Side', lat: 39.8051, lng: -89.6102, zip: '62703', city: 'Springfield', state: 'IL' },
  { code: 'IL-4', name: 'Lincoln Park', lat: 39.8301, lng: -89.6422, zip: '62702', city: 'Springfield', state: 'IL' },
];

describe('GEOCODER=postgis: PostGIS’s TIGER geocoder on a real PostgreSQL, on the synthetic fixture', () => {
  let url: string;
  let t: TestApp;
  let token: string;
  let client: pg.Client;

  beforeAll(async () => {
    url = execFileSync(TIGER_DB, ['create'], { encoding: 'utf8' }).trim();
    ({ t, token } = await appWith({ GEOCODER: 'postgis', GEOCODER_URL: url, GEOCODER_TIMEOUT_MS: '3000' }, SPRINGFIELD));
    client = new pg.Client({ connectionString: url, options: '-c search_path=public,tiger' });
    await client.connect();
  }, 60_000);
  afterAll(async () => {
    await client?.end();
    await t?.close();
    if (url) execFileSync(TIGER_DB, ['drop', url]);
  });

  /** The point geocode() itself gives for the address, asked directly. */
  const engineAnswer = async (line: string) =>
    (
      await client.query<{ rating: number; lat: number; lng: number }>(
        'SELECT g.rating, ST_Y(g.geomout) AS lat, ST_X(g.geomout) AS lng FROM geocode($1, 1) AS g',
        [line],
      )
    ).rows[0];
  const search = (customer: Record<string, unknown>) =>
    t.http.post('/locations/nearest').set(bearer(token)).send({ customer_address: customer, max_distance: 10 });

  it.each([
    ['120 Main St', 'Springfield', 'IL', '62701'],
    ['301 Main St', 'Springfield', 'IL', '62701'],
    ['240 E Adams St', 'Springfield', 'IL', '62701'],
  ])('measures from the point geocode() gives for %s, to the cent of a mile', async (address, city, state, zip) => {
    const expected = await engineAnswer(`${address}, ${city}, ${state} ${zip}`);
    expect(expected.rating).toBe(0);
    const res = await search({ address, city, state, zip }).expect(200);
    expect(res.headers['customer-position']).toBe('address');
    expectDistancesFrom({ status: res.status, headers: res.headers, body: res.body }, { lat: Number(expected.lat), lng: Number(expected.lng) });
    // Not the ZIP code's point: the street is about a mile from it.
    const zipOnly = await search({ zip }).expect(200);
    expect(res.body).not.toEqual(zipOnly.body);
  });

  it('falls back to the ZIP code’s point for a street the data does not have (geocode() rates its ZIP-only guess 100)', async () => {
    expect((await engineAnswer('120 Zebra Ln, Springfield, IL 62701')).rating).toBeGreaterThan(20);
    const res = await search({ address: '120 Zebra Ln', city: 'Springfield', state: 'IL', zip: '62701' }).expect(200);
    expect(res.headers['customer-position']).toBe('zip');
    expect(res.body).toEqual((await search({ zip: '62701' }).expect(200)).body);
  });

  it('falls back when the database is unreachable, without a 5xx', async () => {
    // A second instance on the same store database, its own process (one Nest app per test process), whose geocoder database is gone.
    const other = await startServer(t.database, { GEOCODER: 'postgis', GEOCODER_URL: 'postgres://postgres@127.0.0.1:9/none', GEOCODER_TIMEOUT_MS: '500' });
    try {
      const answers = await Promise.all(
        ['120 Main St', '121 Main St', '250 Oak Ave'].map((address) =>
          other.http
            .post('/locations/nearest')
            .set(bearer(token))
            .send({ customer_address: { address, zip: '62701' } }),
        ),
      );
      expect(answers.map((res) => [res.status, res.headers['customer-position']])).toEqual(Array(3).fill([200, 'zip']));
    } finally {
      await other.stop();
    }
  });
});
