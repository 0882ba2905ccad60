import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { STORE_FIELD_NAMES } from '../src/shared/store-fields.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { startServer } from './support/server.js';
import { importStores, storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, listeningPort, sendChunks, type TestApp } from './support/test-app.js';
import { AuditCapture } from './support/audit.js';

const ENV = {
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  STORE_INDEX_REFRESH_MS: '500',
};
const BODY = { name: 'Fern & Fig Chelsea', address: '1083 Cedar Lane', city: 'New York', state: 'ny', zip: '10001', ...WEEK_OPEN };
const many = (count: number, prefix = 'S'): StoreInput[] =>
  Array.from({ length: count }, (_, i) => ({ code: `${prefix}${String(i).padStart(6, '0')}`, name: `Store ${i}` }));

/** Every admin store route, with a body where it takes one. */
const ROUTES: Array<[method: 'get' | 'put' | 'delete' | 'post', path: string, body: object | string | undefined]> = [
  ['get', '/admin/stores', undefined],
  ['get', '/admin/stores.csv', undefined],
  ['get', '/admin/stores/A1', undefined],
  ['put', '/admin/stores/A1', BODY],
  ['delete', '/admin/stores/A1', undefined],
  ['post', '/admin/stores.csv', storesCsv(many(2))],
];

