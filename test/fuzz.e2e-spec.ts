import fc from 'fast-check';
import { Plant } from '../src/plants/plant.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { importStores, storesCsv } from './support/stores.js';
import { bearer, createTestApp, engine, type TestApp } from './support/test-app.js';

/**
 * Property-based fuzzing of every input the four operations read. A fixed seed keeps CI
 * repeatable; FUZZ_RUNS (npm run test:robustness sets 1000) and FUZZ_SEED widen the search.
 * Properties, for every generated request:
 *  - never a 5xx;
 *  - every response satisfies the OpenAPI document (t.http checks each one), so every 4xx
 *    carries the Error body with its own status;
 *  - after any 4xx the database is exactly as before.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);

// ---- JSON text, not values: so that duplicate keys, huge literals and deep nesting can occur.
const quote = (s: string) => JSON.stringify(s);
const FIELD_NAMES = [
  'name',
  'tag',
  'id',
  'customer_address',
  'max_distance',
  'limit',
  'zip',
  'address',
  'city',
  'state',
  'open_at',
  'open_only',
  'distance_unit',
  'nearest_if_none',
  'region',
];
const key = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...FIELD_NAMES) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', 'Name', 'ID', 'name ', 'na\u0000me') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
);
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom(
    '0',
    '-0',
    '1.0',
    '5.5',
    '1e2',
    '1E400',
    '-1e400',
    '1e-400',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '123456789012345678901234567890',
    '0.1e1',
    '-1',
  ),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
);
const stringText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }).map(quote), // lone surrogates included
  fc.string({ unit: 'grapheme', maxLength: 300 }).map(quote), // beyond 255 characters too
  fc.constantFrom(
    '""',
    '" "',
    '"\\t\\n"',
    '"10001"',
    '" 10001 "',
    '"10001-1234"',
    '"00000"',
    '"１００１"',
    '"NY"',
    '"ny"',
    '"XX"',
    '"🌵"',
    '"\\ud800"',
    '"a\\u0000b"',
  ),
);
const leafText = fc.oneof(numberText, stringText, fc.constantFrom('true', 'false', 'null'));
const { value: jsonText } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafText,
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => `{${entries.map(([k, v]) => `${quote(k)}:${v}`).join(',')}}`),
  ),
}));
const deepNesting = fc
  .integer({ min: 1, max: 2700 })
  .chain((depth) => fc.constantFrom(`${'['.repeat(depth)}${']'.repeat(depth)}`, `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
/** An object text built from the given fields (each optional, possibly repeated) plus stray keys. */
const objectOf = (fields: Record<string, fc.Arbitrary<string>>) =>
  fc
    .array(fc.oneof(...Object.entries(fields).map(([k, v]) => v.map((text) => [k, text] as const)), fc.tuple(key, jsonText)), { maxLength: 6 })
    .map((entries) => `{${entries.map(([k, v]) => `${quote(k)}:${v}`).join(',')}}`);
const anyBody = (nearlyValid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 4, arbitrary: nearlyValid },
    { weight: 2, arbitrary: jsonText },
    { weight: 1, arbitrary: deepNesting },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  );

/** Well-formed bodies too, so that the 2xx side of the properties is exercised. */
const validPlant = fc
  .record(
    {
      name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
      tag: fc.string({ unit: 'grapheme', maxLength: 30 }),
      id: fc.integer({ min: 1, max: 20 }),
    },
    { requiredKeys: ['name'] },
  )
  .map((body) => JSON.stringify(body));
const validNearest = fc
  .record(
    {
      customer_address: fc.record(
        { zip: fc.constantFrom('10001', '10018', ' 10001 ', '10001-1234', '100011234', '00501'), state: fc.constantFrom('NY', 'ny', 'PR') },
        { requiredKeys: ['zip'] },
      ),
      max_distance: fc.double({ min: 0.01, max: 500, noNaN: true }),
      limit: fc.integer({ min: 1, max: 200 }),
      open_at: fc.oneof(
        fc.constant('now'),
        fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      ),
      distance_unit: fc.constantFrom('mi', 'km'),
      nearest_if_none: fc.boolean(),
      region: fc.record(
        { state: fc.constantFrom('NY', 'ny', 'KS', 'PR'), city: fc.constantFrom('New York', ' new york ', 'Garden City', '🌵') },
        { requiredKeys: ['state'] },
      ),
    },
    { requiredKeys: ['customer_address'] },
  )
  .chain((body) => (body.open_at === undefined ? fc.constant(body) : fc.boolean().map((open_only) => ({ ...body, open_only }))))
  // A region search takes no max_distance and no nearest_if_none: true (each a 400).
  .map(({ region, max_distance, nearest_if_none, ...body }) => (region ? { ...body, region } : { ...body, max_distance, nearest_if_none }))
  .map((body) => JSON.stringify(body));

