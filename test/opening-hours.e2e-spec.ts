import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

/**
 * Stores at the ZIP points of six places in six zones, and four more around New York with hours
 * or a zone of their own. WEEK_OPEN: Wednesday 9:00 AM - 6:00 PM, Saturday two ranges, Sunday closed.
 * Every expected value below is worked out by hand: 2026-11-25 and 2026-07-15 are Wednesdays,
 * 2026-03-08 (clocks spring forward in the US) and 2026-11-01 (they fall back) are Sundays.
 */
const STORES: StoreInput[] = [
  { code: 'NY', name: 'New York', zip: '10001' },
  { code: 'EP', name: 'El Paso', zip: '79901', city: 'El Paso', state: 'TX' },
  { code: 'PHX', name: 'Phoenix', zip: '85004', city: 'Phoenix', state: 'AZ' },
  { code: 'BOI', name: 'Boise', zip: '83702', city: 'Boise', state: 'ID' },
  { code: 'SJU', name: 'San Juan', zip: '00901', city: 'San Juan', state: 'PR' },
  { code: 'HNL', name: 'Honolulu', zip: '96813', city: 'Honolulu', state: 'HI' },
  { code: 'NY-SUN', name: 'New York Sundays', lat: 40.7606, lng: -73.9973, hours: { sunday: '10:00 AM - 6:00 PM' } },
  { code: 'NY-LATE', name: 'New York Late Saturdays', lat: 40.7706, lng: -73.9973, hours: { saturday: '6:00 PM - 12:00 AM' } },
  { code: 'NY-CHI', name: 'New York On Chicago Time', lat: 40.7806, lng: -73.9973, timeZone: 'America/Chicago' },
  {
    code: 'NY-247',
    name: 'New York Always Open',
    lat: 40.7906,
    lng: -73.9973,
    hours: Object.fromEntries(Object.keys(WEEK_OPEN).map((day) => [day, '12:00 AM - 12:00 AM'])),
  },
];

type Opening = { name: string; open: boolean; time_zone: string; next_change: string | null };

