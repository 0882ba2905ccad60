import { Readable } from 'node:stream';
import { jest } from '@jest/globals';
import { STORE_CSV_REQUIRED_COLUMNS, type StoreRow } from '../../src/stores/store-csv.js';
import { StoreAdminService } from '../../src/stores/store-admin.service.js';
import { StoreCatalog, type CatalogWrite, type CatalogWriter } from '../../src/stores/store-catalog.js';
import { ZipGeocoder } from '../../src/geo/zip-geocoder.js';
import { Pacer } from '../../src/stores/pacer.js';
import { StoreCsvReader, StoreImportError, type ImportProgress } from '../../src/stores/store-csv-reader.js';
import { ImportPlanner, StoreCatalogMovedError } from '../../src/stores/store-import-plan.js';
import type { ImportOptions } from '../../src/stores/store-import-options.js';
import { StoreImportService } from '../../src/stores/store-import.service.js';
import { Store } from '../../src/stores/store.entity.js';
import { StoresModule } from '../../src/stores/stores.module.js';
import { storesCsv, WEEK_OPEN, type StoreInput } from '../support/stores.js';
import { newMediumContext, type MediumContext } from './medium.factory.js';
import { exposedCollector } from '../support/exposed-gc.js';

const HEADER = STORE_CSV_REQUIRED_COLUMNS.join(',');
// A full garbage collection on demand, without starting the test runner with --expose-gc.
const collectGarbage = exposedCollector();
/** The summary of an import that reads no row and changes nothing. */
const NOTHING = {
  read: 0,
  inserted: 0,
  updated: 0,
  unchanged: 0,
  pruned: 0,
  warnings: [],
  warningCount: 0,
  changes: [],
  changesTruncated: false,
  removalsNeedConfirmation: false,
  problems: [],
  problemCount: 0,
};
/** A CSV line of a valid store, for files written by hand. */
const line = (code: string, name = `Store ${code}`) =>
  `${code},${name},1 Test Street,New York,NY,10001,,,${Object.values(WEEK_OPEN)
    .map((h) => `"${h}"`)
    .join(',')}`;
const many = (count: number, from = 0) =>
  Array.from({ length: count }, (_, i): StoreInput => ({ code: `C${String(from + i).padStart(5, '0')}`, name: `Store ${from + i}` }));