const plantBody = fc.oneof(
  validPlant,
  anyBody(
    objectOf({
      name: fc.oneof(stringText, fc.string({ minLength: 1, maxLength: 20 }).map(quote), leafText),
      tag: fc.oneof(stringText, leafText),
      id: fc.oneof(numberText, fc.integer({ min: 1, max: 20 }).map(String), leafText),
    }),
  ),
);
/** Date-times near and off the RFC 3339 rule: no offset, out-of-range fields, other separators. */
const openAtText = fc
  .tuple(
    fc.integer({ min: 0, max: 12000 }),
    fc.integer({ min: 0, max: 14 }),
    fc.integer({ min: 0, max: 32 }),
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: 0, max: 61 }),
    fc.constantFrom('Z', 'z', '', '+00:00', '-05:00', '+24:00', '-23:59', '+0530', ' UTC'),
    fc.constantFrom('T', 't', ' ', '_'),
  )
  .map(([y, mo, d, h, mi, zone, sep]) =>
    quote(
      `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}${sep}${String(h).padStart(2, '0')}:${String(mi).padStart(2, '0')}:00${zone}`,
    ),
  );
const addressText = objectOf({
  zip: fc.oneof(stringText, numberText, fc.constantFrom('"10001"', '"10018"', '"99999"')),
  state: stringText,
  city: stringText,
  address: stringText,
});
const regionText = objectOf({ state: fc.oneof(stringText, fc.constantFrom('"KS"', '"ny"')), city: fc.oneof(stringText, leafText) });
const nearestBody = fc.oneof(
  validNearest,
  anyBody(
    objectOf({
      customer_address: fc.oneof({ weight: 3, arbitrary: addressText }, { weight: 1, arbitrary: jsonText }),
      max_distance: fc.oneof(numberText, leafText),
      limit: fc.oneof(numberText, leafText),
      open_at: fc.oneof(openAtText, leafText),
      open_only: leafText,
      distance_unit: fc.oneof(fc.constantFrom('"mi"', '"km"', '"KM"', '"miles"'), leafText),
      nearest_if_none: leafText,
      region: fc.oneof({ weight: 3, arbitrary: regionText }, { weight: 1, arbitrary: jsonText }),
    }),
  ),
);

const pathSegment = fc.oneof(
  fc.integer({ min: 1, max: 12 }).map(String),
  numberText.map(encodeURIComponent),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  fc.stringMatching(/^[0-9a-zA-Z%+\-._~]{0,24}$/), // raw, malformed %-escapes included
  fc.constantFrom('%31', '%00', '%', '%zz', '..', '.', '0x10', '1%2F2', '%F0%9F%8C%B5', '1;2', '1,2'),
);
const queryValue = fc.oneof(
  fc.integer({ min: -5, max: 1200 }).map(String),
  numberText,
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', 'tropical', '1e2', '+5', '5.0', ' 5', '0x10'),
);
const query = fc
  .array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('limit', 'tag', 'after') }, { weight: 1, arbitrary: key }), queryValue, fc.boolean()), {
    maxLength: 4,
  })
  .map((pairs) =>
    pairs.map(([k, v, raw]) => `${encodeURIComponent(k)}=${raw ? v.replace(/[^\x21-\x7e]|[#&]/gu, encodeURIComponent) : encodeURIComponent(v)}`).join('&'),
  );