describe('admin API: stores', () => {
  let t: TestApp;
  let admin: string;
  let team: string;
  let audit: AuditCapture;
  const repo = () => t.dataSource.getRepository(Store);
  const version = async () => Number((await t.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  /** The stores table as one digest: "exactly as before" means the same digest. */
  const checksum = async () =>
    createHash('sha256')
      .update(JSON.stringify(await repo().find({ order: { code: 'ASC' } })))
      .digest('hex');
  const search = (zip: string) =>
    t.http
      .post('/locations/nearest')
      .set(bearer(team))
      .send({ customer_address: { zip }, max_distance: 5 })
      .expect(200)
      .then((r) => (r.body as { locations: Array<{ name: string }> }).locations.map((l) => l.name));
  const upload = (csv: string, query = '') => t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);

  beforeAll(async () => {
    audit = new AuditCapture();
    t = await createTestApp({ env: ENV, logger: audit });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('acme');
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await repo().clear();
    audit.entries.splice(0);
  });

  it.each(ROUTES)('%s %s: 401 without a token, 403 for read and write tokens, nothing written', async (method, path, body) => {
    const before = await checksum();
    const send = (token?: string) => {
      const req = t.http[method](path);
      if (token) req.set(bearer(token));
      if (typeof body === 'string') return req.set('Content-Type', 'text/csv').send(body);
      return body ? req.send(body) : req;
    };
    await send().expect(401);
    for (const scope of ['read', 'write'] as const) {
      const { token } = await t.app.get(TokensService).create({ team: 'acme', scope });
      const res = await send(token).expect(403);
      expect(res.body.message).toMatch(/^this token is not an admin token; \w+ stores needs scope admin$/);
    }
    await expect(checksum()).resolves.toBe(before);
  });

  describe('one store', () => {
    it('PUT creates (201, Location), the search answers with it at once; PUT again replaces (200); the same again changes nothing', async () => {
      const v0 = await version();
      const created = await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(BODY).expect(201);
      expect(created.headers.location).toBe('/admin/stores/NY-1');
      expect(created.body).toMatchObject({
        code: 'NY-1',
        name: 'Fern & Fig Chelsea',
        state: 'NY',
        zip: '10001',
        lat: expect.stringMatching(/^40\.\d{6}$/) as string,
        warnings: [],
        warning_details: [],
      });
      await expect(repo().findOneByOrFail({ code: 'NY-1' })).resolves.toMatchObject({ name: 'Fern & Fig Chelsea', state: 'NY', monday: WEEK_OPEN.monday });
      await expect(version()).resolves.toBe(v0 + 1);
      await expect(search('10001')).resolves.toEqual(['Fern & Fig Chelsea']);

      const replaced = await t.http
        .put('/admin/stores/NY-1')
        .set(bearer(admin))
        .send({ ...BODY, name: 'Renamed', lat: '40.750000', lng: '-73.990000' })
        .expect(200);
      expect(replaced.headers.location).toBeUndefined();
      expect(replaced.body).toMatchObject({ name: 'Renamed', lat: '40.750000', lng: '-73.990000' });
      await expect(repo().findOneByOrFail({ code: 'NY-1' })).resolves.toMatchObject({ name: 'Renamed', lat: 40.75, lng: -73.99 });
      await expect(version()).resolves.toBe(v0 + 2);
      await expect(search('10001')).resolves.toEqual(['Renamed']);

      await t.http
        .put('/admin/stores/NY-1')
        .set(bearer(admin))
        .send({ ...BODY, name: 'Renamed', lat: '40.75', lng: '-73.99' })
        .expect(200);
      await expect(version()).resolves.toBe(v0 + 2);
      expect(audit.entries).toEqual([
        { event: 'admin.store.upserted', team: 'ops', tokenId: expect.any(Number), target: { code: 'NY-1', created: true } },
        { event: 'admin.store.upserted', team: 'ops', tokenId: expect.any(Number), target: { code: 'NY-1', created: false } },
        { event: 'admin.store.upserted', team: 'ops', tokenId: expect.any(Number), target: { code: 'NY-1', created: false } },
      ]);
    });

    it('PUT takes coordinates far from the ZIP code and says so, in words and as data', async () => {
      const res = await t.http
        .put('/admin/stores/LA-1')
        .set(bearer(admin))
        .send({ ...BODY, lat: '34.05', lng: '-118.24' })
        .expect(201);
      expect(res.body).toMatchObject({
        lat: '34.050000',
        lng: '-118.240000',
        warnings: ['lat: is more than 100 miles from ZIP 10001'],
        warning_details: [{ field: 'lat', code: 'far_from_zip', message: 'is more than 100 miles from ZIP 10001' }],
      });
      await expect(repo().findOneByOrFail({ code: 'LA-1' })).resolves.toMatchObject({ lat: 34.05, lng: -118.24, zip: '10001' });
    });

    it.each([
      [{ ...BODY, state: 'XX' }, 'state: "XX" is not a US state or territory code', [['state', 'bad_state']]],
      [
        { ...BODY, zip: '1234', monday: '9 to 5' },
        'zip: "1234" is not a ZIP code like 12345 or 12345-6789; monday: ',
        [
          ['zip', 'bad_zip'],
          ['monday', 'bad_hours'],
        ],
      ],
      [{ ...BODY, name: ' ' }, 'name: is empty', [['name', 'empty']]],
      // Valid hours longer than the column: eleven ranges of a minute each (1:00 AM to 11:01 AM).
      [
        { ...BODY, monday: Array.from({ length: 11 }, (_, i) => `${i + 1}:00 AM - ${i + 1}:01 AM`).join(', ') },
        'monday: is longer than 200 characters',
        [['monday', 'too_long']],
      ],
      [{ ...BODY, lat: '91', lng: '0' }, 'lat: "91" is not a latitude from -90 to 90', [['lat', 'bad_coordinate']]],
      [{ ...BODY, name: undefined }, 'name: is empty', [['name', 'empty']]],
      [{ ...BODY, name: null }, 'name: is empty', [['name', 'empty']]],
      [{ ...BODY, name: 5 }, 'name must be a string', [['name', 'not_string']]],
      [{ ...BODY, colour: 'red' }, 'unknown field colour', [['colour', 'unknown_field']]],
    ])('PUT refuses %j with 400 in the words of the import, the problems as data, writing nothing', async (body, message, problems) => {
      const v0 = await version();
      const res = await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(body).expect(400);
      expect(res.body).toEqual({
        error: 400,
        message: expect.stringContaining(message) as string,
        problems: problems.map(([field, code]) => ({ field, code, message: expect.any(String) as string })),
      });
      // Each problem's words are the message's part for its field.
      for (const problem of res.body.problems as Array<{ field: string; message: string }>) expect(res.body.message).toContain(problem.message);
      await expect(repo().count()).resolves.toBe(0);
      await expect(version()).resolves.toBe(v0);
    });

    it('PUT refuses a code that is too long or has white space around it', async () => {
      await expect(
        t.http
          .put(`/admin/stores/${'x'.repeat(65)}`)
          .set(bearer(admin))
          .send(BODY)
          .expect(400),
      ).resolves.toMatchObject({ body: { message: 'code: is longer than 64 characters' } });
      await expect(t.http.put('/admin/stores/%20A1').set(bearer(admin)).send(BODY).expect(400)).resolves.toMatchObject({
        body: { message: 'code: has white space around it' },
      });
      await expect(repo().count()).resolves.toBe(0);
    });

    it('GET shows one store or 404; DELETE removes it from the table and the search (204), then 404', async () => {
      await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(BODY).expect(201);
      await expect(t.http.get('/admin/stores/NY-1').set(bearer(admin)).expect(200)).resolves.toMatchObject({ body: { code: 'NY-1', name: BODY.name } });
      const v0 = await version();
      await t.http.delete('/admin/stores/NY-1').set(bearer(admin)).expect(204);
      await expect(repo().count()).resolves.toBe(0);
      await expect(version()).resolves.toBe(v0 + 1);
      await expect(search('10001')).resolves.toEqual([]);
      await expect(t.http.delete('/admin/stores/NY-1').set(bearer(admin)).expect(404)).resolves.toMatchObject({
        body: { error: 404, message: 'store "NY-1" not found' },
      });
      await t.http.get('/admin/stores/NY-1').set(bearer(admin)).expect(404);
    });

    it('GET /admin/stores pages by code with a Link to the next page', async () => {
      await importStores(t, storesCsv(many(5)));
      const first = await t.http.get('/admin/stores?limit=2').set(bearer(admin)).expect(200);
      expect((first.body as Array<{ code: string }>).map((s) => s.code)).toEqual(['S000000', 'S000001']);
      expect(first.headers.link).toBe('</admin/stores?limit=2&after=S000001>; rel="next"');
      const last = await t.http.get('/admin/stores?limit=2&after=S000003').set(bearer(admin)).expect(200);
      expect((last.body as Array<{ code: string }>).map((s) => s.code)).toEqual(['S000004']);
      expect(last.headers.link).toBeUndefined();
      await t.http.get('/admin/stores?limit=0').set(bearer(admin)).expect(400);
    });
  });

  describe('the whole list', () => {
    it('imports a CSV upload (200 with the summary), dry_run writes nothing, prune deletes the rest', async () => {
      const dry = await upload(storesCsv(many(3)), '?dry_run=true').expect(200);
      expect(dry.body).toMatchObject({
        read: 3,
        inserted: 3,
        updated: 0,
        unchanged: 0,
        pruned: 0,
        dry_run: true,
        warnings: [],
        warning_details: [],
        warning_count: 0,
        catalog_size: 0,
        changes_truncated: false,
        removals_need_confirmation: false,
      });
      expect(dry.body.changes).toHaveLength(3);
      await expect(repo().count()).resolves.toBe(0);
      const real = await upload(storesCsv(many(3))).expect(200);
      expect(real.body).toMatchObject({ read: 3, inserted: 3, dry_run: false });
      await expect(repo().count()).resolves.toBe(3);
      const pruned = await upload(storesCsv(many(1)), '?prune=true&expected_removals=2').expect(200);
      expect(pruned.body).toMatchObject({ read: 1, unchanged: 1, pruned: 2 });
      await expect(repo().find()).resolves.toMatchObject([{ code: 'S000000' }]);
      expect(audit.entries.map((e) => e.event)).toEqual(['admin.stores.import_checked', 'admin.stores.imported', 'admin.stores.imported']);
    });

    it('lists the rows far from their ZIP code in words and as data, the first 50 with a count of all, and imports them', async () => {
      const far = Array.from({ length: 55 }, (_, i) => ({ code: `FAR${i}`, name: `Far ${i}`, zip: '10001', lat: 34.05, lng: -118.24 }));
      const res = await upload(storesCsv([...many(2), ...far])).expect(200);
      expect(res.body).toMatchObject({ read: 57, inserted: 57, warning_count: 55 });
      expect(res.body.warnings).toHaveLength(50);
      expect(res.body.warnings[0]).toBe('line 4, lat: is more than 100 miles from ZIP 10001');
      expect(res.body.warning_details).toHaveLength(50);
      expect(res.body.warning_details[49]).toEqual({ line: 53, column: 'lat', code: 'far_from_zip', message: 'is more than 100 miles from ZIP 10001' });
      await expect(repo().count()).resolves.toBe(57);
      await expect(repo().findOneByOrFail({ code: 'FAR54' })).resolves.toMatchObject({ lat: 34.05, lng: -118.24 });
      expect(audit.entries.at(-1)).toMatchObject({ event: 'admin.stores.imported', target: { inserted: 57, warnings: 55 } });
    });

    it('answers a bad file with 422 listing each bad line and its reason, and writes nothing', async () => {
      await importStores(t, storesCsv(many(2)));
      const before = await checksum();
      const csv = storesCsv([...many(3, 'N'), { code: 'BAD', name: 'bad', state: 'XX' }, { code: 'BAD2', name: 'bad', zip: '1' }]);
      const res = await upload(csv).expect(422);
      expect(res.body).toEqual({
        error: 422,
        message:
          'the file was not imported, 2 problems found:\n  line 5, state: "XX" is not a US state or territory code\n  line 6, zip: "1" is not a ZIP code like 12345 or 12345-6789',
        problems: [
          { line: 5, column: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' },
          { line: 6, column: 'zip', code: 'bad_zip', message: '"1" is not a ZIP code like 12345 or 12345-6789' },
        ],
      });
      await expect(checksum()).resolves.toBe(before);
    });

    it("lists a bad file's problems as data in a dry run with Prefer: handling=lenient (200), the 422 staying as it is", async () => {
      await importStores(t, storesCsv(many(2)));
      const before = await checksum();
      const csv = storesCsv([...many(3, 'N'), { code: 'BAD', name: 'bad', state: 'XX' }, { code: 'BAD2', name: '', zip: '1' }]);
      const dry = await upload(csv, '?dry_run=true').set('Prefer', 'respond-async, HANDLING="lenient"; x=1').expect(200);
      expect(dry.headers['preference-applied']).toBe('handling=lenient');
      expect(dry.headers.etag).toMatch(/^"[0-9]+"$/);
      expect(dry.body).toMatchObject({
        read: 5,
        inserted: 0,
        updated: 0,
        unchanged: 0,
        pruned: 0,
        dry_run: true,
        changes: [],
        catalog_size: 2,
        problem_count: 3,
      });
      expect(dry.body.problems).toEqual([
        { line: 5, column: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' },
        { line: 6, column: 'name', code: 'empty', message: 'is empty' },
        { line: 6, column: 'zip', code: 'bad_zip', message: '"1" is not a ZIP code like 12345 or 12345-6789' },
      ]);
      // The same file without the preference, or applied with it: the 422, its message listing the same problems.
      const refused = await upload(csv, '?dry_run=true').expect(422);
      const lines = dry.body.problems.map((p: { line: number; column: string; message: string }) => `  line ${p.line}, ${p.column}: ${p.message}`);
      expect(refused.body).toEqual({ error: 422, message: `the file was not imported, 3 problems found:\n${lines.join('\n')}`, problems: dry.body.problems });
      const applied = await upload(csv).set('Prefer', 'handling=lenient').expect(422);
      expect(applied.body).toEqual(refused.body);
      expect(applied.headers['preference-applied']).toBeUndefined();
      await upload(csv, '?dry_run=true').set('Prefer', 'handling=strict').expect(422);
      const header = await upload('code,name\nA,b\n', '?dry_run=true').set('Prefer', 'handling=lenient').expect(200);
      expect(header.body).toMatchObject({ read: 0, problem_count: 1, problems: [{ line: 1, column: null, code: 'bad_header' }] });
      // A good file: no problems, the preference applied all the same.
      const good = await upload(storesCsv(many(2)), '?dry_run=true')
        .set('Prefer', 'handling=lenient')
        .expect(200);
      expect(good.body).toMatchObject({ read: 2, unchanged: 2, problems: [], problem_count: 0 });
      await expect(checksum()).resolves.toBe(before);
    });

    it('answers a file of 200 bad rows with its first 50 problems and the count of all, in the 422 and the preview alike', async () => {
      await importStores(t, storesCsv(many(2)));
      const before = await checksum();
      const csv = storesCsv([...many(1, 'N'), ...Array.from({ length: 200 }, (_, i) => ({ code: `BAD${i}`, name: 'bad', state: 'XX' }))]);
      const first50 = Array.from({ length: 50 }, (_, i) => ({
        line: i + 3,
        column: 'state',
        code: 'bad_state',
        message: '"XX" is not a US state or territory code',
      }));
      const refused = await upload(csv).expect(422);
      const lines = first50.map((p) => `  line ${p.line}, state: ${p.message}`);
      expect(refused.body).toEqual({
        error: 422,
        message: `the file was not imported, 200 problems found:\n${lines.join('\n')}\n  … and 150 more`,
        problems: first50,
      });
      const dry = await upload(csv, '?dry_run=true').set('Prefer', 'handling=lenient').expect(200);
      expect(dry.body).toMatchObject({ read: 201, inserted: 0, changes: [], problem_count: 200 });
      expect(dry.body.problems).toEqual(first50);
      await expect(checksum()).resolves.toBe(before);
    });

    it('refuses another content type with 415 and bad flags with 400, writing nothing', async () => {
      const csv = storesCsv(many(2));
      await expect(t.http.post('/admin/stores.csv').set(bearer(admin)).set('Content-Type', 'application/json').send('{}').expect(415)).resolves.toMatchObject({
        body: { error: 415, message: 'the store list must be sent as text/csv' },
      });
      await t.http.post('/admin/stores.csv').set(bearer(admin)).set('Content-Type', 'text/plain').send(csv).expect(415);
      await upload(csv, '?dry_run=yes').expect(400);
      await upload(csv, '?force=true').expect(400);
      await expect(repo().count()).resolves.toBe(0);
    });

    it('exports the list as CSV that imports back unchanged', async () => {
      await importStores(t, storesCsv([...many(3), { code: 'Q,1', name: 'Quoted, "name"', lat: 40.5, lng: -73.9 }]));
      const res = await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const text = res.text;
      expect(text.split('\n')[0]).toBe(STORE_FIELD_NAMES.join(','));
      const before = await checksum();
      const again = await upload(text).expect(200);
      expect(again.body).toMatchObject({ read: 4, inserted: 0, updated: 0, unchanged: 4 });
      await expect(checksum()).resolves.toBe(before);
    });

    it('serves a store coded "export" (or "import") like any other: no code is shadowed by a route', async () => {
      for (const code of ['export', 'import']) {
        await t.http.put(`/admin/stores/${code}`).set(bearer(admin)).send(BODY).expect(201);
        const read = await t.http.get(`/admin/stores/${code}`).set(bearer(admin)).expect(200);
        expect(read.body).toMatchObject({ code, name: BODY.name, state: 'NY' });
        await expect(repo().findOneBy({ code })).resolves.toMatchObject({ code, name: BODY.name });
        await t.http.delete(`/admin/stores/${code}`).set(bearer(admin)).expect(204);
        await expect(repo().findOneBy({ code })).resolves.toBeNull();
        await t.http.get(`/admin/stores/${code}`).set(bearer(admin)).expect(404);
      }
      // …and the export is beside the list, whatever the codes.
      await t.http.put('/admin/stores/export').set(bearer(admin)).send(BODY).expect(201);
      const csv = await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200);
      expect(csv.text.split('\n')[1]).toMatch(/^export,Fern & Fig Chelsea,/);
    });

    it('guards spreadsheet formulas in the export and takes the guard off on import: a lossless round trip', async () => {
      const formulas = {
        '=F': '=HYPERLINK("http://evil.example","click")',
        '+F': "+1'", // a plus, and a quote that is no guard
        '-F': '-2+3',
        '@F': '@SUM(A1)',
        "'F": "'=already quoted",
        "''F": "''@twice",
        OK: "O'Neil's Garden",
      };
      for (const [code, name] of Object.entries(formulas)) {
        await t.http
          .put(`/admin/stores/${encodeURIComponent(code)}`)
          .set(bearer(admin))
          .send({ ...BODY, name, city: name.startsWith('=') ? '=1+1' : BODY.city })
          .expect(201);
      }
      const exported = (await t.http.get('/admin/stores.csv').set(bearer(admin)).expect(200)).text;
      expect(exported).toContain(`'=F,"'=HYPERLINK(""http://evil.example"",""click"")",1083 Cedar Lane,'=1+1,NY,`);
      expect(exported).toContain("'+F,'+1',");
      expect(exported).toContain("'-F,'-2+3,");
      expect(exported).toContain("'@F,'@SUM(A1),");
      expect(exported).toContain("'F,''=already quoted,"); // the code 'F starts no formula: as it is
      expect(exported).toContain("''F,'''@twice,");
      expect(exported).toContain("OK,O'Neil's Garden,");
      // No cell of the file starts a formula (a negative longitude is a number, not one).
      for (const line of exported.trim().split('\n').slice(1)) for (const cell of line.split(',')) expect(cell).not.toMatch(/^"?[=+@\t\r]/);
      // Imported over the same stores: every row reads back equal to what is stored (unchanged).
      const before = await checksum();
      await expect(upload(exported).expect(200)).resolves.toMatchObject({ body: { read: 7, inserted: 0, updated: 0, unchanged: 7 } });
      await expect(checksum()).resolves.toBe(before);
      for (const [code, name] of Object.entries(formulas)) {
        await expect(
          t.http
            .get(`/admin/stores/${encodeURIComponent(code)}`)
            .set(bearer(admin))
            .expect(200),
        ).resolves.toMatchObject({ body: { code, name } });
      }
    });

    it('writes nothing when the upload is cut off mid-stream, and leaves no temporary file', async () => {
      const port = await listeningPort(t.app);
      const csv = storesCsv(many(5000));
      const before = readdirSync(tmpdir()).filter((f) => f.startsWith('plant-store-import-')).length;
      await new Promise<void>((resolve) => {
        const req = httpRequest({
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/admin/stores.csv',
          headers: { ...bearer(admin), 'Content-Type': 'text/csv', 'Content-Length': String(csv.length) },
        });
        req.on('error', () => resolve());
        req.write(csv.slice(0, csv.length / 2), () => setTimeout(() => req.destroy(), 100));
        req.on('close', () => resolve());
      });
      // The server notices the cut on its side; give it the time to clean up, by count of checks.
      for (let i = 0; i < 50 && readdirSync(tmpdir()).filter((f) => f.startsWith('plant-store-import-')).length > before; i++)
        await new Promise((r) => setTimeout(r, 50));
      expect(readdirSync(tmpdir()).filter((f) => f.startsWith('plant-store-import-')).length).toBe(before);
      await expect(repo().count()).resolves.toBe(0);
    });

    it('leaves the table exactly as it was when the only bad row of 100,000 is row 99,999', async () => {
      await importStores(t, storesCsv(many(10, 'KEEP')));
      const before = await checksum();
      const rows = many(100_000);
      rows[99_998] = { ...rows[99_998], state: 'XX' };
      const res = await upload(storesCsv(rows)).expect(422);
      expect(res.body.message).toBe('the file was not imported, 1 problem found:\n  line 100000, state: "XX" is not a US state or territory code');
      await expect(checksum()).resolves.toBe(before);
    }, 120_000);
  });
});

describe('admin API: store limits and replicas', () => {
  it('refuses a file over STORE_IMPORT_MAX_BYTES with 413, by its Content-Length or while it streams, writing nothing', async () => {
    const t = await createTestApp({ env: { ...ENV, STORE_IMPORT_MAX_BYTES: '4096' } });
    try {
      const admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
      const csv = storesCsv(many(100));
      expect(csv.length).toBeGreaterThan(4096);
      const res = await t.http.post('/admin/stores.csv').set(bearer(admin)).set('Content-Type', 'text/csv').send(csv).expect(413);
      expect(res.body).toEqual({ error: 413, message: 'the file exceeds the limit of 4096 bytes (STORE_IMPORT_MAX_BYTES)' });
      // Chunked, without Content-Length: the limit is met while the upload streams.
      const chunks = Array.from({ length: Math.ceil(csv.length / 1000) }, (_, k) => csv.slice(k * 1000, (k + 1) * 1000));
      const chunked = await sendChunks(t.app, { method: 'POST', path: '/admin/stores.csv', headers: { ...bearer(admin), 'Content-Type': 'text/csv' }, chunks });
      expect(chunked).toEqual({
        status: 413,
        body: JSON.stringify({ error: 413, message: 'the file exceeds the limit of 4096 bytes (STORE_IMPORT_MAX_BYTES)' }),
      });
      await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(0);
      // The JSON limit of the other routes is unchanged.
      await t.http
        .put('/admin/stores/A1')
        .set(bearer(admin))
        .send({ ...BODY, name: 'x'.repeat(20_000) })
        .expect(413);
    } finally {
      await t.close();
    }
  });

  it('a store upserted through one instance is found by a search through another within STORE_INDEX_REFRESH_MS', async () => {
    const a = await createTestApp({ env: ENV });
    // The other instance is a process of its own, as in production (test/support/server.ts).
    const b = await startServer(a.database, ENV);
    try {
      const admin = (await a.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
      const team = await a.tokenFor('acme');
      const names = async () =>
        (
          (
            await b.http
              .post('/locations/nearest')
              .set(bearer(team))
              .send({ customer_address: { zip: '10001' }, max_distance: 5 })
              .expect(200)
          ).body as { locations: Array<{ name: string }> }
        ).locations.map((l) => l.name);
      await expect(names()).resolves.toEqual([]);
      await a.http.put('/admin/stores/NY-1').set(bearer(admin)).send(BODY).expect(201);
      // Polled every 100 ms; the bound is the refresh interval (500 ms here) plus the reload: 30 tries.
      let tries = 0;
      while ((await names()).length === 0) {
        tries++;
        expect(tries).toBeLessThan(30);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await expect(names()).resolves.toEqual([BODY.name]);
    } finally {
      await b.stop();
      await a.close();
    }
  });
});
