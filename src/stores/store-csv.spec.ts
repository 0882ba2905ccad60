import { isEmail } from 'class-validator';
import { emailProblem, websiteProblem } from '../shared/contact-fields.js';
import { STORE_FIELD_NAMES } from '../shared/store-fields.js';
import { WEEKDAYS } from '../shared/weekdays.js';
import { characters, unguardRecord, validateStoreRecord } from './store-csv.js';

describe("the import's reading of the export guard", () => {
  it('unguards the free-text columns of a record only', () => {
    const record = STORE_FIELD_NAMES.map((column) => (column === 'lat' ? '-40.5' : `'=${column}`));
    const read = unguardRecord([...record]);
    expect(read[STORE_FIELD_NAMES.indexOf('name')]).toBe('=name');
    expect(read[STORE_FIELD_NAMES.indexOf('code')]).toBe('=code');
    expect(read[STORE_FIELD_NAMES.indexOf('state')]).toBe("'=state");
    expect(read[STORE_FIELD_NAMES.indexOf('lat')]).toBe('-40.5');
    expect(read[STORE_FIELD_NAMES.indexOf('phone')]).toBe('=phone');
    expect(read[STORE_FIELD_NAMES.indexOf('email')]).toBe('=email');
    expect(read[STORE_FIELD_NAMES.indexOf('website')]).toBe("'=website");
  });

  it("finds the guarded columns by the file's header, whichever optional columns it leaves out", () => {
    const columns = [...STORE_FIELD_NAMES.slice(0, 15), 'email' as const];
    const read = unguardRecord(
      columns.map((column) => `'+${column}`),
      columns,
    );
    expect(read[15]).toBe('+email');
    expect(read[14]).toBe("'+sunday");
  });
});

describe('the contact checks, beside what the server would make of the same text', () => {
  it("takes only addresses class-validator's isEmail takes too", () => {
    for (const address of ['shop@example.com', 'orders+plants@example.co.uk', "o'brien@example.com", '=cmd@example.com', 'a@b.cd']) {
      expect(emailProblem(address)).toBeNull();
      expect(isEmail(address)).toBe(true);
    }
  });

  it('takes only websites WHATWG URL reads as https to a host name, with no user name', () => {
    for (const website of [
      'https://example.com',
      'HTTPS://Example.COM/Stores?id=42#hours',
      'https://bücher.example/',
      'https://www.example.co.uk:8443/a%20b',
    ]) {
      expect(websiteProblem(website)).toBeNull();
      const url = new URL(website);
      expect(url.protocol).toBe('https:');
      expect(url.username + url.password).toBe('');
      expect(url.hostname).toMatch(/^(?:[a-z0-9-]+\.)+[a-z]{2,}$/);
    }
  });
});

describe('the warnings of a row taken all the same', () => {
  const NEW_YORK = { lat: 40.750742, lng: -73.99653 };
  const record = (lat: string, lng: string) =>
    STORE_FIELD_NAMES.slice(0, 15).map((column) =>
      column === 'lat'
        ? lat
        : column === 'lng'
          ? lng
          : column === 'state'
            ? 'NY'
            : column === 'zip'
              ? '10001'
              : (WEEKDAYS as readonly string[]).includes(column)
                ? 'Closed'
                : 'x',
    );
  const check = (lat: string, lng: string) =>
    validateStoreRecord(record(lat, lng), 7, { zip: () => NEW_YORK, services: new Set() }, STORE_FIELD_NAMES.slice(0, 15));

  it('names coordinates more than 100 miles from the ZIP code with a code, and keeps the row', () => {
    const { row, problems, warnings } = check('34.05', '-118.24');
    expect(problems).toEqual([]);
    expect(row).toMatchObject({ lat: 34.05, lng: -118.24 });
    expect(warnings).toEqual([{ line: 7, column: 'lat', code: 'far_from_zip', reason: 'is more than 100 miles from ZIP 10001' }]);
  });

  it('says nothing of coordinates within 100 miles, nor of a row without them', () => {
    expect(check('41.2', '-73.99').warnings).toEqual([]);
    expect(check('', '').warnings).toEqual([]);
  });
});

describe('characters: a text limit counts code points, as [...text].length does', () => {
  const texts = [
    '',
    'a',
    'Green Thumb',
    'Café Ñandú',
    '🌵 Cactus',
    '🌵🌿🌱',
    'x\uD83C',
    '\uD83Cx',
    '\uDF35\uD83C',
    'a\uDF35',
    '\uD83C\uDF35\uD83C',
    '漢字のお店',
  ];
  it.each(texts)('%j', (text) => {
    expect(characters(text)).toBe([...text].length);
  });
});