describe('opening hours: time zones and the search at a moment', () => {
  let t: TestApp;
  let admin: string;
  let team: string;
  const zones = async () => Object.fromEntries((await t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } })).map((s) => [s.code, s.time_zone]));
  const search = (body: object) => t.http.post('/locations/nearest').set(bearer(team)).send(body);
  /** The stores around `zip` at `openAt`, each as {name, open, time_zone, next_change}. */
  const openings = async (zip: string, openAt: string, extra: object = {}): Promise<Opening[]> => {
    const res = await search({ customer_address: { zip }, max_distance: 5, open_at: openAt, ...extra });
    expect(res.status).toBe(200);
    return (res.body as { locations: Opening[] }).locations.map(({ name, open, time_zone, next_change }) => ({ name, open, time_zone, next_change }));
  };
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('shop');
    await upload(storesCsv(STORES)).expect(200);
  });
  afterAll(() => t.close());

  describe('each store keeps a time zone', () => {
    it('derives it from the coordinates when the file gives none, and keeps the one it gives', async () => {
      await expect(zones()).resolves.toEqual({
        BOI: 'America/Boise',
        EP: 'America/Denver',
        HNL: 'Pacific/Honolulu',
        NY: 'America/New_York',
        'NY-247': 'America/New_York',
        'NY-CHI': 'America/Chicago',
        'NY-LATE': 'America/New_York',
        'NY-SUN': 'America/New_York',
        PHX: 'America/Phoenix',
        SJU: 'America/Puerto_Rico',
      });
    });

    it('refuses a zone the runtime does not know, naming line and column, and writes nothing', async () => {
      const before = await zones();
      const res = await upload(
        storesCsv([
          { code: 'X1', name: 'Good', timeZone: 'America/Denver' },
          { code: 'X2', name: 'Bad', timeZone: 'Mars/Olympus' },
          { code: 'X3', name: 'Lower case', timeZone: 'america/denver' },
        ]),
      ).expect(422);
      expect(res.body).toEqual({
        error: 422,
        message: expect.stringContaining(
          'line 3, time_zone: "Mars/Olympus" is not an IANA time zone name like America/Denver\n  line 4, time_zone: "america/denver" is not an IANA time zone name like America/Denver',
        ) as string,
        problems: [
          { line: 3, column: 'time_zone', code: 'bad_time_zone', message: '"Mars/Olympus" is not an IANA time zone name like America/Denver' },
          { line: 4, column: 'time_zone', code: 'bad_time_zone', message: '"america/denver" is not an IANA time zone name like America/Denver' },
        ],
      });
      await expect(zones()).resolves.toEqual(before);

      const dir = mkdtempSync(join(tmpdir(), 'plant-store-zones-'));
      writeFileSync(join(dir, 'bad.csv'), storesCsv([{ code: 'X2', name: 'Bad', timeZone: 'EST+5' }]));
      const cli = await runCli(t.database, ['locations', 'import', join(dir, 'bad.csv')]);
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain('line 2, time_zone: "EST+5" is not an IANA time zone name like America/Denver');
      await expect(zones()).resolves.toEqual(before);
    });

    it('takes a row as wide as its header: sixteen fields under a header with time_zone', async () => {
      const csv = storesCsv([{ code: 'X1', name: 'One', timeZone: 'America/Denver' }]).replace(/,America\/Denver\n$/, '\n');
      const res = await upload(csv, '?dry_run=true').expect(422);
      expect(res.body.message).toContain('line 2: expected 16 fields, found 15');
    });

    it('the admin API takes a zone, derives one when it is left out or empty, and refuses an unknown one with 400', async () => {
      const body = { name: 'Admin Store', address: '1 Main St', city: 'El Paso', state: 'TX', zip: '79901', ...WEEK_OPEN };
      await t.http
        .put('/admin/stores/ADM')
        .set(bearer(admin))
        .send({ ...body, time_zone: 'Mars/Olympus' })
        .expect(400, {
          error: 400,
          message: 'time_zone: "Mars/Olympus" is not an IANA time zone name like America/Denver',
          problems: [{ field: 'time_zone', code: 'bad_time_zone', message: '"Mars/Olympus" is not an IANA time zone name like America/Denver' }],
        });
      await t.http
        .put('/admin/stores/ADM')
        .set(bearer(admin))
        .send({ ...body, time_zone: 42 })
        .expect(400, {
          error: 400,
          message: 'time_zone must be a string',
          problems: [{ field: 'time_zone', code: 'not_string', message: 'must be a string' }],
        });
      await expect(t.dataSource.getRepository(Store).countBy({ code: 'ADM' })).resolves.toBe(0);

      await expect(t.http.put('/admin/stores/ADM').set(bearer(admin)).send(body).expect(201)).resolves.toMatchObject({
        body: { code: 'ADM', time_zone: 'America/Denver' },
      });
      await expect(
        t.http
          .put('/admin/stores/ADM')
          .set(bearer(admin))
          .send({ ...body, time_zone: 'America/Chicago' })
          .expect(200),
      ).resolves.toMatchObject({ body: { time_zone: 'America/Chicago' } });
      await expect(t.dataSource.getRepository(Store).findOneByOrFail({ code: 'ADM' })).resolves.toMatchObject({ time_zone: 'America/Chicago' });
      await expect(t.http.get('/admin/stores/ADM').set(bearer(admin)).expect(200)).resolves.toMatchObject({ body: { time_zone: 'America/Chicago' } });
      await t.http
        .put('/admin/stores/ADM')
        .set(bearer(admin))
        .send({ ...body, time_zone: '' })
        .expect(200);
      await expect(t.dataSource.getRepository(Store).findOneByOrFail({ code: 'ADM' })).resolves.toMatchObject({ time_zone: 'America/Denver' });
      await t.http.delete('/admin/stores/ADM').set(bearer(admin)).expect(204);
    });

    it('the export carries the zone, and importing it back changes nothing', async () => {
      const exported = (await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200)).text;
      const lines = exported.trim().split('\n');
      expect(lines[0]).toMatch(/,sunday,time_zone,special_hours,temporarily_closed,phone,website,email,services$/);
      expect(lines.find((line) => line.startsWith('EP,'))).toMatch(/,America\/Denver,,,,,,$/);
      expect(lines.find((line) => line.startsWith('NY-CHI,'))).toMatch(/,America\/Chicago,,,,,,$/);
      const check = await upload(exported, '?dry_run=true').expect(200);
      expect(check.body).toMatchObject({ read: STORES.length, inserted: 0, updated: 0, unchanged: STORES.length, changes: [] });
    });

    it('a file without the column re-derives an edited zone, and the dry run lists it as a change', async () => {
      const check = await upload(storesCsv(STORES.map((store) => ({ ...store, timeZone: undefined }))), '?dry_run=true').expect(200);
      expect(check.body).toMatchObject({
        updated: 1,
        changes: [{ change: 'update', code: 'NY-CHI', fields: [{ field: 'time_zone', old: 'America/Chicago', new: 'America/New_York' }] }],
      });
    });
  });

  describe('open_at', () => {
    it('leaves the locations exactly as the interface has them when it is not given (or null, open_only too)', async () => {
      const bodies = [
        { customer_address: { zip: '10001' } },
        { customer_address: { zip: '10001' }, open_at: null },
        { customer_address: { zip: '10001' }, open_only: null },
        { customer_address: { zip: '10001' }, open_at: null, open_only: null },
      ];
      for (const body of bodies) {
        const res = await search(body).expect(200);
        expect(res.body.locations.length).toBeGreaterThan(0);
        for (const location of res.body.locations)
          expect(Object.keys(location)).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']);
      }
    });

    it.each([
      // 17:30 UTC: 12:30 PM in New York, 10:30 AM in El Paso, Phoenix and Boise, 1:30 PM in San Juan, 7:30 AM in Honolulu.
      ['2026-11-25T17:30:00Z', '79901', { name: 'El Paso', open: true, time_zone: 'America/Denver', next_change: '2026-11-25T18:00:00-07:00' }],
      ['2026-11-25T17:30:00Z', '85004', { name: 'Phoenix', open: true, time_zone: 'America/Phoenix', next_change: '2026-11-25T18:00:00-07:00' }],
      ['2026-11-25T17:30:00Z', '83702', { name: 'Boise', open: true, time_zone: 'America/Boise', next_change: '2026-11-25T18:00:00-07:00' }],
      ['2026-11-25T17:30:00Z', '00901', { name: 'San Juan', open: true, time_zone: 'America/Puerto_Rico', next_change: '2026-11-25T18:00:00-04:00' }],
      ['2026-11-25T17:30:00Z', '96813', { name: 'Honolulu', open: false, time_zone: 'Pacific/Honolulu', next_change: '2026-11-25T09:00:00-10:00' }],
      // The same moment of the day in summer: El Paso and Boise keep daylight time (-06:00), Phoenix does not (8:30 AM, closed).
      ['2026-07-15T15:30:00Z', '79901', { name: 'El Paso', open: true, time_zone: 'America/Denver', next_change: '2026-07-15T18:00:00-06:00' }],
      ['2026-07-15T15:30:00Z', '85004', { name: 'Phoenix', open: false, time_zone: 'America/Phoenix', next_change: '2026-07-15T09:00:00-07:00' }],
      ['2026-07-15T15:30:00Z', '83702', { name: 'Boise', open: true, time_zone: 'America/Boise', next_change: '2026-07-15T18:00:00-06:00' }],
      ['2026-07-15T15:30:00Z', '96813', { name: 'Honolulu', open: false, time_zone: 'Pacific/Honolulu', next_change: '2026-07-15T09:00:00-10:00' }],
      // An offset other than UTC names the same instant: 10:30 AM in El Paso is 12:30 PM in New York.
      ['2026-11-25T12:30:00-05:00', '79901', { name: 'El Paso', open: true, time_zone: 'America/Denver', next_change: '2026-11-25T18:00:00-07:00' }],
      // After closing on a Saturday: the next opening is Monday's (Sunday is closed).
      ['2026-11-29T02:00:00Z', '79901', { name: 'El Paso', open: false, time_zone: 'America/Denver', next_change: '2026-11-30T09:00:00-07:00' }],
    ])('at %s near %s', async (openAt, zip, expected) => {
      await expect(openings(zip, openAt)).resolves.toEqual([expected]);
    });

    it('works out each store around New York in its own zone and on the days clocks change', async () => {
      const byName = async (openAt: string) => Object.fromEntries((await openings('10001', openAt)).map(({ name, ...rest }) => [name, rest]));
      // Wednesday 12:30 PM in New York, 11:30 AM in Chicago.
      await expect(byName('2026-11-25T17:30:00Z')).resolves.toEqual({
        'New York': { open: true, time_zone: 'America/New_York', next_change: '2026-11-25T18:00:00-05:00' },
        'New York Sundays': { open: true, time_zone: 'America/New_York', next_change: '2026-11-25T18:00:00-05:00' },
        'New York Late Saturdays': { open: true, time_zone: 'America/New_York', next_change: '2026-11-25T18:00:00-05:00' },
        'New York On Chicago Time': { open: true, time_zone: 'America/Chicago', next_change: '2026-11-25T18:00:00-06:00' },
        'New York Always Open': { open: true, time_zone: 'America/New_York', next_change: null },
      });
      // Sunday 2026-03-08, 1:30 AM EST: the Sunday store opens at 10:00 AM, by then daylight time (-04:00).
      await expect(byName('2026-03-08T06:30:00Z')).resolves.toMatchObject({
        'New York Sundays': { open: false, next_change: '2026-03-08T10:00:00-04:00' },
        'New York': { open: false, next_change: '2026-03-09T09:00:00-04:00' },
      });
      // Saturday 2026-10-31, 11:00 PM EDT: the late store closes at midnight, still daylight time; the clocks go back an hour later.
      await expect(byName('2026-11-01T03:00:00Z')).resolves.toMatchObject({
        'New York Late Saturdays': { open: true, next_change: '2026-11-01T00:00:00-04:00' },
        'New York': { open: false, next_change: '2026-11-02T09:00:00-05:00' },
      });
    });

    it('"now" answers for the moment of the request', async () => {
      const before = Date.now();
      const found = await openings('10001', 'now');
      expect(found).toHaveLength(5);
      const always = found.find((l) => l.name === 'New York Always Open')!;
      expect(always).toEqual({ name: 'New York Always Open', open: true, time_zone: 'America/New_York', next_change: null });
      for (const { open, next_change } of found.filter((l) => l !== always)) {
        expect(typeof open).toBe('boolean');
        expect(next_change).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-0[456]:00$/); // New York or Chicago, winter or summer
        // A change after the request, at most a week (and the daylight-saving hour) later.
        expect(Date.parse(next_change!)).toBeGreaterThan(before);
        expect(Date.parse(next_change!)).toBeLessThanOrEqual(before + 7 * 24 * 3600_000 + 3600_000);
      }
    });
  });

  describe('open_only', () => {
    it('returns only the stores open at that moment, and limit counts open stores', async () => {
      // Wednesday 6:30 PM in New York, 5:30 PM in Chicago: only the store on Chicago time and the always-open one.
      await expect(openings('10001', '2026-11-25T23:30:00Z', { open_only: true })).resolves.toEqual([
        { name: 'New York On Chicago Time', open: true, time_zone: 'America/Chicago', next_change: '2026-11-25T18:00:00-06:00' },
        { name: 'New York Always Open', open: true, time_zone: 'America/New_York', next_change: null },
      ]);
      await expect(openings('10001', '2026-11-25T23:30:00Z', { open_only: true, limit: 1 }).then((l) => l.map((s) => s.name))).resolves.toEqual([
        'New York On Chicago Time',
      ]);
      // Without open_only the closed stores are there, nearest first, and say so.
      await expect(openings('10001', '2026-11-25T23:30:00Z', { open_only: false }).then((l) => l.map((s) => [s.name, s.open]))).resolves.toEqual([
        ['New York', false],
        ['New York Sundays', false],
        ['New York Late Saturdays', false],
        ['New York On Chicago Time', true],
        ['New York Always Open', true],
      ]);
      // Honolulu at 7:30 AM: nothing open within reach is an empty list, not an error.
      await expect(openings('96813', '2026-11-25T17:30:00Z', { open_only: true })).resolves.toEqual([]);
    });
  });

  describe('bad input: 400 naming the field', () => {
    const OPEN_AT = 'open_at must be "now" or an RFC 3339 date-time with an offset from 1970 on, such as 2026-11-25T14:30:00-05:00';
    it.each([
      [{ open_at: '' }, OPEN_AT],
      [{ open_at: 'tomorrow' }, OPEN_AT],
      [{ open_at: 'NOW' }, OPEN_AT],
      [{ open_at: '2026-11-25T14:30:00' }, OPEN_AT],
      [{ open_at: '2026-11-25' }, OPEN_AT],
      [{ open_at: '2026-02-30T10:00:00Z' }, OPEN_AT],
      [{ open_at: '2026-11-25T14:30:00+25:00' }, OPEN_AT],
      [{ open_at: 1764091800000 }, OPEN_AT],
      [{ open_at: ['now'] }, OPEN_AT],
      [{ open_only: true }, 'open_only needs open_at: the moment the stores must be open at'],
      [{ open_only: false }, 'open_only needs open_at: the moment the stores must be open at'],
      [{ open_at: null, open_only: true }, 'open_only needs open_at: the moment the stores must be open at'],
      [{ open_at: 'now', open_only: 'true' }, 'open_only must be true or false'],
      [{ open_at: 'now', open_only: 1 }, 'open_only must be true or false'],
    ])('%j', async (extra, message) => {
      await search({ customer_address: { zip: '10001' }, ...extra }).expect(400, { error: 400, message });
    });
  });
});

