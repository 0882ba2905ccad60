import fc from 'fast-check';
import { guardCell, unguardCell } from './csv-guard.js';
import { unguardRecord, STORE_CSV_COLUMNS } from './store-csv.js';

describe('the export guard against spreadsheet formulas', () => {
  it.each([
    ['=HYPERLINK("x")', `'=HYPERLINK("x")`],
    ['+1', "'+1"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ["'=x", "''=x"],
    ["O'Neil", "O'Neil"],
    ["'quoted'", "'quoted'"],
    ['Fern & Fig', 'Fern & Fig'],
    ['', ''],
  ])('%j is exported as %j and read back', (value, cell) => {
    expect(guardCell(value)).toBe(cell);
    expect(unguardCell(cell)).toBe(value);
  });

  it('gives every string back: unguardCell(guardCell(x)) === x', () => {
    const text = fc.string({ unit: fc.constantFrom("'", '=', '+', '-', '@', '\t', '\r', 'a', ' ', ',', '"') });
    fc.assert(
      fc.property(text, (value) => unguardCell(guardCell(value)) === value && !/^[=+\-@\t\r]/.test(guardCell(value))),
      { seed: 27, numRuns: 2000 },
    );
  });

  it('unguards the free-text columns of a record only', () => {
    const record = STORE_CSV_COLUMNS.map((column) => (column === 'lat' ? '-40.5' : `'=${column}`));
    const read = unguardRecord([...record]);
    expect(read[STORE_CSV_COLUMNS.indexOf('name')]).toBe('=name');
    expect(read[STORE_CSV_COLUMNS.indexOf('code')]).toBe('=code');
    expect(read[STORE_CSV_COLUMNS.indexOf('state')]).toBe("'=state");
    expect(read[STORE_CSV_COLUMNS.indexOf('lat')]).toBe('-40.5');
  });
});
