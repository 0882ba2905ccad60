import { StoreIndex } from '../src/locations/store-index.js';
import { Holiday } from '../src/stores/holiday.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

/**
 * Stores in New York, Hoboken (NJ) and Honolulu with special days and closures, and two holidays:
 * Christmas Day closed everywhere, Christmas Eve 9:00 AM - 4:00 PM in New Jersey only. WEEK_OPEN:
 * Thursday and Friday 9:00 AM - 8:00 PM, Saturday 10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM, Sunday
 * closed. Every expected value is worked out by hand: 2026-12-24 is a Thursday, 12-25 a Friday,
 * 12-26 a Saturday; 2027-01-10 a Sunday, 01-11 a Monday.
 */
const STORES: StoreInput[] = [
  { code: 'NY-EVE', name: 'A New York Short Eve', lat: 40.7506, lng: -73.9973, special: '2026-12-24=9:00 AM - 2:00 PM' },
  { code: 'NY-SHUT', name: 'B New York Renovating', lat: 40.7516, lng: -73.9973, closure: '2026-12-20/2027-01-10' },
  { code: 'NY-PLAIN', name: 'C New York Plain', lat: 40.7526, lng: -73.9973 },
  { code: 'NJ-HOB', name: 'D Hoboken', zip: '07030', city: 'Hoboken', state: 'NJ' },
  { code: 'HNL', name: 'Honolulu', zip: '96813', city: 'Honolulu', state: 'HI', special: '2026-12-24=Closed' },
];

type Located = { name: string; open: boolean; next_change: string | null; hours_today: object };

