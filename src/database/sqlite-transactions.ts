import { QueryFailedError, QueryResult, type DataSource, type ReplicationMode } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import { BetterSqlite3QueryRunner } from 'typeorm/driver/better-sqlite3/BetterSqlite3QueryRunner.js';
import type { BetterSqlite3Driver } from 'typeorm/driver/better-sqlite3/BetterSqlite3Driver.js';

/** How long a statement waits for another request's transaction, as busy_timeout waits for another process. */
export const TRANSACTION_WAIT_MS = 5000;

/** A statement waited TRANSACTION_WAIT_MS for another transaction: a 503, like SQLITE_BUSY (database-errors.ts). */
export class TransactionWaitTimeout extends Error {
  readonly code = 'SQLITE_BUSY';

  constructor() {
    super(`the database was busy with another transaction for ${TRANSACTION_WAIT_MS} ms`);
  }
}

/**
 * Who may use the one connection: any number of lone statements at once (each runs alone
 * inside better-sqlite3's synchronous call), or one transaction, which waits for the lone
 * statements already under way to finish before its BEGIN. A read-write lock whose shared
 * side is taken without a promise: a mutex around every statement cost GET /plants 12 % of
 * its req/s in `npm run bench:sqlite`.
 */
class Turns {
  private holder: object | null = null;
  private underway = 0;
  private drained: (() => void) | null = null;
  private waiting: Array<() => void> = [];

  get taken(): boolean {
    return this.holder !== null;
  }

  isHeldBy(runner: object): boolean {
    return this.holder === runner;
  }

  /** Runs a statement outside any transaction, after the open one (if any) has ended. */
  async alone<T>(statement: () => Promise<T>): Promise<T> {
    if (this.holder) {
      const deadline = Date.now() + TRANSACTION_WAIT_MS;
      // Checked again after each wake-up, in the same step as the count below: another may have taken it first.
      while (this.holder) await this.given(deadline);
    }
    this.underway++;
    try {
      return await statement();
    } finally {
      if (--this.underway === 0 && this.drained) {
        this.drained();
        this.drained = null;
      }
    }
  }

  async take(runner: object): Promise<void> {
    const deadline = Date.now() + TRANSACTION_WAIT_MS;
    while (this.holder) await this.given(deadline);
    this.holder = runner;
    if (this.underway > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  give(runner: object): void {
    if (this.holder !== runner) return;
    this.holder = null;
    // Everyone waiting tries again, in the order they came; the first transaction among them takes the next turn.
    const waiting = this.waiting;
    this.waiting = [];
    for (const wake of waiting) wake();
  }

  /** Resolves at the next give(); fails once `deadline` has passed. */
  private async given(deadline: number): Promise<void> {
    const left = deadline - Date.now();
    if (left <= 0) throw new TransactionWaitTimeout();
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      timer = setTimeout(resolve, left);
    });
    clearTimeout(timer);
  }
}

/**
 * One query runner per use, each taking its turn on the process's one SQLite connection: a
 * runner holds the connection from BEGIN until its COMMIT or ROLLBACK, and every statement of
 * any other runner waits for it, but for lone reads (SnapshotReader).
 */
class IsolatedQueryRunner extends BetterSqlite3QueryRunner {
  constructor(
    driver: BetterSqlite3Driver,
    private readonly turns: Turns,
    statements: Map<string, unknown>,
    private readonly snapshot: SnapshotReader,
  ) {
    super(driver);
    // The prepared statements stay shared as they were with one runner: a runner per use must not prepare anew.
    (this as unknown as StatementCache).stmtCache = statements;
  }

  override async query(query: string, parameters?: unknown[], useStructuredResult = false): ReturnType<BetterSqlite3QueryRunner['query']> {
    if (this.turns.isHeldBy(this)) return super.query(query, parameters, useStructuredResult);
    // While another request's transaction is open, a lone read is answered from the last commit.
    if (this.turns.taken) {
      const read = this.snapshot.read(query, parameters ?? []);
      if (read) return useStructuredResult ? Object.assign(new QueryResult(), { raw: read, records: read }) : read;
    }
    return this.turns.alone(() => super.query(query, parameters, useStructuredResult));
  }

  override async startTransaction(isolationLevel?: IsolationLevel): Promise<void> {
    if (this.transactionDepth > 0) return super.startTransaction(isolationLevel);
    await this.turns.take(this);
    try {
      await super.startTransaction(isolationLevel);
    } catch (error) {
      this.turns.give(this);
      throw error;
    }
  }

  override async commitTransaction(): Promise<void> {
    await super.commitTransaction();
    if (!this.isTransactionActive) this.turns.give(this);
  }

  override async rollbackTransaction(): Promise<void> {
    try {
      await super.rollbackTransaction();
    } finally {
      // A failed ROLLBACK still ends our turn: release() undoes what SQLite kept open.
      if (!this.isTransactionActive) this.turns.give(this);
    }
  }

