import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEPT_ROWS_MAX } from '../src/stores/store-import-plan.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { bearer, createTestApp, engine, type TestApp } from './support/test-app.js';

const ENV = { TOKEN_CACHE_SECONDS: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', TOKEN_RATE_LIMIT_PER_MINUTE: '0', OIDC_ISSUER: '', REDIS_URL: '' };
/** Rows of the big file: its last row is on line 90,000. */
const ROWS = 89_999;
/** Rows of the file whose batch the database refuses, past the rows a plan keeps (KEPT_ROWS_MAX): the apply reads them from the file again. */
const REREAD_ROWS = 12_000;
/** The row the database refuses there, in the apply's 23rd batch of 500. */
const REFUSED = 'SYN-011000';

/** A synthetic store list (scripts/make-synthetic-stores.mjs: stores spread like the US population), as text. */
function synthetic(dir: string, count: number, seed: number): string {
  const file = join(dir, `stores-${count}-${seed}.csv`);
  execFileSync(process.execPath, ['scripts/make-synthetic-stores.mjs', String(count), file, String(seed)], { stdio: 'ignore' });
  return readFileSync(file, 'utf8');
}

/**
 * An import that fails half way through a big file, through the admin API as the console sends
 * it: a bad row at its last line (90,000), and the database refusing one of the apply's batches
 * (a trigger, on both engines, in each of the apply's two ways: rows kept from the plan, and rows
 * read from the file again). Each leaves the stores, the catalogue version and the search exactly
 * as they were, and the next import of the same file goes through.
 */
describe('store import: a failure half way changes nothing', () => {
  let t: TestApp;
  let dir: string;
  let admin: string;
  let team: string;
  let big: string;
  const version = async () => Number((await t.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  /** The stores table and the catalogue version as one digest. */
  const checksum = async () =>
    createHash('sha256')
      .update(JSON.stringify([await t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } }), await version()]))
      .digest('hex');
  const upload = (csv: string) => t.http.post('/admin/stores.csv').set(bearer(admin)).set('Content-Type', 'text/csv').send(csv);
  const PLACES = [
    { customer_address: { zip: '10001' }, max_distance: 5 },
    { customer_address: { zip: '90012' }, max_distance: 25 },
    { customer_address: { zip: '60602' }, region: { state: 'IL' } },
    { customer_address: { zip: '59001' }, max_distance: 100, nearest_if_none: true },
  ];
  /**
   * What the search answers at PLACES, each asked with a limit not asked before (`limit`), so that
   * no kept answer stands in for the index: the answers' first `limit` stores.
   */
  const searches = async (limit: number) => {
    const answers: unknown[][] = [];
    for (const place of PLACES) {
      const res = await t.http
        .post('/locations/nearest')
        .set(bearer(team))
        .send({ ...place, limit })
        .expect(200);
      answers.push((res.body as { locations: unknown[] }).locations);
    }
    return answers;
  };
  /** Refuses, on the engine under test, every write of the store `code` (an insert, as the import's upsert is, or an update). */
  const refuse = async (code: string) => {
    for (const event of ['INSERT', 'UPDATE'])
      await t.dataSource.query(
        engine === 'sqlite'
          ? `CREATE TRIGGER refuse_store_${event} BEFORE ${event} ON stores WHEN NEW.code = '${code}' BEGIN SELECT RAISE(ABORT, 'store refused by the test'); END`
          : `CREATE TRIGGER refuse_store_${event} BEFORE ${event} ON stores FOR EACH ROW BEGIN IF NEW.code = '${code}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'store refused by the test'; END IF; END`,
      );
  };
  const allow = async () => {
    for (const event of ['INSERT', 'UPDATE']) await t.dataSource.query(`DROP TRIGGER IF EXISTS refuse_store_${event}`);
  };

  // A 90,000-row file through the admin API takes tens of seconds on a busy machine; each test uploads it at most twice.
  jest.setTimeout(600_000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-import-failures-'));
    t = await createTestApp({ env: ENV });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('shoppers');
    big = synthetic(dir, ROWS, 42);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await allow();
    await t.dataSource.getRepository(Store).clear();
    // 2,000 stores at other places (another seed): every one of them is in the big file, changed.
    await upload(synthetic(dir, 2000, 7)).expect(200);
  });
  afterEach(allow);

  it('refuses a file whose row on line 90,000 is bad, with its line and column: the stores, the version and the search as before', async () => {
    const lines = big.trimEnd().split('\n');
    const last = lines[ROWS].split(',');
    last[4] = 'XX';
    lines[ROWS] = last.join(',');
    const before = await checksum();
    const searched = await searches(200);

    const res = await upload(`${lines.join('\n')}\n`).expect(422);
    expect(res.body).toMatchObject({ error: 422, problems: [{ line: 90_000, column: 'state', code: 'bad_state' }] });
    await expect(checksum()).resolves.toBe(before);
    await expect(searches(199)).resolves.toEqual(searched.map((answer) => answer.slice(0, 199)));
  });

  it.each([
    ['the rows it read from the file again', () => synthetic(dir, REREAD_ROWS, 42), REFUSED, REREAD_ROWS],
    ['the rows it kept from the plan', () => synthetic(dir, 600, 42), 'SYN-000550', 600],
  ])('rolls back an apply whose batch the database refuses, writing %s: the stores, the version and the search as before', async (_, file, code, rows) => {
    const csv = file();
    expect(rows > KEPT_ROWS_MAX).toBe(rows === REREAD_ROWS);
    const before = await checksum();
    const searched = await searches(200);
    // The refused store is new in the file read again, one of the 2,000 to update in the kept one.
    const refusedBefore = await t.dataSource.getRepository(Store).findOneBy({ code });
    expect(refusedBefore === null).toBe(rows === REREAD_ROWS);
    await refuse(code);

    const res = await upload(csv).expect(500);
    expect(res.body).toEqual({ error: 500, message: expect.any(String) });
    await expect(checksum()).resolves.toBe(before);
    await expect(searches(199)).resolves.toEqual(searched.map((answer) => answer.slice(0, 199)));
    await expect(t.dataSource.getRepository(Store).findOneBy({ code })).resolves.toEqual(refusedBefore);

    // The database takes the row again: the same file goes through, and the search shows it.
    await allow();
    await expect(upload(csv).expect(200)).resolves.toMatchObject({
      body: { read: rows, inserted: rows - Math.min(rows, 2000), updated: Math.min(rows, 2000) },
    });
    await expect(t.dataSource.getRepository(Store).count()).resolves.toBe(Math.max(rows, 2000));
    await expect(t.dataSource.getRepository(Store).countBy({ code })).resolves.toBe(1);
    const after = await searches(198);
    expect(after).not.toEqual(searched.map((answer) => answer.slice(0, 198)));
  });
});
