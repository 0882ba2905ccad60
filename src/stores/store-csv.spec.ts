import { STORE_FIELD_NAMES } from './store-fields.js';
import { unguardRecord } from './store-csv.js';

describe("the import's reading of the export guard", () => {
  it('unguards the free-text columns of a record only', () => {
    const record = STORE_FIELD_NAMES.map((column) => (column === 'lat' ? '-40.5' : `'=${column}`));
    const read = unguardRecord([...record]);
    expect(read[STORE_FIELD_NAMES.indexOf('name')]).toBe('=name');
    expect(read[STORE_FIELD_NAMES.indexOf('code')]).toBe('=code');
    expect(read[STORE_FIELD_NAMES.indexOf('state')]).toBe("'=state");
    expect(read[STORE_FIELD_NAMES.indexOf('lat')]).toBe('-40.5');
  });
});
