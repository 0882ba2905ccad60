import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { storesCsv, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };

const STORE = {
  name: 'Fern & Fig Chelsea',
  address: '1083 Cedar Lane',
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat: '40.750650',
  lng: '-73.990000',
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: '9:00 AM - 6:00 PM',
  thursday: '9:00 AM - 6:00 PM',
  friday: '9:00 AM - 6:00 PM',
  saturday: '10:00 AM - 4:00 PM',
  sunday: 'Closed',
};

type Contact = { phone: string; website: string; email: string };

describe("a store's phone, website and email", () => {
  let t: TestApp;
  let admin: string;
  const put = (code: string, body: object) => t.http.put(`/admin/stores/${code}`).set(bearer(admin)).send(body);
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);
  const exported = async () => (await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200)).text;
  /** The row as the table holds it. */
  const stored = async (code: string): Promise<Contact> => {
    const { phone, website, email } = await t.dataSource.getRepository(Store).findOneByOrFail({ code });
    return { phone, website, email };
  };
  const version = async () =>
    Number((await t.dataSource.query<Array<{ version: number | string }>>('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  const loggedChange = async (v: number) =>
    (await t.dataSource.query<Array<{ stores: string | null }>>('SELECT stores FROM store_changes WHERE version = ?', [v]))[0]?.stores;

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.dataSource.getRepository(Store).clear();
  });

  describe('through the admin API', () => {
    it.each(['(913) 555-0142', '913-555-0142', '913.555.0142', '9135550142', '+1 913 555 0142', '1-913-555-0142', ' +19135550142 '])(
      'takes the phone %p and keeps it as +19135550142',
      async (phone) => {
        const res = await put('KS-1', { ...STORE, phone });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ code: 'KS-1', phone: '+19135550142', website: null, email: null });
        await expect(stored('KS-1')).resolves.toEqual({ phone: '+19135550142', website: '', email: '' });
        const again = await t.http.get('/admin/stores/KS-1').set(bearer(admin));
        expect(again.status).toBe(200);
        expect(again.body).toMatchObject({ phone: '+19135550142' });
      },
    );

    it('keeps the website and email as given, trimmed, and answers them', async () => {
      const res = await put('NY-1', { ...STORE, website: ' HTTPS://Fern.example/Chelsea?x=1 ', email: ' Chelsea.Store@Fern.example ' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ website: 'HTTPS://Fern.example/Chelsea?x=1', email: 'Chelsea.Store@Fern.example', phone: null });
      await expect(stored('NY-1')).resolves.toEqual({ phone: '', website: 'HTTPS://Fern.example/Chelsea?x=1', email: 'Chelsea.Store@Fern.example' });
      // A host in any script, byte for byte (the columns are utf8mb4 on MySQL whatever the server's default).
      await put('NY-1', { ...STORE, website: 'https://植物.example/' }).expect(200);
      await expect(stored('NY-1')).resolves.toEqual({ phone: '', website: 'https://植物.example/', email: 'Chelsea.Store@Fern.example' });
    });

    it.each([
      ['phone', '1-800-FLOWERS', 'bad_phone', 'phone: "1-800-FLOWERS" is not a US phone number like (913) 555-0142 or +1 913 555 0142'],
      ['phone', '+44 20 7946 0958', 'bad_phone', 'phone: "+44 20 7946 0958" is not a US phone number like (913) 555-0142 or +1 913 555 0142'],
      ['phone', '913-555-014', 'bad_phone', 'phone: "913-555-014" is not a US phone number like (913) 555-0142 or +1 913 555 0142'],
      ['phone', '(113) 555-0142', 'bad_phone', 'phone: "(113) 555-0142" has no US area code: 113 does not start with 2 to 9'],
      ['phone', '913-155-0142', 'bad_phone', 'phone: "913-155-0142" is not a US phone number: its exchange 155 does not start with 2 to 9'],
      [
        'website',
        'http://fern.example',
        'bad_website',
        'website: "http://fern.example" is not an https address like https://example.com (http and other schemes are refused)',
      ],
      [
        'website',
        'javascript:alert(1)',
        'bad_website',
        'website: "javascript:alert(1)" is not an https address like https://example.com (http and other schemes are refused)',
      ],
      ['website', 'https://', 'bad_website', 'website: "https://" is not a web address: https:// followed by a host name like example.com, then a path if any'],
      ['website', `https://fern.example/${'a'.repeat(181)}`, 'bad_website', 'website: is longer than 200 characters'],
      ['email', 'chelsea@', 'bad_email', 'email: "chelsea@" is not an email address like shop@example.com'],
      ['email', `${'a'.repeat(60)}@${'b'.repeat(190)}.com`, 'bad_email', 'email: is longer than 254 characters'],
    ])('refuses the %s %p with a 400 naming it, and changes nothing', async (field, value, code, message) => {
      await put('KS-1', { ...STORE, phone: '913-555-0142', website: 'https://fern.example', email: 'shop@fern.example' }).expect(201);
      const before = await version();
      const res = await put('KS-1', { ...STORE, [field]: value });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 400, message, problems: [{ field, code, message: message.slice(field.length + 2) }] });
      await expect(stored('KS-1')).resolves.toEqual({ phone: '+19135550142', website: 'https://fern.example', email: 'shop@fern.example' });
      await expect(version()).resolves.toBe(before);
    });

    it('refuses a number where text belongs', async () => {
      const res = await put('KS-1', { ...STORE, phone: 9135550142 });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 400, problems: [{ field: 'phone', code: 'not_string' }] });
      await expect(t.dataSource.getRepository(Store).countBy({ code: 'KS-1' })).resolves.toBe(0);
    });

    it('keeps them when a PUT leaves them out, and clears one sent as null or empty', async () => {
      await put('KS-1', { ...STORE, phone: '913-555-0142', website: 'https://fern.example', email: 'shop@fern.example' }).expect(201);
      const unchanged = await version();
      const same = await put('KS-1', STORE);
      expect(same.status).toBe(200);
      expect(same.body).toMatchObject({ phone: '+19135550142', website: 'https://fern.example', email: 'shop@fern.example' });
      await expect(version()).resolves.toBe(unchanged);

      const cleared = await put('KS-1', { ...STORE, phone: null, website: '' });
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ phone: null, website: null, email: 'shop@fern.example' });
      await expect(stored('KS-1')).resolves.toEqual({ phone: '', website: '', email: 'shop@fern.example' });
    });

    it("writes a change of the phone alone as any store change: a new catalogue version and the change log's row", async () => {
      await put('KS-1', STORE).expect(201);
      const before = await version();
      await put('KS-1', { ...STORE, phone: '913 555 0142' }).expect(200);
      await expect(version()).resolves.toBe(before + 1);
      await expect(loggedChange(before + 1)).resolves.toBe('["KS-1"]');
      // The same number written another way is the same value: nothing to write.
      await put('KS-1', { ...STORE, phone: '(913) 555-0142' }).expect(200);
      await expect(version()).resolves.toBe(before + 1);
    });
  });

  describe('through the CSV', () => {
    const HERE = { lat: 40.75065, lng: -73.99 };
    const STORES: StoreInput[] = [
      { code: 'KS-1', name: 'Overland Park', ...HERE, phone: '(913) 555-0142', website: 'https://fern.example/op', email: 'op@fern.example' },
      // A spreadsheet's formula starts: the export guards them, the import takes the guard off.
      { code: 'KS-2', name: 'Lenexa', ...HERE, phone: '+1 913 555 0143', email: '=cmd@fern.example' },
      { code: 'KS-3', name: 'Olathe', ...HERE },
    ];

    it('imports them (the phone as E.164), exports them last and guarded, and an export imports back unchanged', async () => {
      const first = await upload(storesCsv(STORES));
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ inserted: 3, updated: 0 });
      await expect(stored('KS-1')).resolves.toEqual({ phone: '+19135550142', website: 'https://fern.example/op', email: 'op@fern.example' });
      await expect(stored('KS-2')).resolves.toEqual({ phone: '+19135550143', website: '', email: '=cmd@fern.example' });
      await expect(stored('KS-3')).resolves.toEqual({ phone: '', website: '', email: '' });

      const csv = await exported();
      const lines = csv.trimEnd().split('\n');
      // The services' column follows, empty here.
      expect(lines[0]).toMatch(/,temporarily_closed,phone,website,email,services$/);
      expect(lines[1]).toMatch(/^KS-1,.*,'\+19135550142,https:\/\/fern\.example\/op,op@fern\.example,$/);
      expect(lines[2]).toMatch(/^KS-2,.*,'\+19135550143,,'=cmd@fern\.example,$/);
      expect(lines[3]).toMatch(/^KS-3,.*,,,,$/);

      const before = await version();
      const again = await upload(csv);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ read: 3, inserted: 0, updated: 0, unchanged: 3, changes: [] });
      await expect(version()).resolves.toBe(before);
      await expect(exported()).resolves.toBe(csv);
    });

    it('keeps the stored values for a file without the columns, and clears them for empty cells', async () => {
      await upload(storesCsv(STORES)).expect(200);
      const without = storesCsv(STORES.map(({ code, name }) => ({ code, name, ...HERE })));
      expect(without.split('\n')[0]).toMatch(/,sunday$/);
      const kept = await upload(without);
      expect(kept.status).toBe(200);
      expect(kept.body).toMatchObject({ updated: 0, unchanged: 3, changes: [] });
      await expect(stored('KS-1')).resolves.toEqual({ phone: '+19135550142', website: 'https://fern.example/op', email: 'op@fern.example' });
      await expect(stored('KS-2')).resolves.toEqual({ phone: '+19135550143', website: '', email: '=cmd@fern.example' });

      const emptied = storesCsv(STORES.map(({ code, name }) => ({ code, name, ...HERE, phone: '', website: '', email: '' })));
      expect(emptied.split('\n')[0]).toMatch(/,sunday,phone,website,email$/);
      const cleared = await upload(emptied);
      expect(cleared.status).toBe(200);
      expect(cleared.body).toMatchObject({ updated: 2, unchanged: 1 });
      await expect(stored('KS-1')).resolves.toEqual({ phone: '', website: '', email: '' });
      await expect(stored('KS-2')).resolves.toEqual({ phone: '', website: '', email: '' });
    });

    it("shows a change of them in the preview's list of changes, old and new as stored, and writes nothing", async () => {
      await upload(storesCsv(STORES)).expect(200);
      const before = await version();
      const changed = STORES.map((s) => (s.code === 'KS-1' ? { ...s, phone: '913.555.0199', website: '', email: 'OP@fern.example' } : s));
      const dry = await upload(storesCsv(changed), '?dry_run=true');
      expect(dry.status).toBe(200);
      expect(dry.body).toMatchObject({ dry_run: true, updated: 1, unchanged: 2 });
      expect((dry.body as { changes: unknown[] }).changes).toEqual([
        {
          change: 'update',
          line: 2,
          code: 'KS-1',
          name: 'Overland Park',
          fields: [
            { field: 'phone', old: '+19135550142', new: '+19135550199' },
            { field: 'website', old: 'https://fern.example/op', new: '' },
            { field: 'email', old: 'op@fern.example', new: 'OP@fern.example' },
          ],
        },
      ]);
      await expect(version()).resolves.toBe(before);
      await expect(stored('KS-1')).resolves.toEqual({ phone: '+19135550142', website: 'https://fern.example/op', email: 'op@fern.example' });
    });

    it('refuses a file with a bad value, naming its line, column and code, and writes nothing', async () => {
      await upload(storesCsv(STORES)).expect(200);
      const before = await version();
      const bad = STORES.map((s) =>
        s.code === 'KS-2' ? { ...s, phone: '555-0142' } : s.code === 'KS-3' ? { ...s, website: 'http://fern.example', email: 'olathe@' } : s,
      );
      const res = await upload(storesCsv(bad), '?dry_run=true').set('Prefer', 'handling=lenient');
      expect(res.status).toBe(200);
      expect((res.body as { problems: unknown[] }).problems).toEqual([
        { line: 3, column: 'phone', code: 'bad_phone', message: '"555-0142" is not a US phone number like (913) 555-0142 or +1 913 555 0142' },
        {
          line: 4,
          column: 'website',
          code: 'bad_website',
          message: '"http://fern.example" is not an https address like https://example.com (http and other schemes are refused)',
        },
        { line: 4, column: 'email', code: 'bad_email', message: '"olathe@" is not an email address like shop@example.com' },
      ]);
      const applied = await upload(storesCsv(bad));
      expect(applied.status).toBe(422);
      expect(applied.body).toMatchObject({ error: 422 });
      expect((applied.body as { message: string }).message).toContain('line 3, phone: "555-0142" is not a US phone number');
      await expect(version()).resolves.toBe(before);
      await expect(stored('KS-3')).resolves.toEqual({ phone: '', website: '', email: '' });
    });
  });
});

