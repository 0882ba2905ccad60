import fc from 'fast-check';
import { guardCell, unguardCell } from './csv-guard.js';

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
});
