import { PROBLEM_CODES } from '../src/common/problem-codes.js';
import { Holiday } from '../src/stores/holiday.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

/** A good store, as a PUT's body and as a line of the CSV. */
const BODY: Record<string, unknown> = { name: 'Fern & Fig Chelsea', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN };
const ROW: StoreInput = { code: 'BAD-1', name: 'Fern & Fig Chelsea' };

type Problem = { field?: string; line?: number; column?: string | null; code: string; message: string };

/**
 * One mistake each, as a PUT sends it and as a line of the store CSV has it, with the field and
 * code both doors must name. A PUT names the path within a JSON field (`special_hours[1].date`);
 * the CSV's cell is the field as a whole.
 */
const MISTAKES: Array<[mistake: string, put: Record<string, unknown>, row: Partial<StoreInput>, expected: Array<[field: string, code: string]>]> = [
  [
    'a date twice in the special hours',
    {
      special_hours: [
        { date: '2026-12-24', hours: 'Closed' },
        { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' },
      ],
    },
    { special: '2026-12-24=Closed; 2026-12-24=9:00 AM - 2:00 PM' },
    [['special_hours', 'bad_special_hours']],
  ],
  [
    'special hours that are no time range',
    { special_hours: [{ date: '2026-12-24', hours: '9 to 5' }] },
    { special: '2026-12-24=9 to 5' },
    [['special_hours', 'bad_special_hours']],
  ],
  [
    'a closure ending before it starts',
    { temporarily_closed: { from: '2027-02-01', until: '2027-01-31' } },
    { closure: '2027-02-01/2027-01-31' },
    [['temporarily_closed', 'bad_closure']],
  ],
  ['a bad ZIP code', { zip: '1234' }, { zip: '1234' }, [['zip', 'bad_zip']]],
  ['a bad time zone', { time_zone: 'Mars/Olympus' }, { timeZone: 'Mars/Olympus' }, [['time_zone', 'bad_time_zone']]],
  ['a missing name', { name: undefined }, { name: '' }, [['name', 'empty']]],
  ['a name of spaces', { name: '   ' }, { name: '   ' }, [['name', 'empty']]],
  ['a bad state', { state: 'XX' }, { state: 'XX' }, [['state', 'bad_state']]],
  ['bad hours', { monday: '9 to 5' }, { hours: { monday: '9 to 5' } }, [['monday', 'bad_hours']]],
  ['a latitude out of range', { lat: '91', lng: '-73.99' }, { lat: '91', lng: '-73.99' }, [['lat', 'bad_coordinate']]],
  [
    'two mistakes at once',
    { state: 'XX', time_zone: 'america/denver' },
    { state: 'XX', timeZone: 'america/denver' },
    [
      ['state', 'bad_state'],
      ['time_zone', 'bad_time_zone'],
    ],
  ],
];

describe('admin problems: one vocabulary at every door', () => {
  let t: TestApp;
  let admin: string;
  const put = (body: object) => t.http.put('/admin/stores/BAD-1').set(bearer(admin)).send(body);
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);
  const version = async () =>
    Number((await t.dataSource.query<Array<{ version: number | string }>>('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  /** A problem's field as a whole: `special_hours[1].date` is about `special_hours`. */
  const fieldOf = (path: string) => /^[a-z_]+/.exec(path)![0];

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
  });
  afterAll(() => t.close());

  it.each(MISTAKES)('%s: the same codes through a PUT, a CSV import and its preview, nothing written', async (_, fields, cells, expected) => {
    const before = await version();

    const refused = await put({ ...BODY, ...fields }).expect(400);
    const putProblems = refused.body.problems as Problem[];
    expect(putProblems.map(({ field, code }) => [fieldOf(field!), code])).toEqual(expected);

    const csv = storesCsv([{ ...ROW, ...cells }]);
    const imported = await upload(csv).expect(422);
    const importProblems = imported.body.problems as Problem[];
    expect(importProblems.map(({ line, column, code }) => [line, column, code])).toEqual(expected.map(([field, code]) => [2, field, code]));
    const preview = await upload(csv, '?dry_run=true').set('Prefer', 'handling=lenient').expect(200);
    expect(preview.body.problems).toEqual(importProblems);

    for (const { code } of [...putProblems, ...importProblems]) expect(PROBLEM_CODES).toContain(code);
    await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(0);
    await expect(version()).resolves.toBe(before);
  });

  it('gives one problem for a date written "2026-12-24; x", at each door', async () => {
    const special = await put({ ...BODY, special_hours: [{ date: '2026-12-24; x', hours: 'Closed' }] }).expect(400);
    expect(special.body).toEqual({
      error: 400,
      message: 'special_hours[0].date "2026-12-24; x" is not a date like 2026-12-24 (YYYY-MM-DD)',
      problems: [{ field: 'special_hours[0].date', code: 'bad_special_hours', message: '"2026-12-24; x" is not a date like 2026-12-24 (YYYY-MM-DD)' }],
    });
    const closure = await put({ ...BODY, temporarily_closed: { from: '2026-12-24; x', until: null } }).expect(400);
    expect(closure.body.problems).toEqual([
      { field: 'temporarily_closed.from', code: 'bad_closure', message: '"2026-12-24; x" is not a date like 2026-12-24 (YYYY-MM-DD)' },
    ]);
    // The CSV's cell splits its days on ";" (its own format): one day that is no day, one problem.
    const imported = await upload(storesCsv([{ ...ROW, special: '2026-12-24; x' }])).expect(422);
    expect(imported.body.problems).toEqual([
      { line: 2, column: 'special_hours', code: 'bad_special_hours', message: 'day 1 ("2026-12-24") is not like 2026-12-24=9:00 AM - 2:00 PM' },
    ]);
    // A holiday's name may hold "; ": one problem, the name's.
    const holiday = await t.http.put('/admin/holidays/2027-07-04').set(bearer(admin)).send({ name: 'a; b', hours: '9 to 5; x' }).expect(400);
    expect(holiday.body.problems).toEqual([{ field: 'hours', code: 'bad_hours', message: expect.stringContaining('"9 to 5; x"') as string }]);
    await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(0);
    await expect(t.dataSource.getRepository(Holiday).count()).resolves.toBe(0);
  });

  it('the same mistake in a holiday and in a store: the same codes', async () => {
    const holiday = await t.http
      .put('/admin/holidays/2027-07-04')
      .set(bearer(admin))
      .send({ hours: '6:00 PM - 9:00 AM', states: ['NY', 'XX'] })
      .expect(400);
    expect((holiday.body.problems as Problem[]).map(({ field, code }) => [field, code])).toEqual([
      ['name', 'empty'],
      ['hours', 'bad_hours'],
      ['states[1]', 'bad_state'],
    ]);
    const store = await put({ ...BODY, name: undefined, monday: '6:00 PM - 9:00 AM', state: 'XX' }).expect(400);
    expect((store.body.problems as Problem[]).map(({ field, code }) => [field, code])).toEqual([
      ['name', 'empty'],
      ['state', 'bad_state'],
      ['monday', 'bad_hours'],
    ]);
    await expect(t.dataSource.getRepository(Holiday).count()).resolves.toBe(0);
    await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(0);
  });
});