describe('special days, temporary closures and holidays', () => {
  let t: TestApp;
  let admin: string;
  let team: string;
  const search = (body: object) => t.http.post('/locations/nearest').set(bearer(team)).send(body);
  const at = async (zip: string, openAt: string, extra: object = {}): Promise<Located[]> => {
    const res = await search({ customer_address: { zip }, max_distance: 10, open_at: openAt, ...extra });
    expect(res.status).toBe(200);
    return (res.body as { locations: Located[] }).locations.map(({ name, open, next_change, hours_today }) => ({ name, open, next_change, hours_today }));
  };
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);
  const stored = async (code: string) => {
    const store = await t.dataSource.getRepository(Store).findOneByOrFail({ code });
    return { special_hours: store.special_hours, temporarily_closed: store.temporarily_closed };
  };
  const holidays = () => t.dataSource.getRepository(Holiday).find({ order: { date: 'ASC' } });
  const version = async () =>
    Number((await t.dataSource.query<Array<{ version: number | string }>>('SELECT version FROM store_catalog WHERE id = 1'))[0].version);

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('shop');
    await upload(storesCsv(STORES)).expect(200);
    const christmas = await t.http.put('/admin/holidays/2026-12-25').set(bearer(admin)).send({ name: 'Christmas Day', hours: 'Closed' }).expect(201);
    expect(christmas.body).toEqual({ date: '2026-12-25', name: 'Christmas Day', hours: 'Closed', states: null, updated_at: expect.any(String) as string });
    expect(christmas.headers.location).toBe('/admin/holidays/2026-12-25');
    await t.http
      .put('/admin/holidays/2026-12-24')
      .set(bearer(admin))
      .send({ name: 'Christmas Eve', hours: '9:00 AM - 4:00 PM', states: ['nj'] })
      .expect(201);
  });
  afterAll(() => t.close());

  describe('the search at a moment', () => {
    it('follows the special day, the closure and the holiday of its state, and says what decided the day', async () => {
      await expect(at('10001', '2026-12-24T10:00:00-05:00')).resolves.toEqual([
        {
          name: 'A New York Short Eve',
          open: true,
          next_change: '2026-12-24T14:00:00-05:00',
          hours_today: { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null },
        },
        {
          name: 'B New York Renovating',
          open: false,
          // Closed until Sunday 2027-01-10 inclusive; Monday's hours are 9:00 AM - 6:00 PM.
          next_change: '2027-01-11T09:00:00-05:00',
          hours_today: { date: '2026-12-24', hours: 'Closed', kind: 'temporarily_closed', holiday: null },
        },
        {
          name: 'C New York Plain',
          open: true,
          // Christmas Eve is New Jersey's only: Thursday's hours.
          next_change: '2026-12-24T20:00:00-05:00',
          hours_today: { date: '2026-12-24', hours: '9:00 AM - 8:00 PM', kind: 'weekly', holiday: null },
        },
        {
          name: 'D Hoboken',
          open: true,
          next_change: '2026-12-24T16:00:00-05:00',
          hours_today: { date: '2026-12-24', hours: '9:00 AM - 4:00 PM', kind: 'holiday', holiday: 'Christmas Eve' },
        },
      ]);
    });

    it('passes over a closed holiday to the next opening, and the chain-wide holiday closes every store', async () => {
      const evening = await at('10001', '2026-12-24T21:00:00-05:00');
      expect(evening.find((l) => l.name === 'C New York Plain')).toEqual({
        name: 'C New York Plain',
        open: false,
        // Christmas Day closed: Saturday at 10:00 AM.
        next_change: '2026-12-26T10:00:00-05:00',
        hours_today: { date: '2026-12-24', hours: '9:00 AM - 8:00 PM', kind: 'weekly', holiday: null },
      });
      const christmas = await at('10001', '2026-12-25T12:00:00-05:00');
      expect(christmas.map((l) => [l.name, l.open, l.hours_today])).toEqual([
        ['A New York Short Eve', false, { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day' }],
        ['B New York Renovating', false, { date: '2026-12-25', hours: 'Closed', kind: 'temporarily_closed', holiday: null }],
        ['C New York Plain', false, { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day' }],
        ['D Hoboken', false, { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day' }],
      ]);
      await expect(at('10001', '2026-12-25T12:00:00-05:00', { open_only: true })).resolves.toEqual([]);
      const eve = await at('10001', '2026-12-24T15:00:00-05:00', { open_only: true });
      expect(eve.map((l) => l.name)).toEqual(['C New York Plain', 'D Hoboken']);
    });

    it("reads each store's date in its own zone: Honolulu's special day, then the holiday", async () => {
      await expect(at('96813', '2026-12-24T10:00:00-10:00')).resolves.toEqual([
        {
          name: 'Honolulu',
          open: false,
          next_change: '2026-12-26T10:00:00-10:00',
          hours_today: { date: '2026-12-24', hours: 'Closed', kind: 'special', holiday: null },
        },
      ]);
      // 2026-12-25T08:00Z is already Christmas Day in New York (3:00 AM) and still the 24th in Honolulu (10:00 PM).
      const [honolulu] = await at('96813', '2026-12-25T08:00:00Z');
      expect(honolulu.hours_today).toEqual({ date: '2026-12-24', hours: 'Closed', kind: 'special', holiday: null });
      const [newYork] = await at('10001', '2026-12-25T08:00:00Z');
      expect(newYork.hours_today).toEqual({ date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day' });
    });

    it('leaves a search without open_at exactly as it was: no hours_today', async () => {
      const res = await search({ customer_address: { zip: '10001' }, max_distance: 10 }).expect(200);
      for (const location of res.body.locations as object[])
        expect(Object.keys(location)).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']);
    });
  });

  describe('the admin API of a store', () => {
    const body = { name: 'Admin Store', address: '1 Main St', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN, time_zone: 'America/New_York' };
    const put = (fields: object) =>
      t.http
        .put('/admin/stores/ADM')
        .set(bearer(admin))
        .send({ ...body, ...fields });

    it('takes both fields as JSON, answers them by date, and keeps them when a later PUT leaves them out', async () => {
      const res = await put({
        special_hours: [
          { date: '2026-12-31', hours: '9:00 AM - 12:00 AM' },
          { date: '2026-12-24', hours: 'Closed' },
        ],
        temporarily_closed: { from: '2027-02-01', until: null },
      }).expect(201);
      expect(res.body).toMatchObject({
        special_hours: [
          { date: '2026-12-24', hours: 'Closed' },
          { date: '2026-12-31', hours: '9:00 AM - 12:00 AM' },
        ],
        temporarily_closed: { from: '2027-02-01', until: null },
      });
      await expect(stored('ADM')).resolves.toEqual({ special_hours: '2026-12-24=Closed; 2026-12-31=9:00 AM - 12:00 AM', temporarily_closed: '2027-02-01/..' });
      const before = await version();
      // A client written before the two fields: its PUT changes the name and leaves them.
      await put({ name: 'Admin Store Renamed' }).expect(200);
      await expect(stored('ADM')).resolves.toEqual({ special_hours: '2026-12-24=Closed; 2026-12-31=9:00 AM - 12:00 AM', temporarily_closed: '2027-02-01/..' });
      await expect(version()).resolves.toBe(before + 1);
      const got = await t.http.get('/admin/stores/ADM').set(bearer(admin)).expect(200);
      expect(got.body).toMatchObject({ name: 'Admin Store Renamed', temporarily_closed: { from: '2027-02-01', until: null } });
    });

    it('clears them with [] and null, as JSON Merge Patch does', async () => {
      await put({ special_hours: [], temporarily_closed: null }).expect(200);
      await expect(stored('ADM')).resolves.toEqual({ special_hours: '', temporarily_closed: '' });
      await put({ special_hours: [{ date: '2027-01-01', hours: 'Closed' }] }).expect(200);
      await put({ special_hours: null }).expect(200);
      await expect(stored('ADM')).resolves.toEqual({ special_hours: '', temporarily_closed: '' });
    });

    it.each([
      [
        {
          special_hours: [
            { date: '2026-12-24', hours: 'Closed' },
            { date: '2026-13-01', hours: 'Closed' },
          ],
        },
        'special_hours[1].date "2026-13-01" is not a calendar date from 2000 to 2199',
      ],
      [
        { special_hours: [{ date: '2026-12-24', hours: '9 to 5' }] },
        'special_hours[0].hours "9 to 5" is not a time range like "9:00 AM - 6:00 PM" (or "Closed")',
      ],
      [
        {
          special_hours: [
            { date: '2026-12-24', hours: 'Closed' },
            { date: '2026-12-24', hours: 'Closed' },
          ],
        },
        'special_hours[1].date 2026-12-24 is already at [0]',
      ],
      [{ special_hours: 'Closed' }, 'special_hours must be a list of {"date", "hours"}'],
      [{ temporarily_closed: { from: '2027-02-01', until: '2027-01-31' } }, 'temporarily_closed.until 2027-01-31 is before from (2027-02-01)'],
      [{ temporarily_closed: { from: '2027-02-01' } }, 'temporarily_closed.until is required: a date, or null for until further notice'],
      [{ temporarily_closed: '2027-02-01/..' }, 'temporarily_closed must be null or {"from", "until"}'],
    ])('refuses %j with a 400 naming the field, and changes nothing', async (fields, message) => {
      await put({ special_hours: [{ date: '2026-12-24', hours: 'Closed' }], temporarily_closed: null }).expect(200);
      const before = await version();
      const res = await put(fields).expect(400);
      // The message's parts as data: `special_hours[1].date` and its words.
      const [, field, words] = /^(\S+) (.*)$/.exec(message)!;
      // The codes of the same mistakes on a line of the CSV.
      const code = field.startsWith('special_hours') ? 'bad_special_hours' : 'bad_closure';
      expect(res.body).toEqual({ error: 400, message, problems: [{ field, code, message: words }] });
      await expect(stored('ADM')).resolves.toEqual({ special_hours: '2026-12-24=Closed', temporarily_closed: '' });
      await expect(version()).resolves.toBe(before);
    });
  });

  describe('the CSV', () => {
    it('exports both columns and imports the export back as it is', async () => {
      const exported = await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200);
      const [header, ...rows] = exported.text.trimEnd().split('\n');
      // The contact columns (phone, website, email) and the services follow, empty here.
      expect(header.endsWith(',time_zone,special_hours,temporarily_closed,phone,website,email,services')).toBe(true);
      expect(rows.find((row) => row.startsWith('NY-EVE,'))).toMatch(/,America\/New_York,2026-12-24=9:00 AM - 2:00 PM,,,,,$/);
      expect(rows.find((row) => row.startsWith('NY-SHUT,'))).toMatch(/,America\/New_York,,2026-12-20\/2027-01-10,,,,$/);
      const before = await version();
      const back = await upload(exported.text).expect(200);
      expect(back.body).toMatchObject({ inserted: 0, updated: 0, unchanged: rows.length });
      await expect(version()).resolves.toBe(before);
    });

    it('leaves both fields of every store as they are when the file has not the columns', async () => {
      const res = await upload(storesCsv(STORES.map((store) => ({ ...store, special: undefined, closure: undefined, name: `${store.name}!` })))).expect(200);
      expect(res.body).toMatchObject({ updated: STORES.length });
      await expect(stored('NY-EVE')).resolves.toEqual({ special_hours: '2026-12-24=9:00 AM - 2:00 PM', temporarily_closed: '' });
      await expect(stored('NY-SHUT')).resolves.toEqual({ special_hours: '', temporarily_closed: '2026-12-20/2027-01-10' });
      await upload(storesCsv(STORES)).expect(200);
    });

    it("lists a change of either in the import's preview, and an empty cell clears", async () => {
      const csv = storesCsv([
        { ...STORES[0], special: '2026-12-24=9:00 AM - 1:00 PM; 2026-12-31=Closed' },
        { ...STORES[1], closure: '' },
      ]);
      const preview = await upload(csv, '?dry_run=true').expect(200);
      expect(preview.body.changes).toEqual([
        {
          change: 'update',
          line: 2,
          code: 'NY-EVE',
          name: 'A New York Short Eve',
          fields: [{ field: 'special_hours', old: '2026-12-24=9:00 AM - 2:00 PM', new: '2026-12-24=9:00 AM - 1:00 PM; 2026-12-31=Closed' }],
        },
        {
          change: 'update',
          line: 3,
          code: 'NY-SHUT',
          name: 'B New York Renovating',
          fields: [{ field: 'temporarily_closed', old: '2026-12-20/2027-01-10', new: '' }],
        },
      ]);
      await expect(stored('NY-SHUT')).resolves.toEqual({ special_hours: '', temporarily_closed: '2026-12-20/2027-01-10' });
    });

    it('refuses a bad cell with its line, column and code, and writes nothing', async () => {
      const before = await version();
      const res = await upload(
        storesCsv([
          { ...STORES[0], special: '2026-12-24=Closed; 2026-12-24=Closed' },
          { ...STORES[1], closure: '2027-01-10/2026-12-20' },
        ]),
        '?dry_run=true',
      )
        .set('Prefer', 'handling=lenient')
        .expect(200);
      expect(res.body.problems).toEqual([
        { line: 2, column: 'special_hours', code: 'bad_special_hours', message: 'day 2: 2026-12-24 appears twice' },
        { line: 3, column: 'temporarily_closed', code: 'bad_closure', message: 'until 2026-12-20 is before from (2027-01-10)' },
      ]);
      await upload(storesCsv([{ ...STORES[0], special: '2026-12-24' }])).expect(422);
      await expect(version()).resolves.toBe(before);
      await expect(stored('NY-EVE')).resolves.toEqual({ special_hours: '2026-12-24=9:00 AM - 2:00 PM', temporarily_closed: '' });
    });
  });

  describe('the holiday calendar', () => {
    it('lists the holidays by date', async () => {
      const res = await t.http.get('/admin/holidays').set(bearer(admin)).expect(200);
      expect(res.body).toEqual([
        { date: '2026-12-24', name: 'Christmas Eve', hours: '9:00 AM - 4:00 PM', states: ['NJ'], updated_at: expect.any(String) as string },
        { date: '2026-12-25', name: 'Christmas Day', hours: 'Closed', states: null, updated_at: expect.any(String) as string },
      ]);
    });

    it('replaces a holiday with 200, writes nothing when it is sent as it is, and deletes with 204 then 404', async () => {
      await t.http.put('/admin/holidays/2027-01-01').set(bearer(admin)).send({ name: "New Year's Day", hours: 'Closed' }).expect(201);
      const before = await version();
      await t.http.put('/admin/holidays/2027-01-01').set(bearer(admin)).send({ name: "New Year's Day", hours: 'Closed' }).expect(200);
      await expect(version()).resolves.toBe(before);
      await t.http
        .put('/admin/holidays/2027-01-01')
        .set(bearer(admin))
        .send({ name: "New Year's Day", hours: '12:00 PM - 5:00 PM', states: ['NY', 'CT'] })
        .expect(200);
      await expect(version()).resolves.toBe(before + 1);
      expect((await holidays()).find((h) => h.date === '2027-01-01')).toMatchObject({ hours: '12:00 PM - 5:00 PM', states: 'CT,NY' });
      await t.http.delete('/admin/holidays/2027-01-01').set(bearer(admin)).expect(204);
      await t.http.delete('/admin/holidays/2027-01-01').set(bearer(admin)).expect(404, { error: 404, message: 'no holiday on 2027-01-01' });
      await t.http.get('/admin/holidays/2027-01-01').set(bearer(admin)).expect(404, { error: 404, message: 'no holiday on 2027-01-01' });
      expect((await holidays()).map((h) => h.date)).toEqual(['2026-12-24', '2026-12-25']);
    });

    it.each([
      ['/admin/holidays/2026-02-30', { name: 'x', hours: 'Closed' }, 'date "2026-02-30" is not a calendar date from 2000 to 2199', null, null],
      ['/admin/holidays/tomorrow', { name: 'x', hours: 'Closed' }, 'date "tomorrow" is not a date like 2026-12-24 (YYYY-MM-DD)', null, null],
      ['/admin/holidays/2027-07-04', { name: ' ', hours: 'Closed' }, 'name must not be only white space', 'name', 'empty'],
      [
        '/admin/holidays/2027-07-04',
        { name: 'Independence Day', hours: 'closed' },
        'hours: "closed" is not a time range like "9:00 AM - 6:00 PM" (or "Closed")',
        'hours',
        'bad_hours',
      ],
      [
        '/admin/holidays/2027-07-04',
        { name: 'Independence Day', hours: 'Closed', states: [] },
        'states must name at least one state (leave it out for every store)',
        'states',
        'empty',
      ],
      [
        '/admin/holidays/2027-07-04',
        { name: 'Independence Day', hours: 'Closed', states: ['NY', 'XX'] },
        'states[1] must be a US state or territory code such as NY',
        'states[1]',
        'bad_state',
      ],
      ['/admin/holidays/2027-07-04', { name: 'Independence Day', hours: 'Closed', states: ['NY', 'ny'] }, 'states names a state twice', 'states', 'duplicate'],
      ['/admin/holidays/2027-07-04', { name: 'Independence Day', hours: 'Closed', when: 'always' }, 'unknown field when', 'when', 'unknown_field'],
    ])('PUT %s %j is a 400 naming the field (as data too) and writes nothing', async (path, sent, message, field, code) => {
      const before = await version();
      const res = await t.http.put(path).set(bearer(admin)).send(sent).expect(400);
      // A refused body names its field as data too; a refused date (the path) has only its message.
      if (field === null) expect(res.body).toEqual({ error: 400, message });
      else expect(res.body).toEqual({ error: 400, message, problems: [{ field, code, message: expect.any(String) as string }] });
      await expect(version()).resolves.toBe(before);
      expect((await holidays()).map((h) => h.date)).toEqual(['2026-12-24', '2026-12-25']);
    });

    it('is for admin tokens only', async () => {
      await t.http.get('/admin/holidays').set(bearer(team)).expect(403);
      await t.http.put('/admin/holidays/2027-07-04').set(bearer(team)).send({ name: 'x', hours: 'Closed' }).expect(403);
    });

    it("moves the catalogue's version: an import previewed before a holiday changed is refused with 412", async () => {
      const preview = await upload(storesCsv(STORES), '?dry_run=true').expect(200);
      await t.http.put('/admin/holidays/2027-07-04').set(bearer(admin)).send({ name: 'Independence Day', hours: 'Closed' }).expect(201);
      await upload(storesCsv(STORES)).set('If-Match', preview.headers.etag).expect(412);
      await t.http.delete('/admin/holidays/2027-07-04').set(bearer(admin)).expect(204);
    });

    it('the command line lists, sets and deletes, and the search follows', async () => {
      const set = await runCli(t.database, ['holidays', 'set', '2026-12-31', '--name', "New Year's Eve", '--hours', '9:00 AM - 3:00 PM', '--states', 'ny,nj']);
      expect([set.code, set.stderr]).toEqual([0, 'holiday 2026-12-31 created\n']);
      const list = await runCli(t.database, ['holidays', 'list']);
      expect(list.stdout).toBe(
        "2026-12-24\tChristmas Eve\t9:00 AM - 4:00 PM\tNJ\n2026-12-25\tChristmas Day\tClosed\t-\n2026-12-31\tNew Year's Eve\t9:00 AM - 3:00 PM\tNJ,NY\n",
      );
      // Another process wrote it: this instance takes it at its next poll of the version.
      await t.app.get(StoreIndex).refresh();
      const [plain] = (await at('10001', '2026-12-31T10:00:00-05:00')).filter((l) => l.name === 'C New York Plain');
      expect(plain).toMatchObject({ open: true, next_change: '2026-12-31T15:00:00-05:00', hours_today: { kind: 'holiday', holiday: "New Year's Eve" } });
      const bad = await runCli(t.database, ['holidays', 'set', '2026-12-31', '--name', 'x', '--hours', '9 to 5']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('"9 to 5" is not a time range');
      const gone = await runCli(t.database, ['holidays', 'delete', '2026-12-31']);
      expect([gone.code, gone.stderr]).toEqual([0, 'holiday 2026-12-31 deleted\n']);
      const again = await runCli(t.database, ['holidays', 'delete', '2026-12-31']);
      expect([again.code, again.stderr]).toEqual([1, 'error: no holiday on 2026-12-31\n']);
      expect((await holidays()).map((h) => h.date)).toEqual(['2026-12-24', '2026-12-25']);
    });
  });
});
