import { StoreImportError } from '../src/stores/store-csv-reader.js';
import { Store } from '../src/stores/store.entity.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { createTestApp, type TestApp } from './support/test-app.js';

describe('store import rules', () => {
  let t: TestApp;
  const stores = () => t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } });
  const version = async () => Number((await t.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);

  /** Imports and expects a refusal; returns the problem lines. */
  const refused = async (input: StoreInput[] | string) => {
    const csv = typeof input === 'string' ? input : storesCsv(input);
    const error: unknown = await importStores(t, csv).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreImportError);
    return (error as StoreImportError).message;
  };

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.dataSource.getRepository(Store).clear();
    await importStores(t, storesCsv([{ code: 'KEEP', name: 'Kept store', zip: '10001' }]));
  });

  it.each<[string, StoreInput, string]>([
    ['an empty name', { code: 'X', name: '' }, 'line 2, name: is empty'],
    ['an empty address', { code: 'X', name: 'n', address: ' ' }, 'line 2, address: is empty'],
    ['an empty city', { code: 'X', name: 'n', city: '' }, 'line 2, city: is empty'],
    ['an empty code', { code: '', name: 'n' }, 'line 2, code: is empty'],
    ['a name over 200 characters', { code: 'X', name: 'n'.repeat(201) }, 'line 2, name: is longer than 200 characters'],
    ['a state that is not a US code', { code: 'X', name: 'n', state: 'ZZ' }, 'line 2, state: "ZZ" is not a US state or territory code'],
    ['a malformed ZIP', { code: 'X', name: 'n', zip: '1234' }, 'line 2, zip: "1234" is not a ZIP code like 12345 or 12345-6789'],
    ['an unknown ZIP without coordinates', { code: 'X', name: 'n', zip: '00000' }, 'line 2, zip: unknown ZIP code 00000; give lat and lng'],
    ['a latitude over 90', { code: 'X', name: 'n', lat: '90.5', lng: '-73' }, 'line 2, lat: "90.5" is not a latitude from -90 to 90'],
    ['a longitude under -180', { code: 'X', name: 'n', lat: '40', lng: '-180.1' }, 'line 2, lng: "-180.1" is not a longitude from -180 to 180'],
    ['a latitude without longitude', { code: 'X', name: 'n', lat: '40', lng: '' }, 'line 2, lng: "" is not a longitude from -180 to 180'],
    ['a non-numeric latitude', { code: 'X', name: 'n', lat: '4O.1', lng: '-73' }, 'line 2, lat: "4O.1" is not a latitude'],
    [
      'hours in another format',
      { code: 'X', name: 'n', hours: { monday: '9am-5pm' } },
      'line 2, monday: "9am-5pm" is not a time range like "9:00 AM - 6:00 PM"',
    ],
    [
      'hours closing before opening',
      { code: 'X', name: 'n', hours: { friday: '5:00 PM - 9:00 AM' } },
      'line 2, friday: "5:00 PM - 9:00 AM" closes before it opens',
    ],
    [
      'overlapping ranges',
      { code: 'X', name: 'n', hours: { sunday: '9:00 AM - 1:00 PM, 12:00 PM - 5:00 PM' } },
      'line 2, sunday: "12:00 PM - 5:00 PM" overlaps',
    ],
    ['an empty day', { code: 'X', name: 'n', hours: { tuesday: '' } }, 'line 2, tuesday: "" is not a time range'],
  ])('refuses %s, naming line and column, and writes nothing', async (_, store, message) => {
    const before = await version();
    await expect(refused([store])).resolves.toContain(message);
    await expect(stores()).resolves.toMatchObject([{ code: 'KEEP' }]);
    await expect(version()).resolves.toBe(before);
  });

  it('refuses a code used twice in the file', async () => {
    const message = await refused([
      { code: 'A', name: 'one' },
      { code: 'B', name: 'two' },
      { code: 'A', name: 'three' },
    ]);
    expect(message).toContain('line 4, code: "A" already appears on line 2');
  });

  it('accepts an unknown ZIP when coordinates are given, and ZIP+4', async () => {
    const summary = await importStores(
      t,
      storesCsv([
        { code: 'PO', name: 'Remote', zip: '00000', lat: 40.1, lng: -74.2 },
        { code: 'Z4', name: 'Plus four', zip: '10001-1234' },
      ]),
    );
    expect(summary).toMatchObject({ read: 2, inserted: 2 });
    expect((await stores()).find((s) => s.code === 'Z4')).toMatchObject({ zip: '10001-1234', lat: 40.75065, lng: -73.997293 });
  });

  it('warns when the coordinates are more than 100 miles from the ZIP, and still imports', async () => {
    const summary = await importStores(t, storesCsv([{ code: 'FAR', name: 'Far from its ZIP', zip: '10001', lat: 34.05, lng: -118.24 }]));
    expect(summary.inserted).toBe(1);
    expect(summary.warnings).toEqual([{ line: 2, column: 'lat', code: 'far_from_zip', reason: 'is more than 100 miles from ZIP 10001' }]);
    expect(summary.warningCount).toBe(1);
    expect((await stores()).find((s) => s.code === 'FAR')).toMatchObject({ lat: 34.05, lng: -118.24, zip: '10001' });
  });

  it('lists every bad row, capped at 50 with a count of the rest', async () => {
    const bad = Array.from({ length: 70 }, (_, i) => ({ code: `B${i}`, name: 'bad', state: 'XX' }));
    const message = await refused([{ code: 'OK', name: 'fine' }, ...bad]);
    expect(message).toContain('70 problems found');
    expect(message).toContain('line 3, state');
    expect(message).toContain('line 52, state');
    expect(message).not.toContain('line 53, state');
    expect(message).toContain('… and 20 more');
  });

  it('refuses a broken CSV with the line of the problem', async () => {
    const csv = storesCsv([{ code: 'A', name: 'a' }]) + 'B,"unclosed quote,x\n';
    await expect(refused(csv)).resolves.toContain('the file cannot be read as CSV');
  });

  it('upserts by code and counts inserted, updated and unchanged', async () => {
    const summary = await importStores(
      t,
      storesCsv([
        { code: 'KEEP', name: 'Kept store', zip: '10001' },
        { code: 'NEW', name: 'New' },
      ]),
    );
    expect(summary).toMatchObject({ read: 2, inserted: 1, updated: 0, unchanged: 1, pruned: 0 });
    const again = await importStores(
      t,
      storesCsv([
        { code: 'KEEP', name: 'Renamed', zip: '10001' },
        { code: 'NEW', name: 'New' },
      ]),
    );
    expect(again).toMatchObject({ read: 2, inserted: 0, updated: 1, unchanged: 1 });
    await expect(stores()).resolves.toMatchObject([
      { code: 'KEEP', name: 'Renamed' },
      { code: 'NEW', name: 'New' },
    ]);
  });

  it('--dry-run validates and counts but writes nothing', async () => {
    const before = await version();
    const summary = await importStores(
      t,
      storesCsv([
        { code: 'KEEP', name: 'Changed', zip: '10001' },
        { code: 'NEW', name: 'New' },
      ]),
      { dryRun: true, prune: true },
    );
    expect(summary).toMatchObject({ read: 2, inserted: 1, updated: 1, unchanged: 0, pruned: 0 });
    await expect(stores()).resolves.toMatchObject([{ code: 'KEEP', name: 'Kept store' }]);
    await expect(version()).resolves.toBe(before);
  });

  it('--prune deletes the stores absent from the file, and only with the flag', async () => {
    await importStores(t, storesCsv([{ code: 'OTHER', name: 'Other' }]));
    await expect(stores()).resolves.toHaveLength(2);
    const dry = await importStores(t, storesCsv([{ code: 'OTHER', name: 'Other' }]), { prune: true, dryRun: true });
    expect(dry.pruned).toBe(1);
    await expect(stores()).resolves.toHaveLength(2);
    const summary = await importStores(t, storesCsv([{ code: 'OTHER', name: 'Other' }]), { prune: true, expectedRemovals: 1 });
    expect(summary).toMatchObject({ read: 1, unchanged: 1, pruned: 1 });
    await expect(stores()).resolves.toMatchObject([{ code: 'OTHER' }]);
  });

  it('--prune does nothing when the file is invalid', async () => {
    await expect(importStores(t, storesCsv([{ code: 'BAD', name: '' }]), { prune: true })).rejects.toBeInstanceOf(StoreImportError);
    await expect(stores()).resolves.toMatchObject([{ code: 'KEEP' }]);
  });

  it('bumps the catalog version once per import that changes something', async () => {
    const before = await version();
    await importStores(t, storesCsv([{ code: 'KEEP', name: 'Kept store', zip: '10001' }]));
    await expect(version()).resolves.toBe(before);
    await importStores(
      t,
      storesCsv([
        { code: 'KEEP', name: 'Kept store', zip: '10001' },
        { code: 'N2', name: 'n2' },
      ]),
    );
    await expect(version()).resolves.toBe(before + 1);
  });
});
