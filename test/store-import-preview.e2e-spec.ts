import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_LISTED_CHANGES } from '../src/stores/store-import-plan.js';
import { StoreImportService } from '../src/stores/store-import.service.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { startServer, type ServerProcess } from './support/server.js';
import { importStores, storesCsv, WEEK_OPEN, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';
import { AuditCapture } from './support/audit.js';

const ENV = {
  TOKEN_CACHE_SECONDS: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  OIDC_ISSUER: '',
  REDIS_URL: '',
  STORE_INDEX_REFRESH_MS: '500',
};
const many = (count: number, prefix = 'S', from = 0): StoreInput[] =>
  Array.from({ length: count }, (_, i) => ({ code: `${prefix}${String(from + i).padStart(6, '0')}`, name: `Store ${from + i}` }));

interface ImportBody {
  read: number;
  inserted: number;
  updated: number;
  unchanged: number;
  pruned: number;
  version: number;
  catalog_size: number;
  changes: Array<{
    change: string;
    line?: number;
    code: string;
    name: string;
    city?: string;
    state?: string;
    fields?: Array<{ field: string; old: string; new: string }>;
  }>;
  changes_truncated: boolean;
  removals_need_confirmation: boolean;
}

/**
 * Preview, then apply: the dry run lists each change and answers the catalogue's version as ETag;
 * an apply with If-Match is refused (412) once the catalogue moved, through another instance or
 * the command line; a prune over STORE_IMPORT_MAX_PRUNE_PERCENT needs the expected number of
 * removals. Two instances on one database (A in the test's process, B a process of its own),
 * every answer checked against the tables.
 */
describe('store import: preview, then apply', () => {
  let a: TestApp;
  /** Instance B: its own process on the same database, as a second container is. */
  let b: ServerProcess;
  let admin: string;
  let audit: AuditCapture;
  let dir: string;
  const repo = () => a.dataSource.getRepository(Store);
  const version = async () => Number((await a.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  /** The stores table and the catalogue version as one digest: "nothing written" means the same digest. */
  const checksum = async () =>
    createHash('sha256')
      .update(JSON.stringify([await repo().find({ order: { code: 'ASC' } }), await version()]))
      .digest('hex');
  const upload = (t: TestApp | ServerProcess, csv: string, query = '', ifMatch?: string) => {
    const req = t.http.post(`/admin/stores.csv${query}`).set(bearer(admin)).set('Content-Type', 'text/csv');
    if (ifMatch !== undefined) req.set('If-Match', ifMatch);
    return req.send(csv);
  };
  const csvFile = (name: string, csv: string) => {
    const file = join(dir, name);
    writeFileSync(file, csv);
    return file;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-preview-'));
    audit = new AuditCapture();
    a = await createTestApp({ env: ENV, logger: audit });
    b = await startServer(a.database, ENV);
    admin = (await a.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
  });
  afterAll(async () => {
    await b?.stop();
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await repo().clear();
    audit.entries.splice(0);
  });

  describe('the dry run lists the changes', () => {
    it('adds, field-level updates and removals in file order (removals last), each matching the database after the apply', async () => {
      await importStores(a, storesCsv([...many(3), { code: 'GONE', name: 'Closing down', city: 'Albany', state: 'NY', zip: '12207' }]));
      const file = storesCsv([
        { code: 'NEW1', name: 'Brand new', city: 'Boston', state: 'MA', zip: '02108' },
        { code: 'S000000', name: 'Store 0' },
        { code: 'S000001', name: 'Store 1, renamed', hours: { sunday: '10:00 AM - 4:00 PM' } },
        { code: 'S000002', name: 'Store 2', lat: 40.7, lng: -74 },
      ]);
      const before = await checksum();
      const v0 = await version();
      const dry = await upload(a, file, '?dry_run=true&prune=true').expect(200);
      expect(dry.headers.etag).toBe(`"${v0}"`);
      const body = dry.body as ImportBody;
      expect(body).toMatchObject({
        read: 4,
        inserted: 1,
        updated: 2,
        unchanged: 1,
        pruned: 1,
        version: v0,
        catalog_size: 4,
        changes_truncated: false,
        removals_need_confirmation: true,
      });
      expect(body.changes).toEqual([
        { change: 'add', line: 2, code: 'NEW1', name: 'Brand new', city: 'Boston', state: 'MA' },
        {
          change: 'update',
          line: 4,
          code: 'S000001',
          name: 'Store 1, renamed',
          fields: [
            { field: 'name', old: 'Store 1', new: 'Store 1, renamed' },
            { field: 'sunday', old: 'Closed', new: '10:00 AM - 4:00 PM' },
          ],
        },
        {
          change: 'update',
          line: 5,
          code: 'S000002',
          name: 'Store 2',
          fields: [expect.objectContaining({ field: 'lat', new: '40.700000' }), expect.objectContaining({ field: 'lng', new: '-74.000000' })],
        },
        { change: 'remove', code: 'GONE', name: 'Closing down', city: 'Albany', state: 'NY' },
      ]);
      // The old values are the stored ones.
      const stored = await repo().findOneByOrFail({ code: 'S000002' });
      expect(body.changes[2].fields!.map((f) => f.old)).toEqual([stored.lat.toFixed(6), stored.lng.toFixed(6)]);
      await expect(checksum()).resolves.toBe(before);

      const applied = await upload(a, file, '?prune=true&expected_removals=1', dry.headers.etag).expect(200);
      expect(applied.headers.etag).toBe(`"${v0 + 1}"`);
      expect(applied.body).toMatchObject({ ...body, version: v0 + 1, dry_run: false });
      const after = await repo().find({ order: { code: 'ASC' } });
      expect(after.map((s) => s.code)).toEqual(['NEW1', 'S000000', 'S000001', 'S000002']);
      expect(after.find((s) => s.code === 'S000001')).toMatchObject({ name: 'Store 1, renamed', sunday: '10:00 AM - 4:00 PM', monday: WEEK_OPEN.monday });
      expect(after.find((s) => s.code === 'S000002')).toMatchObject({ lat: 40.7, lng: -74 });
      await expect(version()).resolves.toBe(v0 + 1);
      expect(audit.entries.map((e) => [e.event, e.target.dryRun, e.target.pruned])).toEqual([
        ['admin.stores.import_checked', true, 1],
        ['admin.stores.imported', false, 1],
      ]);
    });

    it(`lists the first ${MAX_LISTED_CHANGES} changes and says the list was cut; the counts stay exact`, async () => {
      await importStores(a, storesCsv(many(10, 'OLD')));
      const dry = await upload(a, storesCsv(many(MAX_LISTED_CHANGES + 5)), '?dry_run=true&prune=true').expect(200);
      const body = dry.body as ImportBody;
      expect(body).toMatchObject({ read: MAX_LISTED_CHANGES + 5, inserted: MAX_LISTED_CHANGES + 5, pruned: 10, changes_truncated: true });
      expect(body.changes).toHaveLength(MAX_LISTED_CHANGES);
      expect(body.changes.every((c) => c.change === 'add')).toBe(true);
      expect(body.changes.at(-1)).toMatchObject({ line: MAX_LISTED_CHANGES + 1, code: `S${String(MAX_LISTED_CHANGES - 1).padStart(6, '0')}` });
      await expect(repo().count()).resolves.toBe(10);
    });

    it('a file that changes nothing lists nothing and writes nothing', async () => {
      await importStores(a, storesCsv(many(5)));
      const before = await checksum();
      const dry = await upload(a, storesCsv(many(5)), '?dry_run=true&prune=true').expect(200);
      expect(dry.body).toMatchObject({
        read: 5,
        inserted: 0,
        updated: 0,
        unchanged: 5,
        pruned: 0,
        changes: [],
        changes_truncated: false,
        removals_need_confirmation: false,
      });
      const applied = await upload(a, storesCsv(many(5)), '?prune=true', dry.headers.etag).expect(200);
      expect(applied.headers.etag).toBe(dry.headers.etag);
      await expect(checksum()).resolves.toBe(before);
    });
  });

  describe('an apply with If-Match', () => {
    it('is refused with 412 after a store changed through another instance, writes nothing, and goes through with the new ETag', async () => {
      await importStores(a, storesCsv(many(3)));
      const file = storesCsv([...many(3), { code: 'NEW', name: 'New' }]);
      const dry = await upload(a, file, '?dry_run=true').expect(200);
      // Instance B changes one store meanwhile.
      await b.http
        .put('/admin/stores/S000001')
        .set(bearer(admin))
        .send({ name: 'Edited on B', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN })
        .expect(200);
      const before = await checksum();

      const refused = await upload(a, file, '', dry.headers.etag).expect(412);
      expect(refused.body).toEqual({
        error: 412,
        message: expect.stringMatching(/^the store catalogue changed since the dry run \(version \d+, now \d+\); nothing was written\. Check the file again/),
      });
      expect(refused.headers.etag).toBe(`"${await version()}"`);
      await expect(checksum()).resolves.toBe(before);
      expect(audit.entries.at(-1)).toMatchObject({ event: 'admin.stores.import_refused', target: { reason: 'catalog_changed' } });

      // Checked again, the list shows what the apply now does: B's edit would be undone.
      const again = await upload(a, file, '?dry_run=true').expect(200);
      expect((again.body as ImportBody).changes).toEqual([
        { change: 'update', line: 3, code: 'S000001', name: 'Store 1', fields: [{ field: 'name', old: 'Edited on B', new: 'Store 1' }] },
        { change: 'add', line: 5, code: 'NEW', name: 'New', city: 'New York', state: 'NY' },
      ]);
      await upload(a, file, '', again.headers.etag).expect(200);
      await expect(repo().findOneByOrFail({ code: 'NEW' })).resolves.toMatchObject({ name: 'New' });
    });

    it('is refused with 412 after an import by the command line in between', async () => {
      await importStores(a, storesCsv(many(3)));
      const dry = await upload(b, storesCsv(many(4)), '?dry_run=true').expect(200);
      const cli = await runCli(a.database, ['locations', 'import', csvFile('cli.csv', storesCsv([...many(3), { code: 'CLI', name: 'From the shell' }]))]);
      expect(cli.code).toBe(0);
      const before = await checksum();
      await upload(b, storesCsv(many(4)), '', dry.headers.etag).expect(412);
      await expect(checksum()).resolves.toBe(before);
    });

    it('takes a list of tags and *; refuses a weak tag or a stranger with 412 and a malformed header with 400', async () => {
      await importStores(a, storesCsv(many(2)));
      const v = await version();
      const before = await checksum();
      await upload(a, storesCsv(many(3)), '', `W/"${v}"`).expect(412);
      await upload(a, storesCsv(many(3)), '', '"stale-tag"').expect(412);
      for (const bad of [`${v}`, `"${v}`, '"1" "2"', 'W/']) {
        const res = await upload(a, storesCsv(many(3)), '', bad).expect(400);
        expect(res.body.message).toBe('If-Match must be "*" or entity tags like "42", as the ETag of a dry run');
      }
      await expect(checksum()).resolves.toBe(before);
      await upload(a, storesCsv(many(3)), '', `"${v - 1}", "${v}"`).expect(200);
      await upload(a, storesCsv(many(4)), '', '*').expect(200);
      await expect(repo().count()).resolves.toBe(4);
    });

    it('on the command line: --if-version refuses with exit 3 once the catalogue moved, and the dry run prints its changes and version', async () => {
      await importStores(a, storesCsv(many(2)));
      const file = csvFile(
        'next.csv',
        storesCsv([{ code: 'S000000', name: 'Renamed "zero"' }, ...many(1, 'S', 1), { code: 'ADD', name: 'Added', city: 'Boston', state: 'MA', zip: '02108' }]),
      );
      const dry = await runCli(a.database, ['locations', 'import', file, '--dry-run']);
      expect(dry.code).toBe(0);
      expect(dry.stdout.split('\n')).toEqual([
        'CHANGE  LINE  CODE     NAME            WHAT',
        'update  2     S000000  Renamed "zero"  name: "Store 0" -> "Renamed \\"zero\\""',
        'add     4     ADD      Added           Boston, MA',
        '',
      ]);
      const v = await version();
      expect(dry.stderr).toContain(`catalogue version ${v}: apply exactly these changes with --if-version ${v}`);

      await a.http.delete('/admin/stores/S000001').set(bearer(admin)).expect(204);
      const before = await checksum();
      const refused = await runCli(a.database, ['locations', 'import', file, '--if-version', String(v)]);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(
        /error: the store catalogue changed since the dry run \(version \d+, now \d+\); nothing was written\. Check the file again with --dry-run/,
      );
      await expect(checksum()).resolves.toBe(before);

      const applied = await runCli(a.database, ['locations', 'import', file, '--if-version', String(await version())]);
      expect(applied.code).toBe(0);
      await expect(repo().findOneByOrFail({ code: 'S000000' })).resolves.toMatchObject({ name: 'Renamed "zero"' });
      expect((await runCli(a.database, ['locations', 'import', file, '--if-version', 'x'])).code).toBe(1);
    });
  });

  describe('a dry run holds no transaction', () => {
    afterEach(() => jest.restoreAllMocks());

    it('plant creates and store PUTs made while it plans are answered before it goes on, none with a 5xx, and its list is of the version it answers', async () => {
      const stores = 2000;
      await importStores(a, storesCsv(many(stores)));
      const v0 = await version();
      const shop = (await a.app.get(TokensService).create({ team: 'dry-run-shop' })).token;
      const plantsBefore = Number((await a.dataSource.query("SELECT COUNT(*) AS n FROM plants WHERE team = 'dry-run-shop'"))[0].n);
      /** Writes answered after they were sent while the plan was under way, of each kind, before the plan may go on. */
      const WRITES = 3;
      let planning = false;
      const answers: Array<{ kind: 'plant' | 'store'; status: number; sentWhilePlanning: boolean; answeredWhilePlanning: boolean }> = [];
      const whilePlanning = (kind: string) => answers.filter((w) => w.kind === kind && w.sentWhilePlanning && w.answeredWhilePlanning).length;
      let stop = false;
      let edits = 0;
      const loop = async (kind: 'plant' | 'store') => {
        for (let i = 0; !stop; i++) {
          const sentWhilePlanning = planning;
          const res =
            kind === 'plant'
              ? await a.http
                  .post('/plants')
                  .set(bearer(shop))
                  .send({ name: `Fern ${i}` })
              : await a.http
                  .put(`/admin/stores/S${String(edits++).padStart(6, '0')}`)
                  .set(bearer(admin))
                  .send({ name: 'Edited during the dry run', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN });
          answers.push({ kind, status: res.status, sentWhilePlanning, answeredWhilePlanning: planning });
          // Each stops once its kind has its writes during the plan; a write that waited for the plan would get its 503 after TRANSACTION_WAIT_MS and count too.
          if (kind === 'plant' ? whilePlanning('plant') >= WRITES : whilePlanning('store') >= WRITES) return;
        }
      };
      // The plan's first look-up of stored rows starts the writers, and the plan goes on only once they stopped:
      // a plan that held the writer (as a dry run once did, in a write transaction) would keep them waiting.
      // The service's planner compares the file with the stored stores, a chunk at a time.
      const imports = a.app.get<StoreImportService, { planner: { compare: (...args: unknown[]) => Promise<void> } }>(StoreImportService).planner;
      const compare = imports.compare.bind(imports);
      let writers: Promise<unknown> | undefined;
      jest.spyOn(imports, 'compare').mockImplementationOnce(async (...args: unknown[]) => {
        planning = true;
        await compare(...args);
        writers = Promise.all([loop('plant'), loop('plant'), loop('store')]);
        await writers;
      });
      const dry = await upload(a, storesCsv(many(stores)), '?dry_run=true');
      planning = false;
      stop = true;
      await writers;

      expect(dry.status).toBe(200);
      expect(answers.filter((w) => w.status >= 500)).toEqual([]);
      expect(answers.every((w) => w.status === (w.kind === 'plant' ? 201 : 200))).toBe(true);
      expect(whilePlanning('plant')).toBeGreaterThanOrEqual(WRITES);
      expect(whilePlanning('store')).toBe(WRITES);
      // The tables have every write, and the version each store write.
      const plants = answers.filter((w) => w.kind === 'plant').length;
      await expect(
        a.dataSource.query("SELECT COUNT(*) AS n FROM plants WHERE team = 'dry-run-shop'").then((rows: Array<{ n: number | string }>) => Number(rows[0].n)),
      ).resolves.toBe(plantsBefore + plants);
      await expect(repo().countBy({ name: 'Edited during the dry run' })).resolves.toBe(edits);
      await expect(version()).resolves.toBe(v0 + edits);
      // The store writes moved the catalogue while it planned: it planned again, and lists undoing them against the version it answers.
      expect(dry.headers.etag).toBe(`"${v0 + edits}"`);
      const body = dry.body as ImportBody;
      expect(body).toMatchObject({ read: stores, inserted: 0, updated: edits, unchanged: stores - edits, version: v0 + edits });
      expect(body.changes.map((c) => [c.code, c.fields?.map((f) => [f.field, f.old, f.new])])).toEqual(
        Array.from({ length: edits }, (_, i) => [`S${String(i).padStart(6, '0')}`, [['name', 'Edited during the dry run', `Store ${i}`]]]),
      );
    });
  });

  describe('the removal guard (STORE_IMPORT_MAX_PRUNE_PERCENT, 10 % by default)', () => {
    beforeEach(() => importStores(a, storesCsv(many(20))));
    /** The file keeps all but `removed` of the 20 stores. */
    const keeping = (removed: number) => storesCsv(many(20 - removed));

    it('lets a prune remove up to 10 % (2 of 20) without a count, and no more', async () => {
      const dry = await upload(a, keeping(2), '?dry_run=true&prune=true').expect(200);
      expect(dry.body).toMatchObject({ pruned: 2, catalog_size: 20, removals_need_confirmation: false });
      await upload(a, keeping(1), '?prune=true').expect(200);
      await expect(repo().count()).resolves.toBe(19);
      await upload(a, storesCsv(many(20)), '').expect(200);
      await upload(a, keeping(2), '?prune=true').expect(200);
      await expect(repo().count()).resolves.toBe(18);
    });

    it('refuses 3 of 20 with 409 naming the number and how to confirm, writes nothing, and applies it with expected_removals=3', async () => {
      const dry = await upload(a, keeping(3), '?dry_run=true&prune=true').expect(200);
      expect(dry.body).toMatchObject({ pruned: 3, removals_need_confirmation: true });
      const before = await checksum();
      const refused = await upload(a, keeping(3), '?prune=true').expect(409);
      expect(refused.body).toEqual({
        error: 409,
        message:
          'this import would remove 3 of 20 stores (15 %), more than the 10 % (STORE_IMPORT_MAX_PRUNE_PERCENT) allowed without confirmation; nothing was written. Check the list with dry_run=true, then send expected_removals=3 to confirm',
      });
      await expect(checksum()).resolves.toBe(before);
      expect(audit.entries.at(-1)).toMatchObject({ event: 'admin.stores.import_refused', target: { reason: 'removals', removals: 3, catalogSize: 20 } });
      await upload(a, keeping(3), '?prune=true&expected_removals=3', dry.headers.etag).expect(200);
      await expect(repo().count()).resolves.toBe(17);
    });

    it('refuses a wrong expected count, under the share too, and expected_removals without prune', async () => {
      const before = await checksum();
      const wrong = await upload(a, keeping(3), '?prune=true&expected_removals=2').expect(409);
      expect(wrong.body.message).toBe(
        'this import would remove 3 stores, not the 2 expected; nothing was written. Check the list with dry_run=true, then send expected_removals=3 to confirm',
      );
      await upload(a, keeping(1), '?prune=true&expected_removals=0').expect(409);
      expect((await upload(a, keeping(1), '?expected_removals=1').expect(400)).body.message).toBe('expected_removals needs prune=true');
      for (const bad of ['-1', '1.5', 'two', '']) await upload(a, keeping(1), `?prune=true&expected_removals=${bad}`).expect(400);
      await expect(checksum()).resolves.toBe(before);
      await upload(a, keeping(1), '?prune=true&expected_removals=1').expect(200);
      await expect(repo().count()).resolves.toBe(19);
    });

    it('holds on the command line: exit 4 and nothing written without --expect-removals, applied with it', async () => {
      const file = csvFile('fewer.csv', keeping(5));
      const dry = await runCli(a.database, ['locations', 'import', file, '--dry-run', '--prune']);
      expect(dry.code).toBe(0);
      expect(dry.stdout.split('\n').filter((line) => line.startsWith('remove'))).toHaveLength(5);
      expect(dry.stderr).toContain('5 of 20 stores would be removed: the apply needs --expect-removals 5');
      const before = await checksum();
      const refused = await runCli(a.database, ['locations', 'import', file, '--prune']);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(
        'error: this import would remove 5 of 20 stores (25 %), more than the 10 % (STORE_IMPORT_MAX_PRUNE_PERCENT) allowed without confirmation; nothing was written. Check the list with --dry-run, then add --expect-removals 5 to confirm',
      );
      expect((await runCli(a.database, ['locations', 'import', file, '--prune', '--expect-removals', '4'])).code).toBe(4);
      expect((await runCli(a.database, ['locations', 'import', file, '--expect-removals', '5'])).code).toBe(1);
      await expect(checksum()).resolves.toBe(before);
      expect((await runCli(a.database, ['locations', 'import', file, '--prune', '--expect-removals', '5'])).code).toBe(0);
      await expect(repo().count()).resolves.toBe(15);
    });
  });
});
