import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { QueryFailedError, type QueryRunner } from 'typeorm';
import type { BetterSqlite3Driver } from 'typeorm/driver/better-sqlite3/BetterSqlite3Driver.js';
import { isDatabaseUnavailableError } from '../../src/database/database-errors.js';
import { TRANSACTION_WAIT_MS } from '../../src/database/sqlite-transactions.js';
import { Plant } from '../../src/plants/plant.entity.js';
import { PlantsModule } from '../../src/plants/plants.module.js';
import { PlantsService } from '../../src/plants/plants.service.js';
import { StoreImportService } from '../../src/stores/store-import.service.js';
import { Store } from '../../src/stores/store.entity.js';
import { StoresModule } from '../../src/stores/stores.module.js';
import { storesCsv } from '../support/stores.js';
import { engine } from '../support/test-app.js';
import { newMediumContext, type MediumContext } from './medium.factory.js';

/** Lets every other piece of work that is ready run, as the awaits of a real transaction do. */
const yieldTurns = async (turns = 50) => {
  for (let i = 0; i < turns; i++) await nextTurn();
};

class Rollback extends Error {}

/**
 * A transaction is isolated from the other requests of the process on both engines.
 * On the embedded SQLite database every request shares one connection (sqlite-transactions.ts
 * says how they take turns); on MySQL each transaction has a pooled connection of its own.
 */