describe('the migration that adds time zones', () => {
  it('fills the zone of every existing store from its coordinates, on the way up, and drops it on the way down', async () => {
    const t = await createTestApp({ env: ENV });
    try {
      // Back to the schema before it: the migrations that came after it are undone first.
      const last = async () => (await t.dataSource.query<Array<{ name: string }>>('SELECT name FROM migrations ORDER BY id DESC LIMIT 1'))[0].name;
      while ((await last()) !== 'StoreTimeZone1764400000000') await t.dataSource.undoLastMigration();
      await t.dataSource.undoLastMigration();
      const columns = (await t.dataSource.createQueryRunner().getTable('stores'))!.columns.map((c) => c.name);
      expect(columns).not.toContain('time_zone');
      // Rows as the schema before it held them: El Paso, Honolulu, San Juan, and 2,500 around Boise (more than a page).
      const rows: Array<[string, number, number]> = [
        ['EP', 31.759397, -106.480128],
        ['HNL', 21.316548, -157.845053],
        ['SJU', 18.466594, -66.107982],
        ...Array.from({ length: 2500 }, (_, i): [string, number, number] => [`B${i}`, 43.6 + i / 100_000, -116.2]),
      ];
      const week = Object.values(WEEK_OPEN);
      for (let i = 0; i < rows.length; i += 250) {
        const page = rows.slice(i, i + 250);
        await t.dataSource.query(
          `INSERT INTO stores (code, name, address, city, state, zip, lat, lng, monday, tuesday, wednesday, thursday, friday, saturday, sunday, created_at, updated_at) VALUES ${page.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
          page.flatMap(([code, lat, lng]) => [
            code,
            code,
            '1 Main St',
            'Somewhere',
            'ID',
            '83702',
            lat,
            lng,
            ...week,
            '2026-01-01 00:00:00.000',
            '2026-01-01 00:00:00.000',
          ]),
        );
      }
      await t.dataSource.runMigrations();
      const zones = await t.dataSource.query<Array<{ time_zone: string; n: number | string }>>(
        'SELECT time_zone, COUNT(*) AS n FROM stores GROUP BY time_zone ORDER BY time_zone',
      );
      expect(zones.map(({ time_zone, n }) => [time_zone, Number(n)])).toEqual([
        ['America/Boise', 2500],
        ['America/Denver', 1],
        ['America/Puerto_Rico', 1],
        ['Pacific/Honolulu', 1],
      ]);
      // The column has no default any more: a store written without a zone is refused by the database.
      await expect(
        t.dataSource.query(
          "INSERT INTO stores (code, name, address, city, state, zip, lat, lng, monday, tuesday, wednesday, thursday, friday, saturday, sunday, created_at, updated_at) VALUES ('NOZONE', 'n', 'a', 'c', 'NY', '10001', 40.7, -74, 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', '2026-01-01', '2026-01-01')",
        ),
      ).rejects.toThrow(/time_zone/);
    } finally {
      await t.close();
    }
  });
});
