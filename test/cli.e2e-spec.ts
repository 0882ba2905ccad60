import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/stores/store.entity.js';
import { ApiToken } from '../src/tokens/api-token.entity.js';
import { runCli } from './support/cli.js';
import { storesCsv } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

describe('command line', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-cli-'));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeAll(async () => {
    // No token cache, so that a revocation by the command line (another process) shows on the next request;
    // with the cache it takes up to TOKEN_CACHE_SECONDS (multi-instance.e2e-spec.ts proves the bound).
    t = await createTestApp({ env: { TOKEN_CACHE_SECONDS: '0' } });
  });
  afterAll(() => t.close());

  describe('tokens', () => {
    it('create prints the token alone on stdout; it works and is stored hashed', async () => {
      const result = await runCli(t.database, ['tokens', 'create', '--team', 'acme', '--name', 'ci robot']);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^pst_[0-9A-Za-z]{49}\n$/);
      const token = result.stdout.trim();
      expect(result.stderr).not.toContain(token);
      const row = await t.dataSource.getRepository(ApiToken).findOneByOrFail({ name: 'ci robot' });
      expect(row).toMatchObject({ team: 'acme', tokenHash: createHash('sha256').update(token).digest('hex'), prefix: token.slice(0, 10), scope: 'write' });
      // Without --expires-in-days: TOKEN_DEFAULT_TTL_DAYS, 90 days by default.
      expect(row.expiresAt!.getTime() - row.createdAt.getTime()).toBeGreaterThan(90 * 86_400_000 - 60_000);
      expect(row.expiresAt!.getTime() - row.createdAt.getTime()).toBeLessThanOrEqual(90 * 86_400_000 + 60_000);
      await t.http.get('/plants').set(bearer(token)).expect(200);
    });

    it('create --expires-in-days sets the expiry', async () => {
      const result = await runCli(t.database, ['tokens', 'create', '--team', 'acme', '--name', 'short', '--expires-in-days', '2']);
      expect(result.code).toBe(0);
      const row = await t.dataSource.getRepository(ApiToken).findOneByOrFail({ name: 'short' });
      expect(row.expiresAt!.getTime() - Date.now()).toBeGreaterThan(2 * 86_400_000 - 60_000);
      expect(row.expiresAt!.getTime() - Date.now()).toBeLessThanOrEqual(2 * 86_400_000);
    });

    it.each([
      [['tokens', 'create', '--team', 'Not A Slug'], 'team must be a lowercase slug'],
      [['tokens', 'create'], "required option '--team <slug>' not specified"],
      [['tokens', 'create', '--team', 'acme', '--expires-in-days', '0'], 'must be a positive whole number'],
      [['tokens', 'revoke', 'abc'], 'must be a positive whole number'],
      [['tokens', 'revoke', '99999'], 'token 99999 not found'],
    ])('fails with a message and exit code 1 for %j', async (args, message) => {
      const before = await t.dataSource.getRepository(ApiToken).count();
      const result = await runCli(t.database, args);
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(message);
      await expect(t.dataSource.getRepository(ApiToken).count()).resolves.toBe(before);
    });

    it('list shows id, team, name, prefix and dates, never the token or its digest', async () => {
      const token = (await runCli(t.database, ['tokens', 'create', '--team', 'listed', '--name', 'to list'])).stdout.trim();
      const all = await runCli(t.database, ['tokens', 'list']);
      const mine = await runCli(t.database, ['tokens', 'list', '--team', 'listed']);
      expect(all.code).toBe(0);
      expect(mine.stdout.trim().split('\n')).toHaveLength(1);
      const [id, team, name, prefix, created, expires, lastUsed, revoked, scope] = mine.stdout.trim().split('\t');
      const row = await t.dataSource.getRepository(ApiToken).findOneByOrFail({ team: 'listed' });
      expect([Number(id), team, name, prefix, expires, lastUsed, revoked, scope]).toEqual([
        row.id,
        'listed',
        'to list',
        token.slice(0, 10),
        row.expiresAt!.toISOString(),
        '-',
        '-',
        'write',
      ]);
      expect(new Date(created).getTime()).toBe(row.createdAt.getTime());
      expect(all.stdout).not.toContain(token.slice(10));
      expect(all.stdout).not.toContain(row.tokenHash);
      expect(all.stdout.trim().split('\n').length).toBe(await t.dataSource.getRepository(ApiToken).count());
    });

    it('revoke stops the token on the next request', async () => {
      const token = (await runCli(t.database, ['tokens', 'create', '--team', 'gone'])).stdout.trim();
      await t.http.get('/plants').set(bearer(token)).expect(200);
      const row = await t.dataSource.getRepository(ApiToken).findOneByOrFail({ team: 'gone' });
      const result = await runCli(t.database, ['tokens', 'revoke', String(row.id)]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`token ${row.id} revoked`);
      const res = await t.http.get('/plants').set(bearer(token));
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 401, message: 'invalid or expired bearer token' });
      expect((await t.dataSource.getRepository(ApiToken).findOneByOrFail({ id: row.id })).revokedAt).not.toBeNull();
      const listed = await runCli(t.database, ['tokens', 'list', '--team', 'gone']);
      expect(listed.stdout.trim().split('\t')[7]).not.toBe('-');
    });
  });

  describe('locations import and export', () => {
    const stores = () => t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } });

    beforeEach(() => t.dataSource.getRepository(Store).clear());

    it('imports a valid file, upserting by code', async () => {
      const first = file(
        'first.csv',
        storesCsv([
          { code: 'S1', name: 'One', lat: 40.75, lng: -73.99 },
          { code: 'S2', name: 'Two, with a comma', zip: '02108', city: 'Boston', state: 'ma' },
        ]),
      );
      const result = await runCli(t.database, ['locations', 'import', first]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('2 rows read, 2 inserted, 0 updated, 0 unchanged');
      const boston = (await stores())[1];
      expect(boston).toMatchObject({ code: 'S2', name: 'Two, with a comma', state: 'MA', zip: '02108', saturday: '10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM' });
      // No coordinates given: the ZIP's point is used.
      expect(boston.lat).toBeCloseTo(42.357, 2);

      const second = file(
        'second.csv',
        storesCsv([
          { code: 'S1', name: 'One', lat: 40.75, lng: -73.99 },
          { code: 'S2', name: 'Two renamed', zip: '02108', city: 'Boston', state: 'MA' },
          { code: 'S3', name: 'Three', zip: '10001', lat: 34.05, lng: -118.24 },
        ]),
      );
      const again = await runCli(t.database, ['locations', 'import', second]);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('warning: line 4, lat: is more than 100 miles from ZIP 10001\n');
      expect(again.stderr).toContain('3 rows read, 1 inserted, 1 updated, 1 unchanged');
      expect((await stores()).map((s) => [s.code, s.name])).toEqual([
        ['S1', 'One'],
        ['S2', 'Two renamed'],
        ['S3', 'Three'],
      ]);
    });

    it('export guards spreadsheet formulas, import takes the guard off: the command line round trip is lossless', async () => {
      const source = file(
        'formulas.csv',
        storesCsv([
          { code: '=F', name: '=HYPERLINK("http://evil.example","click")', zip: '10001' },
          { code: 'Q', name: "'@quoted", zip: '10001', city: '-Dash' },
        ]),
      );
      // A hand-written file means what it says unless a ' is the guard: `'@quoted` is read as `@quoted`.
      expect((await runCli(t.database, ['locations', 'import', source])).code).toBe(0);
      expect((await stores()).map((s) => [s.code, s.name, s.city])).toEqual([
        ['=F', '=HYPERLINK("http://evil.example","click")', 'New York'],
        ['Q', '@quoted', '-Dash'],
      ]);
      const exported = join(dir, 'exported.csv');
      expect((await runCli(t.database, ['locations', 'export', exported])).code).toBe(0);
      const text = readFileSync(exported, 'utf8');
      expect(text).toContain(`'=F,"'=HYPERLINK(""http://evil.example"",""click"")",`);
      expect(text).toContain("Q,'@quoted,");
      expect(text).toContain(",'-Dash,");
      // Every field as before, all but the row's own id and times.
      const fields = async () => (await stores()).map(({ id: _id, createdAt: _c, updatedAt: _u, ...store }) => store);
      const before = await fields();
      await t.dataSource.getRepository(Store).clear();
      const again = await runCli(t.database, ['locations', 'import', exported]);
      expect(again.code).toBe(0);
      await expect(fields()).resolves.toEqual(before);
    });

    it('writes nothing when any row is bad, naming every bad line', async () => {
      await runCli(t.database, ['locations', 'import', file('base.csv', storesCsv([{ code: 'KEEP', name: 'Kept', zip: '10001' }]))]);
      const bad = file(
        'bad.csv',
        storesCsv([
          { code: 'N1', name: 'Fine', zip: '10001' },
          { code: 'N2', name: 'Bad state', zip: '10001', state: 'XX' },
          { code: 'N3', name: '', zip: '00000' },
          { code: 'N4', name: 'Bad hours', zip: '10001', hours: { monday: '6:00 PM - 9:00 AM' } },
          { code: 'N1', name: 'Duplicate code', zip: '10001' },
          { code: 'N6', name: 'Bad lat', zip: '10001', lat: '91', lng: '-73' },
        ]),
      );
      const result = await runCli(t.database, ['locations', 'import', bad]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('line 3, state: "XX" is not a US state or territory code');
      expect(result.stderr).toContain('line 4, name: is empty');
      expect(result.stderr).toContain('line 4, zip: unknown ZIP code 00000');
      expect(result.stderr).toContain('line 5, monday: "6:00 PM - 9:00 AM" closes before it opens');
      expect(result.stderr).toContain('line 6, code: "N1" already appears on line 2');
      expect(result.stderr).toContain('line 7, lat: "91" is not a latitude from -90 to 90');
      expect(result.stderr).not.toContain('line 2,');
      expect((await stores()).map((s) => s.code)).toEqual(['KEEP']);
    });

    it('refuses a file with a wrong header', async () => {
      const result = await runCli(t.database, ['locations', 'import', file('header.csv', 'code,name\nA,B\n')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('line 1: the header must be exactly: code,name,address,city,state,zip,lat,lng,monday');
      await expect(stores()).resolves.toEqual([]);
    });

    it('refuses a missing file', async () => {
      const result = await runCli(t.database, ['locations', 'import', join(dir, 'missing.csv')]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('ENOENT');
    });

    it('export writes the import format; import → export → import changes nothing', async () => {
      const source = storesCsv([
        { code: 'E1', name: 'Quote "Q" Store', lat: 40.75, lng: -73.99, address: '5 Main St, Unit 2' },
        { code: 'E2', name: 'Zip point', zip: '02108', city: 'Boston', state: 'MA', hours: { sunday: '12:00 PM - 12:00 AM' } },
      ]);
      await runCli(t.database, ['locations', 'import', file('round.csv', source)]);
      const before = await stores();
      const out = join(dir, 'export.csv');
      const exported = await runCli(t.database, ['locations', 'export', out]);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toContain('2 stores exported');
      const stdout = await runCli(t.database, ['locations', 'export']);
      expect(stdout.stdout).toBe(readFileSync(out, 'utf8'));
      const reimport = await runCli(t.database, ['locations', 'import', out]);
      expect(reimport.stderr).toContain('2 rows read, 0 inserted, 0 updated, 2 unchanged');
      expect(await stores()).toEqual(before);
    });
  });
});