describe('transactions are isolated from concurrent requests', () => {
  let ctx: MediumContext;
  let plants: PlantsService;
  const plantNames = async (team: string) => (await ctx.dataSource.getRepository(Plant).find({ where: { team }, order: { id: 'ASC' } })).map((p) => p.name);

  beforeAll(async () => {
    ctx = await newMediumContext({ module: class TransactionsUnderTest {}, imports: [PlantsModule, StoresModule] });
    plants = ctx.module.get(PlantsService);
  });
  afterAll(() => ctx.close());
  beforeEach(() => ctx.dataSource.getRepository(Plant).clear());

  it("a rollback keeps another request's write that was acknowledged while the transaction was open", async () => {
    let other: Promise<Plant> | undefined;
    const rolledBack = ctx.dataSource.transaction(async (manager) => {
      await manager.insert(Plant, { team: 'acme', id: 100, name: 'undone', tag: null });
      other = plants.create('acme', { id: 7, name: 'kept' });
      await yieldTurns();
      throw new Rollback();
    });
    await expect(rolledBack).rejects.toBeInstanceOf(Rollback);
    await expect(other).resolves.toMatchObject({ id: 7, name: 'kept' });
    await expect(plantNames('acme')).resolves.toEqual(['kept']);
  });

  it('a read outside the transaction never sees its uncommitted rows', async () => {
    let seen: Promise<number> | undefined;
    const rolledBack = ctx.dataSource.transaction(async (manager) => {
      await manager.insert(Plant, { team: 'acme', id: 1, name: 'uncommitted', tag: null });
      seen = ctx.dataSource.getRepository(Plant).countBy({ team: 'acme' });
      await yieldTurns();
      throw new Rollback();
    });
    await expect(rolledBack).rejects.toBeInstanceOf(Rollback);
    await expect(seen).resolves.toBe(0);
  });

  it('a read outside the transaction answers from the last commit without waiting for it to end', async () => {
    await plants.create('acme', { id: 1, name: 'committed' });
    let seen: string[] | undefined;
    await ctx.dataSource.transaction(async (manager) => {
      await manager.insert(Plant, { team: 'acme', id: 2, name: 'uncommitted', tag: null });
      // Awaited inside the transaction, so the order does not hang on how fast the machine is:
      // a read that waited for the commit would never answer, and the race says so.
      seen = await Promise.race([
        plantNames('acme'),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the read waited for the transaction to end')), 10_000).unref()),
      ]);
    });
    expect(seen).toEqual(['committed']);
    await expect(plantNames('acme')).resolves.toEqual(['committed', 'uncommitted']);
  }, 20_000);

  it("a commit does not publish another transaction's work, which it rolls back itself", async () => {
    let second: Promise<unknown> | undefined;
    await ctx.dataSource.transaction(async (manager) => {
      await manager.insert(Plant, { team: 'acme', id: 1, name: 'committed', tag: null });
      second = ctx.dataSource.transaction(async (other) => {
        await other.insert(Plant, { team: 'acme', id: 2, name: 'half-done', tag: null });
        await yieldTurns();
        throw new Rollback();
      });
      await yieldTurns();
    });
    await expect(second).rejects.toBeInstanceOf(Rollback);
    await expect(plantNames('acme')).resolves.toEqual(['committed']);
  });

  it('a store import that rolls back (its file changed between the passes) keeps the plants created meanwhile', async () => {
    const imports = ctx.module.get(StoreImportService);
    const stores = ctx.dataSource.getRepository(Store);
    const before = await stores.count();
    const many = (n: number, state = 'NY') => Array.from({ length: n }, (_, i) => ({ code: `T${String(i).padStart(4, '0')}`, name: `Store ${i}`, state }));
    const valid = storesCsv(many(1200));
    const changed = storesCsv([...many(1199), { code: 'T1199', name: 'now bad', state: 'XX' }]);
    const creates: Array<Promise<Plant>> = [];
    let pass = 0;
    const open = () => {
      pass++;
      if (pass === 1) return Readable.from([valid]);
      // The second pass writes in chunks, in the import's transaction; plants are created between them.
      const lines = changed.split('\n');
      return Readable.from(
        (async function* () {
          for (let i = 0; i < lines.length; i += 100) {
            if (i > 0 && i % 500 === 0) creates.push(plants.create('acme', { name: `during ${i}` }));
            yield lines.slice(i, i + 100).join('\n') + (i + 100 < lines.length ? '\n' : '');
            await yieldTurns(5);
          }
        })(),
      );
    };
    await expect(imports.import(open)).rejects.toThrow('changed between the passes');
    const created = await Promise.all(creates);
    expect(created.length).toBeGreaterThanOrEqual(2);
    await expect(plantNames('acme')).resolves.toEqual(created.map((p) => p.name));
    await expect(stores.count()).resolves.toBe(before);
  });

  it('concurrent transactions each commit their own rows, none lost', async () => {
    const writers = Array.from({ length: 20 }, (_, w) =>
      ctx.dataSource.transaction(async (manager) => {
        for (let i = 0; i < 5; i++) {
          await manager.insert(Plant, { team: 'acme', id: w * 10 + i + 1, name: `w${w}-${i}`, tag: null });
          await nextTurn();
        }
      }),
    );
    const results = await Promise.allSettled(writers);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    await expect(ctx.dataSource.getRepository(Plant).countBy({ team: 'acme' })).resolves.toBe(100);
  });

  if (engine === 'sqlite') {
    it(`a write that waits ${TRANSACTION_WAIT_MS} ms for another transaction fails as the database being busy (a 503)`, async () => {
      let waited: Promise<unknown> | undefined;
      let settled = false;
      await ctx.dataSource.transaction(async () => {
        waited = plants
          .create('acme', { id: 1, name: 'late' })
          .then(
            () => 'answered',
            (error: unknown) => error,
          )
          .finally(() => (settled = true));
        // Not a failure at once: with everything else that was ready run, the write still waits.
        await yieldTurns();
        expect(settled).toBe(false);
        // This transaction holds on until the write gives up by itself, however long its wait takes
        // on this machine (the test's timeout bounds a hang): it is not let go to end the wait.
        await waited;
      });
      const error = await waited;
      expect(isDatabaseUnavailableError(error)).toBe(true);
      // The lock is free again for everyone.
      await expect(ctx.dataSource.getRepository(Plant).countBy({ team: 'acme' })).resolves.toBe(0);
    }, 20_000);

    /** The one better-sqlite3 connection every runner shares. */
    const connection = () => (ctx.dataSource.driver as BetterSqlite3Driver).databaseConnection as { inTransaction: boolean };
    const insertPlant = (id: number, name: string) => ctx.dataSource.transaction((manager) => manager.insert(Plant, { team: 'acme', id, name, tag: null }));

    it.each<[string, () => { begun: Promise<unknown>; done(): Promise<void> }]>([
      [
        // TypeORM's everyday path: on the failure it rolls back (a lone ROLLBACK by then) and releases the runner.
        'run by dataSource.transaction()',
        () => ({ begun: insertPlant(100, 'never begun'), done: () => Promise.resolve() }),
      ],
      [
        // As TypeORM's documentation writes it, startTransaction() before the try: a runner whose BEGIN
        // failed is neither rolled back nor released by its caller, so only startTransaction() itself
        // can give the turn back.
        'begun by hand, neither rolled back nor released',
        () => {
          const runner = ctx.dataSource.createQueryRunner();
          return { begun: runner.startTransaction(), done: () => runner.release() };
        },
      ],
    ])(
      'a transaction whose BEGIN fails (%s) gives its turn back: the statement and the transaction waiting behind it run, and a later one commits',
      async (_, begin) => {
        // Another path put the connection inside a transaction outside the turns (a lone BEGIN), so SQLite refuses the next BEGIN.
        await ctx.dataSource.query('BEGIN');
        expect(connection().inTransaction).toBe(true);
        // It takes the turn at once…
        const failing = begin();
        try {
          // …so these two wait for it: the other path ending its transaction, then a transaction.
          const strayEnded = ctx.dataSource.query('ROLLBACK');
          const waiting = insertPlant(1, 'waited');
          await expect(failing.begun).rejects.toThrow('cannot start a transaction within a transaction');
          await expect(strayEnded).resolves.toBeDefined();
          await expect(waiting).resolves.toBeDefined();
          await insertPlant(2, 'later');
          await expect(plantNames('acme')).resolves.toEqual(['waited', 'later']);
          expect(connection().inTransaction).toBe(false);
        } finally {
          await failing.done();
        }
      },
      20_000,
    );

    it.each<[string, (runner: QueryRunner) => Promise<void>]>([
      ['without a commit or a rollback', () => Promise.resolve()],
      [
        'after one of its statements failed',
        async (runner: QueryRunner) => {
          await expect(runner.manager.insert(Plant, { team: 'acme', id: 1, name: 'same key', tag: null })).rejects.toBeInstanceOf(QueryFailedError);
        },
      ],
    ])(
      'a runner released %s while its transaction is open gives its turn back: its writes are undone, and the transaction waiting behind it commits',
      async (_, more) => {
        const abandoned = ctx.dataSource.createQueryRunner();
        await abandoned.startTransaction();
        await abandoned.manager.insert(Plant, { team: 'acme', id: 1, name: 'abandoned', tag: null });
        await more(abandoned);
        const waiting = insertPlant(2, 'next');
        await abandoned.release();
        await expect(waiting).resolves.toBeDefined();
        await expect(plantNames('acme')).resolves.toEqual(['next']);
        expect(connection().inTransaction).toBe(false);
        await insertPlant(3, 'later');
        await expect(plantNames('acme')).resolves.toEqual(['next', 'later']);
      },
      20_000,
    );
  }
});
