import { Readable } from 'node:stream';
import { storesCsv, type StoreInput } from '../../test/support/stores.js';
import type { RowProblem } from './store-csv.js';
import { MAX_LISTED_PROBLEMS, StoreCsvReader, StoreImportError } from './store-csv-reader.js';
import { Pacer } from './pacer.js';

const NEW_YORK = { lat: 40.750742, lng: -73.99653 };
const BAD_STATE = '"XX" is not a US state or territory code';
const BAD_ZIP = '"1" is not a ZIP code like 12345 or 12345-6789';

async function refusal(csv: string): Promise<StoreImportError> {
  const reader = new StoreCsvReader(() => NEW_YORK);
  const error: unknown = await reader
    .validate(() => Readable.from([csv]), new Pacer(1), new Set())
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(StoreImportError);
  return error as StoreImportError;
}

describe("the check of a store file's rows", () => {
  // Line 2 is good; lines 3 to 202 have 202 problems: a bad state each (line 5 a code already on
  // line 2 instead), lines 50 and 51 a bad ZIP too: the list stops between the two of line 51.
  const rows: StoreInput[] = [
    { code: 'OK1', name: 'good' },
    ...Array.from({ length: 200 }, (_, i): StoreInput => {
      if (i === 2) return { code: 'OK1', name: 'again' };
      return { code: `B${i}`, name: 'bad', state: 'XX', zip: i === 47 || i === 48 ? '1' : '10001' };
    }),
  ];
  const expected: RowProblem[] = [];
  for (let i = 0; i < 200; i++) {
    const line = i + 3;
    if (i === 2) expected.push({ line, column: 'code', code: 'duplicate_code', reason: '"OK1" already appears on line 2' });
    else expected.push({ line, column: 'state', code: 'bad_state', reason: BAD_STATE });
    if (i === 47 || i === 48) expected.push({ line, column: 'zip', code: 'bad_zip', reason: BAD_ZIP });
  }

  it('keeps the first 50 problems in the order of the file and counts every one, the message as it words them', async () => {
    expect(expected).toHaveLength(202);
    const error = await refusal(storesCsv(rows));
    expect(error.problemCount).toBe(202);
    expect(error.read).toBe(201);
    expect(error.problems).toEqual(expected.slice(0, MAX_LISTED_PROBLEMS));
    expect(error.problems.at(-1)).toEqual({ line: 51, column: 'state', code: 'bad_state', reason: BAD_STATE });
    const listed = expected.slice(0, 50).map((p) => `  line ${p.line}, ${p.column}: ${p.reason}`);
    expect(error.message).toBe(`the file was not imported, 202 problems found:\n${listed.join('\n')}\n  … and 152 more`);
  });

  it('words a file of as many problems as it lists, and one of a single problem, without a rest', async () => {
    const fifty = await refusal(storesCsv(Array.from({ length: 50 }, (_, i) => ({ code: `F${i}`, name: 'bad', state: 'XX' }))));
    expect(fifty.problemCount).toBe(50);
    expect(fifty.problems).toEqual(Array.from({ length: 50 }, (_, i) => ({ line: i + 2, column: 'state', code: 'bad_state', reason: BAD_STATE })));
    expect(fifty.message).toMatch(/^the file was not imported, 50 problems found:\n/);
    expect(fifty.message).not.toContain('more');
    const one = await refusal(storesCsv(rows.slice(0, 2)));
    expect(one.problemCount).toBe(1);
    expect(one.message).toBe(`the file was not imported, 1 problem found:\n  line 3, state: ${BAD_STATE}`);
  });
});