describe(`fuzzing (${RUNS} runs per property, seed ${SEED}, ${engine})`, () => {
  let t: TestApp;
  let token: string;
  const statuses: Record<string, Record<number, number>> = {};

  const seedPlants = async () => {
    const plants = t.dataSource.getRepository(Plant);
    await plants.clear();
    await plants.insert([1, 2, 3, 9].map((id) => ({ team: 'acme', id, name: `plant ${id}`, tag: id % 2 ? 'tropical' : null })));
    await plants.insert({ team: 'rival', id: 5, name: 'not yours', tag: null });
  };
  /** The state a 4xx must leave untouched: every plant of every team, and the stores. */
  const snapshot = async () =>
    JSON.stringify([
      await t.dataSource.getRepository(Plant).find({ order: { team: 'ASC', id: 'ASC' } }),
      await t.dataSource.getRepository(Store).find({ order: { code: 'ASC' } }),
    ]);

  beforeAll(async () => {
    t = await createTestApp();
    token = await t.tokenFor('acme');
    await importStores(
      t,
      storesCsv([
        { code: 'S1', name: 'Chelsea', lat: 40.7506, lng: -73.9973 },
        { code: 'S2', name: 'Garment', lat: 40.7547, lng: -73.9934, zip: '10018' },
      ]),
    );
    await seedPlants();
  });
  afterAll(async () => {
    // The counts of what was tried, for the issue's notes.
    console.info(`fuzz ${engine}: ${JSON.stringify(statuses)}`);
    await t.close();
  });

  /** One generated request: the properties shared by every operation. */
  const check = async (operation: string, send: () => Promise<{ status: number }>, onSuccess: (before: string) => Promise<void>) => {
    const before = await snapshot();
    const res = await send(); // t.http has checked the response against the document
    (statuses[operation] ??= {})[res.status] = (statuses[operation][res.status] ?? 0) + 1;
    expect(res.status).toBeLessThan(500);
    if (res.status >= 400) expect(await snapshot()).toBe(before);
    else await onSuccess(before);
  };
  /** What a successful read must leave: the database exactly as it was. */
  const unchanged = async (before: string) => expect(await snapshot()).toBe(before);
  const property = (arbitrary: fc.Arbitrary<string>, run: (input: string) => Promise<void>) =>
    fc.assert(fc.asyncProperty(arbitrary, run), { numRuns: RUNS, seed: SEED, endOnFailure: true });
  const post = (path: string, text: string) => t.http.post(path).set(bearer(token)).set('Content-Type', 'application/json').send(text);

  it('POST /plants', async () => {
    await property(plantBody, (text) =>
      check(
        'POST /plants',
        () => post('/plants', text),
        async () => {
          // A 201 wrote exactly one plant, for the caller's team; then back to the seed.
          const after = await t.dataSource.getRepository(Plant).count();
          expect(after).toBe(6);
          await seedPlants();
        },
      ),
    );
  });

  it('POST /locations/nearest', async () => {
    await property(nearestBody, (text) => check('POST /locations/nearest', () => post('/locations/nearest', text), unchanged));
  });

  it('DELETE /plants/{id}', async () => {
    await property(pathSegment, (segment) =>
      check(
        'DELETE /plants/{id}',
        () => t.http.delete(`/plants/${segment}`).set(bearer(token)),
        async () => {
          // A 204 removed one plant of the caller's team and nothing else; then back to the seed.
          await expect(t.dataSource.getRepository(Plant).count({ where: { team: 'acme' } })).resolves.toBe(3);
          await expect(t.dataSource.getRepository(Plant).count({ where: { team: 'rival' } })).resolves.toBe(1);
          await seedPlants();
        },
      ),
    );
  });

  // Found by FUZZ_SEED=7 FUZZ_RUNS=2500: an object nested ~2,700 levels deep (still under 16 KiB) was a 500.
  it.each([
    ['/plants', 'objects', `{"name":"x","a":${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}}`],
    ['/locations/nearest', 'objects', `{"customer_address":{"zip":"10001"},"a":${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}}`],
    ['/plants', 'arrays', `{"name":"x","a":${'['.repeat(5000)}${']'.repeat(5000)}}`],
  ])('answers POST %s with deeply nested %s with 400 and writes nothing', async (path, _, text) => {
    const before = await snapshot();
    const res = await post(path, text);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message: 'request body is nested too deeply (at most 32 levels)' });
    expect(await snapshot()).toBe(before);
  });

  it('GET /plants', async () => {
    await property(query, (q) => check('GET /plants', () => t.http.get(`/plants${q ? `?${q}` : ''}`).set(bearer(token)), unchanged));
  });
});