  /** TypeORM releases every runner it made; one whose transaction never ended must not keep the connection. */
  override async release(): Promise<void> {
    if (this.turns.isHeldBy(this)) {
      const connection = this.driver.databaseConnection as { inTransaction: boolean; exec(sql: string): void };
      if (connection.inTransaction) connection.exec('ROLLBACK');
      this.isTransactionActive = false;
      this.transactionDepth = 0;
      this.turns.give(this);
    }
    return super.release();
  }
}

/** A statement of better-sqlite3 (the package ships no types). */
interface Statement {
  reader: boolean;
  all(...parameters: unknown[]): unknown[];
}

/**
 * A second, read-only connection to the same file: in WAL mode it reads the last committed
 * state while the main connection is inside a transaction, so reads outside transactions need
 * not wait for one (a store import holds the connection for seconds). Opened at its first use.
 */
class SnapshotReader {
  private connection: { prepare(sql: string): Statement; close(): void } | null = null;
  private readonly statements = new Map<string, Statement | null>();

  constructor(private readonly driver: BetterSqlite3Driver) {}

  /** The rows of a read-only statement, or undefined for any other statement (which then waits its turn). */
  read(query: string, parameters: unknown[]): unknown[] | undefined {
    const statement = this.statement(query);
    if (!statement) return undefined;
    const values = parameters.map((p) => (typeof p === 'boolean' ? Number(p) : p));
    try {
      return statement.all(...values);
    } catch (error) {
      throw new QueryFailedError(query, values, error as Error);
    }
  }

  close(): void {
    this.connection?.close();
    this.connection = null;
    this.statements.clear();
  }

  private statement(query: string): Statement | null {
    let statement = this.statements.get(query);
    if (statement === undefined) {
      if (!/^\s*SELECT\b/i.test(query) || this.driver.options.database === ':memory:') return null;
      this.connection ??= new (this.driver.sqlite as new (file: string, options: object) => NonNullable<SnapshotReader['connection']>)(
        this.driver.options.database,
        {
          readonly: true,
          fileMustExist: true,
          timeout: TRANSACTION_WAIT_MS,
        },
      );
      const prepared = this.connection.prepare(query);
      statement = prepared.reader ? prepared : null;
      this.statements.set(query, statement);
      if (this.statements.size > SNAPSHOT_STATEMENTS) this.statements.delete(this.statements.keys().next().value!);
    }
    return statement;
  }
}

/** Prepared statements kept by the snapshot reader (the runner's cache keeps 100). */
const SNAPSHOT_STATEMENTS = 100;

/** The runner's private cache of prepared statements (BetterSqlite3QueryRunner). */
interface StatementCache {
  stmtCache: Map<string, unknown>;
}

/**
 * Makes every transaction on the embedded SQLite database isolated from the rest of the
 * process, as a MySQL connection of its own would make it.
 *
 * TypeORM's better-sqlite3 driver hands every caller one shared query runner on one
 * connection, so while a transaction awaits (the token `last_used` flush, the store import,
 * a `save()`, which opens one of its own), other requests' statements run inside it: a
 * rollback undid their acknowledged writes, a commit published their half-done work, and a
 * second transaction became a savepoint of the first. Here each `createQueryRunner()` gives
 * a runner of its own on the same connection, and Turns gives the connection to one
 * transaction at a time; every other statement waits (at most TRANSACTION_WAIT_MS, then a
 * 503) until it ends, and a transaction begins only once the lone statements under way have
 * run, so none lands inside someone else's transaction.
 *
 * A lone SELECT that comes while a transaction holds the connection does not wait: it is answered on
 * a read-only connection from the last committed state (WAL mode), as a MySQL read outside
 * the transaction would be, so a store import that holds the connection for seconds does not stall
 * GET /plants or token look-ups. Writes wait (the price of one writer). Other processes on
 * the same file (the command line) are kept apart by SQLite's own file lock and busy_timeout,
 * as before.
 *
 * A departure from the framework (a driver's method replaced, a runner's statement cache
 * shared): guarded by test/medium/sqlite-transactions.medium-spec.ts, which fails if TypeORM
 * stops building its runners through `createQueryRunner`, and by the checks below.
 */
export function isolateSqliteTransactions(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const driver = dataSource.driver as BetterSqlite3Driver;
  if (typeof driver.createQueryRunner !== 'function') throw new Error("isolateSqliteTransactions: TypeORM's better-sqlite3 driver has no createQueryRunner");
  const turns = new Turns();
  const statements = new Map<string, unknown>();
  const snapshot = new SnapshotReader(driver);
  const disconnect = driver.disconnect.bind(driver);
  driver.disconnect = async () => {
    snapshot.close();
    return disconnect();
  };
  const probe = new BetterSqlite3QueryRunner(driver) as unknown as StatementCache;
  if (!(probe.stmtCache instanceof Map)) throw new Error('isolateSqliteTransactions: BetterSqlite3QueryRunner no longer keeps its statements in stmtCache');
  driver.createQueryRunner = (_mode?: ReplicationMode) => new IsolatedQueryRunner(driver, turns, statements, snapshot);
}
