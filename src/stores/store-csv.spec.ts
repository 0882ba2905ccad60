import { unguardRecord, STORE_CSV_COLUMNS } from './store-csv.js';

describe("the import's reading of the export guard", () => {
  it('unguards the free-text columns of a record only', () => {
    const record = STORE_CSV_COLUMNS.map((column) => (column === 'lat' ? '-40.5' : `'=${column}`));
    const read = unguardRecord([...record]);
    expect(read[STORE_CSV_COLUMNS.indexOf('name')]).toBe('=name');
    expect(read[STORE_CSV_COLUMNS.indexOf('code')]).toBe('=code');
    expect(read[STORE_CSV_COLUMNS.indexOf('state')]).toBe("'=state");
    expect(read[STORE_CSV_COLUMNS.indexOf('lat')]).toBe('-40.5');
  });
});