describe(StoreImportService.name, () => {
  let ctx: MediumContext;
  let sut: StoreImportService;
  const stores = () => ctx.dataSource.getRepository(Store).find({ order: { code: 'ASC' } });
  const version = async () => Number((await ctx.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  const run = (csv: string, options?: ImportOptions) => sut.import(() => Readable.from([csv]), options);
  /** Imports, expects a refusal and gives it. */
  const refusal = async (csv: string, options?: ImportOptions) => {
    const error: unknown = await run(csv, options).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreImportError);
    return error as StoreImportError;
  };
  /** Imports, expects a refusal and gives its problems. */
  const problems = async (csv: string, options?: ImportOptions) => (await refusal(csv, options)).problems;
  /** What no refused or dry-run import may change: the stores and the catalogue version. */
  const untouched = async () => ({ stores: await stores(), version: await version() });

  beforeAll(async () => {
    ctx = await newMediumContext(StoresModule);
    sut = ctx.module.get(StoreImportService);
  });
  afterAll(() => ctx.close());
  beforeEach(async () => {
    await ctx.dataSource.getRepository(Store).clear();
    await run(storesCsv([{ code: 'KEEP', name: 'Kept store' }]));
  });

  describe('validation', () => {
    it('reports every problem of every row with its line and column, in file order, and writes nothing', async () => {
      const before = await untouched();
      const csv = [HEADER, line('OK1'), line('BAD1').replace(',NY,10001,', ',XX,1234,'), line('OK2'), 'SHORT,row,only', line('OK1')].join('\n');
      await expect(problems(csv)).resolves.toEqual([
        { line: 3, column: 'state', code: 'bad_state', reason: '"XX" is not a US state or territory code' },
        { line: 3, column: 'zip', code: 'bad_zip', reason: '"1234" is not a ZIP code like 12345 or 12345-6789' },
        { line: 5, code: 'field_count', reason: `expected ${STORE_CSV_REQUIRED_COLUMNS.length} fields, found 3` },
        { line: 6, column: 'code', code: 'duplicate_code', reason: '"OK1" already appears on line 2' },
      ]);
      await expect(untouched()).resolves.toEqual(before);
    });

    it.each([
      ['LF', '\n'],
      ['CRLF', '\r\n'],
    ])('counts blank lines in the line numbers (%s line ends, a byte order mark)', async (_, eol) => {
      const csv = '\uFEFF' + [HEADER, '', line('A'), '', '', line('B').replace(',NY,', ',ZZ,'), ''].join(eol);
      await expect(problems(csv)).resolves.toEqual([{ line: 6, column: 'state', code: 'bad_state', reason: '"ZZ" is not a US state or territory code' }]);
    });

    it.each([
      ['LF', '\n'],
      ['CRLF', '\r\n'],
    ])('counts each line of a quoted field that spans lines and reports a record at its first line (%s line ends)', async (_, eol) => {
      const csv = [
        HEADER,
        line('ML', `"Two${eol}lines"`), // lines 2-3
        line('BAD').replace(',New York,', ',,'), // 4
        line('ML2', `"Three${eol}line${eol}name"`).replace(',NY,', ',ZZ,'), // 5-7
        '', // 8
        line('ML'), // 9
        line('ML3', `"Two${eol}lines"`).replace(',NY,', ',ZZ,'), // 10-11
        line('LAST', `"Four${eol}${eol}line${eol}name"`), // 12-15
        line('LAST').replace(',NY,', ',ZZ,'), // 16
        line('ML3'), // 17
        line('LAST', `"a${eol}b"`), // 18-19
        '',
      ].join(eol);
      await expect(problems(csv)).resolves.toEqual([
        { line: 4, column: 'city', code: 'empty', reason: 'is empty' },
        { line: 5, column: 'state', code: 'bad_state', reason: '"ZZ" is not a US state or territory code' },
        { line: 9, column: 'code', code: 'duplicate_code', reason: '"ML" already appears on line 2' },
        { line: 10, column: 'state', code: 'bad_state', reason: '"ZZ" is not a US state or territory code' },
        { line: 16, column: 'state', code: 'bad_state', reason: '"ZZ" is not a US state or territory code' },
        { line: 18, column: 'code', code: 'duplicate_code', reason: '"LAST" already appears on line 12' },
      ]);
    });

    it('writes nothing when the only bad row comes after the first chunks of the file', async () => {
      const before = await untouched();
      await expect(problems(storesCsv([...many(1200), { code: 'LAST', name: 'last', state: 'XX' }]))).resolves.toEqual([
        { line: 1202, column: 'state', code: 'bad_state', reason: '"XX" is not a US state or territory code' },
      ]);
      await expect(untouched()).resolves.toEqual(before);
    });

    it('refuses a file that changes between its passes, writing nothing', async () => {
      const before = await untouched();
      const valid = storesCsv(many(1200));
      const changed = storesCsv([...many(1100), { code: 'C01100', name: 'now bad', state: 'XX' }, ...many(99, 1101)]);
      const opened: string[] = [];
      const open = () => {
        opened.push(opened.length === 0 ? valid : changed);
        return Readable.from([opened[opened.length - 1]]);
      };
      await expect(sut.import(open)).rejects.toThrow('line 1102 changed between the passes over the file');
      expect(opened).toHaveLength(2);
      await expect(untouched()).resolves.toEqual(before);
    });

    it('takes the header in any case and spacing; a header alone imports nothing', async () => {
      const before = await untouched();
      const header = STORE_CSV_REQUIRED_COLUMNS.map((column) => ` ${column.toUpperCase()} `).join(',');
      await expect(run(`${header}\n`)).resolves.toEqual({ ...NOTHING, version: before.version, catalogSize: 1 });
      await expect(untouched()).resolves.toEqual(before);
    });

    it('lists the problems as data in a dry run with listProblems (the first 50, the count exact); an apply refuses all the same', async () => {
      const before = await untouched();
      const rows = [...many(3), ...Array.from({ length: 60 }, (_, i): StoreInput => ({ code: `BAD${i}`, name: 'bad', state: 'XX' }))];
      const checked = await run(storesCsv(rows), { dryRun: true, listProblems: true });
      expect(checked).toEqual({ ...NOTHING, read: 63, version: before.version, catalogSize: 1, problems: expect.any(Array), problemCount: 60 });
      expect(checked.problems).toHaveLength(50);
      expect(checked.problems[0]).toEqual({ line: 5, column: 'state', code: 'bad_state', reason: '"XX" is not a US state or territory code' });
      expect(checked.problems[49].line).toBe(54);
      await expect(run(`${HEADER.replace('zip', 'postcode')}\n`, { dryRun: true, listProblems: true })).resolves.toMatchObject({
        read: 0,
        problems: [{ line: 1, code: 'bad_header' }],
        problemCount: 1,
      });
      const applied = await refusal(storesCsv(rows), { listProblems: true });
      expect(applied.problemCount).toBe(60);
      expect(applied.problems).toEqual(checked.problems);
      await expect(untouched()).resolves.toEqual(before);
    });

    it('refuses another header and an empty file at line 1', async () => {
      const before = await untouched();
      await expect(problems(`${HEADER.replace('zip', 'postcode')}\n${line('A')}\n`)).resolves.toEqual([
        {
          line: 1,
          code: 'bad_header',
          reason: `the header must be exactly: ${HEADER} (optionally followed by any of ,time_zone,special_hours,temporarily_closed,phone,website,email,services, in this order)`,
        },
      ]);
      await expect(problems('')).resolves.toEqual([
        {
          line: 1,
          code: 'bad_header',
          reason: `the file is empty; the header must be exactly: ${HEADER} (optionally followed by any of ,time_zone,special_hours,temporarily_closed,phone,website,email,services, in this order)`,
        },
      ]);
      await expect(untouched()).resolves.toEqual(before);
    });
  });

  describe('warnings', () => {
    it('lists each row far from its ZIP by line, in file order, and imports the rows at their own coordinates', async () => {
      const summary = await run(
        storesCsv([
          { code: 'NEAR', name: 'Near' },
          { code: 'LA', name: 'Los Angeles', zip: '10001', lat: 34.05, lng: -118.24 },
          { code: 'NEAR2', name: 'Near too', lat: 40.75, lng: -73.99 },
          { code: 'MIAMI', name: 'Miami', zip: '10001-1234', lat: 25.7617, lng: -80.1918 },
        ]),
      );
      expect(summary).toMatchObject({ read: 4, inserted: 4 });
      expect(summary.warnings).toEqual([
        { line: 3, column: 'lat', code: 'far_from_zip', reason: 'is more than 100 miles from ZIP 10001' },
        { line: 5, column: 'lat', code: 'far_from_zip', reason: 'is more than 100 miles from ZIP 10001' },
      ]);
      expect(summary.warningCount).toBe(2);
      const stored = await stores();
      expect(stored.find((s) => s.code === 'LA')).toMatchObject({ lat: 34.05, lng: -118.24, zip: '10001' });
      expect(stored.find((s) => s.code === 'MIAMI')).toMatchObject({ lat: 25.7617, lng: -80.1918, zip: '10001-1234' });
    });

    it('keeps the first 50 and counts all of them, so that a file of far rows does not fill the memory with warnings', async () => {
      const far = Array.from({ length: 70 }, (_, i) => ({ code: `FAR-${i}`, name: `Far ${i}`, zip: '10001', lat: 34.05, lng: -118.24 }));
      const summary = await run(storesCsv([{ code: 'NEAR', name: 'Near' }, ...far]));
      expect(summary).toMatchObject({ read: 71, inserted: 71, warningCount: 70 });
      expect(summary.warnings.map((w) => w.line)).toEqual(Array.from({ length: 50 }, (_, i) => i + 3));
      expect((await stores()).filter((s) => s.code.startsWith('FAR-') && s.lat === 34.05)).toHaveLength(70);
    });
  });

  describe('dry run', () => {
    it('gives the same summary and warnings as the import itself, prune included, and writes nothing', async () => {
      await run(
        storesCsv([
          { code: 'KEEP', name: 'Kept store' },
          { code: 'OLD', name: 'Gone from the file' },
        ]),
      );
      const csv = storesCsv([
        { code: 'KEEP', name: 'Renamed' },
        { code: 'NEW', name: 'New' },
        { code: 'FAR', name: 'Far', lat: 34.05, lng: -118.24 },
      ]);
      const before = await untouched();

      const dry = await run(csv, { dryRun: true, prune: true });
      expect(dry).toEqual({
        read: 3,
        inserted: 2,
        updated: 1,
        unchanged: 0,
        pruned: 1,
        warnings: [{ line: 4, column: 'lat', code: 'far_from_zip', reason: 'is more than 100 miles from ZIP 10001' }],
        warningCount: 1,
        version: before.version,
        catalogSize: 2,
        changes: [
          { change: 'update', line: 2, code: 'KEEP', name: 'Renamed', fields: [{ field: 'name', old: 'Kept store', new: 'Renamed' }] },
          { change: 'add', line: 3, code: 'NEW', name: 'New', city: 'New York', state: 'NY' },
          { change: 'add', line: 4, code: 'FAR', name: 'Far', city: 'New York', state: 'NY' },
          { change: 'remove', code: 'OLD', name: 'Gone from the file', city: 'New York', state: 'NY' },
        ],
        changesTruncated: false,
        removalsNeedConfirmation: true,
        problems: [],
        problemCount: 0,
      });
      await expect(untouched()).resolves.toEqual(before);

      // Half the catalogue goes: the apply states the number the dry run gave, and does what it listed.
      await expect(run(csv, { prune: true, expectedRemovals: 1 })).resolves.toEqual({ ...dry, version: before.version + 1 });
      await expect(stores()).resolves.toMatchObject([{ code: 'FAR' }, { code: 'KEEP', name: 'Renamed' }, { code: 'NEW' }]);
      await expect(version()).resolves.toBe(before.version + 1);
    });
    it("keeps none of the rows to write nor the ids to remove in a dry run's plan, its summary the apply's plan's", async () => {
      await run(storesCsv([{ code: 'KEEP', name: 'Kept store' }, { code: 'OLD', name: 'Gone from the file' }, ...many(3)]));
      const [old] = await ctx.dataSource.getRepository(Store).findBy({ code: 'OLD' });
      const csv = storesCsv([{ code: 'KEEP', name: 'Renamed' }, ...many(1200)]);
      const open = () => Readable.from([csv]);
      const reader = new StoreCsvReader((zip5) => ctx.module.get(ZipGeocoder).lookup(zip5));
      const planner = new ImportPlanner(reader, ctx.module.get(StoreCatalog), 50);
      const file = await reader.validate(open, new Pacer(1), new Set());
      const dry = await planner.plan(ctx.dataSource.manager, open, file, new Pacer(1), { dryRun: true, prune: true });
      const apply = await planner.plan(ctx.dataSource.manager, open, file, new Pacer(1), { prune: true });
      expect(dry.summary).toMatchObject({ read: 1201, inserted: 1197, updated: 1, unchanged: 3, pruned: 1, changesTruncated: true });
      expect(dry.summary.changes).toHaveLength(1000);
      expect(dry.summary).toEqual(apply.summary);
      expect(dry.puts).toEqual([]);
      expect(dry.removals).toEqual([]);
      expect(apply.puts).toHaveLength(1198);
      expect(apply.puts?.[0]).toMatchObject({ code: 'KEEP', name: 'Renamed' });
      expect(apply.marks).toHaveLength(1201);
      expect(dry.marks).toHaveLength(0);
      expect(apply.removals).toEqual([old.id]);
    });
    it('writes a plan of more new and changed rows than it keeps from the file again, as one that keeps them, the columns the file leaves out as stored', async () => {
      const seed = storesCsv([{ code: 'KEEP', name: 'Kept store', special: '2026-12-25=Closed' }, { code: 'OLD', name: 'Gone from the file' }, ...many(3)]);
      // One store renamed, three as they are, twenty new, OLD pruned; no special_hours column: KEEP keeps its special day.
      const csv = storesCsv([{ code: 'KEEP', name: 'Renamed' }, ...many(3), ...many(20, 3)]);
      const open = () => Readable.from([csv]);
      const reader = new StoreCsvReader((zip5) => ctx.module.get(ZipGeocoder).lookup(zip5));
      const catalog = ctx.module.get(StoreCatalog);
      const written = async (keptRowsMax?: number) => {
        await ctx.dataSource.getRepository(Store).clear();
        await run(seed);
        const planner = new ImportPlanner(reader, catalog, 50, keptRowsMax);
        const file = await reader.validate(open, new Pacer(1), new Set());
        const plan = await planner.plan(ctx.dataSource.manager, open, file, new Pacer(1), { prune: true });
        const { change } = await catalog.write('import', (write) => planner.apply(write, open, plan));
        const rows = (await stores()).map(({ id: _id, createdAt: _created, updatedAt: _updated, ...fields }) => fields);
        return { plan, change, rows };
      };
      const kept = await written();
      const reread = await written(5);
      expect(kept.plan.puts).toHaveLength(21);
      expect(reread.plan.puts).toBeUndefined();
      expect([...reread.plan.marks]).toEqual([2, 0, 0, 0, ...Array<number>(20).fill(1)]);
      expect(reread.plan.summary).toEqual({ ...kept.plan.summary, version: reread.plan.summary.version });
      expect(reread.change).toEqual({ added: 20, updated: 1, removed: 1 });
      expect(reread.change).toEqual(kept.change);
      expect(reread.rows).toEqual(kept.rows);
      expect(reread.rows.map((s) => s.code)).toEqual([...many(23).map((s) => s.code), 'KEEP']);
      expect(reread.rows.find((s) => s.code === 'KEEP')).toMatchObject({ name: 'Renamed', special_hours: '2026-12-25=Closed' });
      expect(reread.rows.find((s) => s.code === 'C00010')).toMatchObject({ special_hours: '', temporarily_closed: '' });
    });
    it('rolls back the chunks an apply already wrote from the file when a later row of it changed meanwhile', async () => {
      await ctx.dataSource.getRepository(Store).clear();
      await run(storesCsv(many(5)));
      const before = await untouched();
      const valid = storesCsv(many(1300));
      const changed = storesCsv([...many(1200), { code: 'C01200', name: 'now bad', state: 'XX' }, ...many(99, 1201)]);
      const opened: string[] = [];
      // The check and the plan read the valid file, the apply's pass (a plan of 1,295 new rows is past the 5 kept) the changed one.
      const open = () => {
        opened.push(opened.length < 2 ? valid : changed);
        return Readable.from([opened[opened.length - 1]]);
      };
      const reader = new StoreCsvReader((zip5) => ctx.module.get(ZipGeocoder).lookup(zip5));
      const catalog = ctx.module.get(StoreCatalog);
      const planner = new ImportPlanner(reader, catalog, 50, 5);
      const file = await reader.validate(open, new Pacer(1), new Set());
      const plan = await planner.plan(ctx.dataSource.manager, open, file, new Pacer(1), {});
      let chunks = 0;
      await expect(
        catalog.write('import', async (write) => {
          const put = write.put;
          (write as { put: CatalogWrite['put'] }).put = async (rows, added) => {
            chunks++;
            await put(rows, added);
          };
          await planner.apply(write, open, plan);
        }),
      ).rejects.toThrow('line 1202 changed between the passes over the file');
      expect(opened).toHaveLength(3);
      expect(chunks).toBe(2);
      await expect(untouched()).resolves.toEqual(before);
    });
  });

  describe('stored values', () => {
    it('stores fields trimmed, the state in capitals and coordinates to 6 decimals; the same file again changes nothing', async () => {
      const csv = storesCsv([{ code: ' T1 ', name: '  Spaced  ', city: ' Brooklyn ', state: 'ny', zip: '11201', lat: '40.6943214', lng: '-73.9903787' }]);
      await expect(run(csv)).resolves.toMatchObject({ inserted: 1 });
      const stored = (await stores()).find((s) => s.code === 'T1');
      expect(stored).toMatchObject({ name: 'Spaced', city: 'Brooklyn', state: 'NY', zip: '11201', lat: 40.694321, lng: -73.990379 });

      const before = await untouched();
      await expect(run(csv)).resolves.toMatchObject({ read: 1, inserted: 0, updated: 0, unchanged: 1 });
      await expect(untouched()).resolves.toEqual(before);
    });
  });
});

/**
 * Plan, then apply: the plan reads outside any transaction, so a catalogue write can commit
 * between the plan and its apply. Such a write is made here at that very moment (by wrapping the
 * door, StoreCatalog.write: when the import comes to it, an admin write commits first), with
 * change events on, so that the outbox shows every commit.
 */
describe(`${StoreImportService.name}: plan, then apply`, () => {
  let ctx: MediumContext;
  let sut: StoreImportService;
  let admin: StoreAdminService;
  let catalog: StoreCatalog;
  const stores = () => ctx.dataSource.getRepository(Store).find({ order: { code: 'ASC' } });
  const version = async () => Number((await ctx.dataSource.query('SELECT version FROM store_catalog WHERE id = 1'))[0].version);
  /** The change events written, oldest first: `data` of each. */
  const events = async () =>
    (await ctx.dataSource.query<Array<{ payload: string }>>('SELECT payload FROM event_outbox ORDER BY id')).map(
      (row) => (JSON.parse(row.payload) as { data: unknown }).data,
    );
  const fields = (name: string) => ({ name, address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN });
  /** Plans made by an import: each plan ends with the `write` phase's last report. */
  let plans = 0;
  const onProgress = (p: ImportProgress) => (plans += p.phase === 'write' && Number.isNaN(p.bytes) ? 1 : 0);
  const run = (csv: string, options?: ImportOptions) => sut.import(() => Readable.from([csv]), { onProgress, ...options });
  /** The next `times` imports that reach the door find that `edit` committed just before (an admin write of another store). */
  const moveBeforeApply = (times: number, edit: (time: number) => Promise<unknown>) => {
    const write = catalog.write.bind(catalog);
    let time = 0;
    jest
      .spyOn(catalog, 'write')
      .mockImplementation(async (writer: CatalogWriter, work: (w: CatalogWrite) => Promise<unknown>, committed?: (value: unknown) => void) => {
        if (writer === 'import' && time < times) await edit(time++);
        return write(writer, work, committed);
      });
  };
  /**
   * Imports `csv` (more than CHANGE_LOG_MAX_STORES new stores: an index reloads every store on
   * it) and gives, for each listener call of the catalogue, whether any row written so far was
   * still held then (after a full garbage collection). The rows are watched through weak
   * references taken as `put` gets them, which keep nothing alive.
   */
  const rowsHeldByListeners = async (csv: string, moves = 0) => {
    const put: Array<WeakRef<object>> = [];
    const write = catalog.write.bind(catalog);
    let time = 0;
    let writing: CatalogWriter | undefined;
    const spy = jest
      .spyOn(catalog, 'write')
      .mockImplementation(async (writer: CatalogWriter, work: (w: CatalogWrite) => Promise<unknown>, committed?: (value: unknown) => void) => {
        // As moveBeforeApply: the first `moves` applies find an admin write committed just before.
        if (writer === 'import' && time < moves) await admin.upsert(`MOVE${time}`, fields(`Moved ${time++}`));
        // Only the import's rows and the import's listener calls are watched: an admin write's one
        // row was once still within reach of the task that wrote it when its own listener ran (a
        // CI run on SQLite), which is not what this is about.
        writing = writer;
        if (writer !== 'import') return write(writer, work, committed);
        return write(
          writer,
          (w) => {
            const { put: real } = w;
            return work(
              Object.assign(Object.create(w) as CatalogWrite, {
                put: (rows: readonly StoreRow[], added: number) => {
                  if (rows.length > 0) put.push(new WeakRef(rows), new WeakRef(rows[0]), new WeakRef(rows[rows.length - 1]));
                  return real(rows, added);
                },
              }),
            );
          },
          committed,
        );
      });
    const held: boolean[] = [];
    listening = async () => {
      if (writing !== 'import') return;
      // A weak reference holds its target until the task that made it ends (sqlite's writes run in one).
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      held.push(put.some((ref) => ref.deref() !== undefined));
    };
    try {
      await run(csv);
    } finally {
      listening = undefined;
      spy.mockRestore();
    }
    expect(put.length).toBeGreaterThan(0);
    return held;
  };
  let listening: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ctx = await newMediumContext(StoresModule, { EVENTS_NATS_URL: 'nats://127.0.0.1:4222' });
    sut = ctx.module.get(StoreImportService);
    admin = ctx.module.get(StoreAdminService);
    catalog = ctx.module.get(StoreCatalog);
    catalog.onChange(async () => await listening?.());
  });
  afterAll(() => ctx.close());
  beforeEach(async () => {
    jest.restoreAllMocks();
    await ctx.dataSource.getRepository(Store).clear();
    await run(storesCsv(many(3)));
    await ctx.dataSource.query('DELETE FROM event_outbox');
    plans = 0;
  });
  afterEach(() => jest.restoreAllMocks());

  it('refuses an apply with ifVersions when a write committed after its plan, and writes nothing of the file', async () => {
    const v0 = await version();
    moveBeforeApply(1, () => admin.upsert('OTHER', fields('Edited meanwhile')));
    const error = await run(storesCsv([...many(2), { code: 'NEW', name: 'New' }]), { ifVersions: [v0], prune: true, expectedRemovals: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreCatalogMovedError);
    expect(error).toMatchObject({ expected: [v0], current: v0 + 1 });
    expect(plans).toBe(1);
    expect((await stores()).map((s) => s.code)).toEqual(['C00000', 'C00001', 'C00002', 'OTHER']);
    await expect(version()).resolves.toBe(v0 + 1);
    await expect(events()).resolves.toEqual([{ added: 1, updated: 0, removed: 0 }]);
  });

  it('plans again without ifVersions, and applies what the new plan found', async () => {
    const v0 = await version();
    // The write in between does part of what the file does: the second plan no longer counts it.
    moveBeforeApply(1, () => admin.upsert('C00001', fields('Renamed')));
    const file = storesCsv([...many(1), { code: 'C00001', name: 'Renamed' }, { code: 'NEW', name: 'New' }]);
    const summary = await run(file, { prune: true, expectedRemovals: 1 });
    expect(plans).toBe(2);
    expect(summary).toMatchObject({ read: 3, inserted: 1, updated: 0, unchanged: 2, pruned: 1, version: v0 + 2, catalogSize: 3 });
    expect(summary.changes.map((c) => [c.change, c.code])).toEqual([
      ['add', 'NEW'],
      ['remove', 'C00002'],
    ]);
    expect((await stores()).map((s) => [s.code, s.name])).toEqual([
      ['C00000', 'Store 0'],
      ['C00001', 'Renamed'],
      ['NEW', 'New'],
    ]);
    await expect(version()).resolves.toBe(v0 + 2);
    await expect(events()).resolves.toEqual([
      { added: 0, updated: 1, removed: 0 },
      { added: 1, updated: 0, removed: 1 },
    ]);
  });

  it('plans inside the write itself once the catalogue moved at each of three plans, and cannot miss a change then', async () => {
    const v0 = await version();
    moveBeforeApply(3, (time) => admin.upsert(`MOVE${time}`, fields(`Moved ${time}`)));
    const summary = await run(storesCsv([...many(3), { code: 'NEW', name: 'New' }]));
    expect(plans).toBe(4);
    expect(summary).toMatchObject({ inserted: 1, unchanged: 3, pruned: 0, catalogSize: 6, version: v0 + 4 });
    expect((await stores()).map((s) => s.code)).toEqual(['C00000', 'C00001', 'C00002', 'MOVE0', 'MOVE1', 'MOVE2', 'NEW']);
    await expect(version()).resolves.toBe(v0 + 4);
    expect(await events()).toHaveLength(4);
  });

  it("holds none of the apply's rows by the time the catalogue's listeners run (the index's reload), planned before the write or inside it", async () => {
    await expect(rowsHeldByListeners(storesCsv(many(1200, 100)))).resolves.toEqual([false]);
    // Three admin writes overtake the import's plans, then the import plans inside its write.
    await expect(rowsHeldByListeners(storesCsv(many(1200, 2000)), 3)).resolves.toEqual([false]);
    expect(plans).toBe(5);
    await expect(ctx.dataSource.getRepository(Store).count()).resolves.toBe(3 + 1200 + 3 + 1200);
  });

  it('writes nothing and bumps nothing when the file changes nothing: the rows, their times, the version and the outbox stay', async () => {
    const before = { stores: await stores(), version: await version() };
    const summary = await run(storesCsv(many(3)), { prune: true });
    expect(summary).toMatchObject({ read: 3, inserted: 0, updated: 0, unchanged: 3, pruned: 0, version: before.version, changes: [] });
    await expect(stores()).resolves.toEqual(before.stores);
    await expect(version()).resolves.toBe(before.version);
    await expect(events()).resolves.toEqual([]);
  });
});