describe('the migration that adds the contact fields', () => {
  it('gives every stored store empty ones on the way up, and drops them on the way down', async () => {
    const t = await createTestApp({ env: ENV });
    try {
      const columns = async () => (await t.dataSource.createQueryRunner().getTable('stores'))!.columns.map((c) => c.name);
      await t.dataSource.getRepository(Store).clear();
      const last = async () => (await t.dataSource.query<Array<{ name: string }>>('SELECT name FROM migrations ORDER BY id DESC LIMIT 1'))[0].name;
      while ((await last()) !== 'StoreContactFields1764900000000') await t.dataSource.undoLastMigration();
      await t.dataSource.undoLastMigration();
      expect((await columns()).filter((name) => ['phone', 'website', 'email'].includes(name))).toEqual([]);
      // A store as the schema before it holds it, and as the previous version of the service writes it.
      await t.dataSource.query(
        "INSERT INTO stores (code, name, address, city, state, zip, lat, lng, monday, tuesday, wednesday, thursday, friday, saturday, sunday, time_zone, created_at, updated_at) VALUES ('OLD', 'n', 'a', 'c', 'NY', '10001', 40.7, -74, 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', 'Closed', 'America/New_York', '2026-01-01', '2026-01-01')",
      );
      await t.dataSource.runMigrations();
      expect(await columns()).toEqual(expect.arrayContaining(['phone', 'website', 'email']));
      const { phone, website, email } = await t.dataSource.getRepository(Store).findOneByOrFail({ code: 'OLD' });
      expect({ phone, website, email }).toEqual({ phone: '', website: '', email: '' });
      await t.dataSource.getRepository(Store).clear();
    } finally {
      await t.close();
    }
  });
});
