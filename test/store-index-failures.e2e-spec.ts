import { ConsoleLogger } from '@nestjs/common';
import { jest } from '@jest/globals';
import { StoreIndex } from '../src/locations/store-index.js';
import { StoreCatalog } from '../src/stores/store-catalog.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { importStores, storesCsv, WEEK_OPEN } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/** Warnings kept for the test to read; errors and fatals as the tests' default logger prints them. */
class WarningCapture extends ConsoleLogger {
  readonly warnings: string[] = [];
  constructor() {
    super('', { logLevels: ['fatal', 'error', 'warn'] });
  }
  warn(message: unknown) {
    this.warnings.push(String(message));
  }
}

const BODY = { name: 'Fern & Fig Chelsea', address: '1083 Cedar Lane', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN };
const SEARCH = { customer_address: { zip: '10001' }, max_distance: 5 };

/**
 * What the catalogue's door and the search index do when a part of them fails after or around a
 * committed change: the write still answers what happened, and the index keeps answering from
 * what it holds until it can catch up.
 */
describe('catalogue changes when the index cannot take them', () => {
  let t: TestApp;
  let logger: WarningCapture;
  let admin: string;
  let team: string;
  let catalog: StoreCatalog;
  let index: StoreIndex;
  const names = async () =>
    ((await t.http.post('/locations/nearest').set(bearer(team)).send(SEARCH).expect(200)).body as { locations: Array<{ name: string }> }).locations.map(
      (l) => l.name,
    );

  beforeAll(async () => {
    logger = new WarningCapture();
    // The index refreshes only when the test asks (refresh()), never by its timer during a test.
    t = await createTestApp({ env: { STORE_INDEX_REFRESH_MS: '3600000', TOKEN_CACHE_SECONDS: '0' }, logger });
    admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
    team = await t.tokenFor('acme');
    catalog = t.app.get(StoreCatalog);
    index = t.app.get(StoreIndex);
    await importStores(t, storesCsv([{ code: 'S1', name: 'Chelsea', lat: 40.7506, lng: -73.9973 }]));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    logger.warnings.length = 0;
  });
  afterAll(async () => {
    await t.close();
  });

  it('a listener that fails after the commit does not fail the write: it answers 201, the store is stored, the failure is logged, and the index catches up on its refresh', async () => {
    const apply = jest.spyOn(index, 'apply').mockRejectedValueOnce(new Error('index refused by the test'));
    const created = await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(BODY);
    expect(created.status).toBe(201);
    expect(apply).toHaveBeenCalledTimes(1);
    await expect(t.dataSource.getRepository(Store).findOneBy({ code: 'NY-1' })).resolves.toMatchObject({ name: 'Fern & Fig Chelsea' });
    expect(logger.warnings).toEqual([
      expect.stringMatching(/^catalogue version \d+ committed, but a listener failed on it: index refused by the test$/) as string,
    ]);
    // The index missed the change; its refresh, as for another instance's change, brings it.
    expect(await names()).toEqual(['Chelsea']);
    expect(index.version).toBeLessThan(await catalog.version());
    await index.refresh();
    expect(index.version).toBe(await catalog.version());
    expect((await names()).sort()).toEqual(['Chelsea', 'Fern & Fig Chelsea']);
  });

  it('keeps its last answers when reading the catalogue version fails, and catches up when it works again', async () => {
    const before = await names();
    const version = index.version;
    // A change made by another instance (by hand here: a store and a version the log does not hold).
    await t.dataSource.query('UPDATE stores SET name = ? WHERE code = ?', ['Chelsea Renamed', 'S1']);
    await t.dataSource.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
    const read = jest.spyOn(catalog, 'version').mockRejectedValueOnce(new Error('database gone (test)'));
    await expect(index.refresh()).resolves.toBeUndefined();
    expect(read).toHaveBeenCalledTimes(1);
    expect(logger.warnings).toEqual(['store index not refreshed: database gone (test)']);
    expect(index.version).toBe(version);
    expect(await names()).toEqual(before);
    await index.refresh();
    expect(index.version).toBe(version + 1);
    expect(await names()).toContain('Chelsea Renamed');
  });

  it('loads every store when the change log cannot be read, and keeps its last answers when the load fails too', async () => {
    await t.dataSource.query('UPDATE stores SET name = ? WHERE code = ?', ['Chelsea Again', 'S1']);
    await t.dataSource.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
    const before = await names();
    const version = index.version;
    // The log fails, then the load of every store fails too: the index keeps what it has.
    jest.spyOn(catalog, 'changesSince').mockRejectedValue(new Error('change log unreadable (test)'));
    const pages = jest.spyOn(catalog, 'pages').mockImplementation(async function* () {
      yield* [];
      await Promise.reject(new Error('stores unreadable (test)'));
    });
    await expect(index.refresh()).resolves.toBeUndefined();
    expect(pages).toHaveBeenCalledTimes(1);
    expect(logger.warnings).toEqual([
      'store changes not read, loading every store: change log unreadable (test)',
      'store index not refreshed: stores unreadable (test)',
    ]);
    expect(index.version).toBe(version);
    expect(await names()).toEqual(before);
    // The stores can be read again, the log still cannot: the load brings the change.
    pages.mockRestore();
    logger.warnings.length = 0;
    await index.refresh();
    expect(logger.warnings).toEqual(['store changes not read, loading every store: change log unreadable (test)']);
    expect(index.version).toBe(version + 1);
    expect(await names()).toContain('Chelsea Again');
  });
});
