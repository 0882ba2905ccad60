import {
  ConflictException,
  HttpException,
  Inject,
  Injectable,
  Logger,
  UnprocessableEntityException,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource, type EntityManager } from 'typeorm';
import { plantsConfig } from './plants.config.js';
import { OutboxService, type Actor } from '../events/outbox.service.js';
import { isDuplicateKeyError, isRetryableLockError } from '../database/database-errors.js';
import { requestFingerprint, type StoredResponse } from './idempotency.js';
import { MAX_PLANT_ID } from './plant-id.js';
import { INSERT_PLANT, type NewPlant } from './plants.service.js';

/** How long a key and its response are kept (contract §3). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/** Rows deleted per statement of the clean-up, so that it never holds many locks at once. */
const CLEANUP_BATCH = 1000;
/** Statements per clean-up run at most; the rest waits for the next run. */
const CLEANUP_ROUNDS = 20;
/** Another instance may take the same "next" id between our read and our insert (as in PlantsService). */
const ASSIGN_ATTEMPTS = 20;
const ATTEMPTS = 5;

/** What the first request with a key did, as kept for its repeats; `plantId` when it created a plant. */
interface Outcome extends StoredResponse {
  plantId?: number;
}

/** The claim lost: a row for (team, key) exists already. */
class KeyTaken extends Error {}

/** No outcome could be given to this request yet: the client should repeat it. */
export class IdempotencyKeyBusy extends ConflictException {
  constructor() {
    super('a request with this Idempotency-Key is still being processed; retry it shortly');
  }
}

const created = (id: number, { name, tag }: NewPlant): Outcome => ({
  status: 201,
  location: `/plants/${id}`,
  body: tag === undefined || tag === null ? { name } : { name, tag },
  plantId: id,
});
const conflict = (message: string): Outcome => ({ status: 409, location: null, body: { error: 409, message } });
const noIdLeft = () => conflict(`no plant id is left above ${MAX_PLANT_ID}; give an id explicitly`);

const CLAIM = 'INSERT INTO idempotency_keys (team, idempotency_key, request_hash) VALUES (?, ?, ?)';
const COMPLETE = 'UPDATE idempotency_keys SET response_status = ?, response_location = ?, response_body = ? WHERE team = ? AND idempotency_key = ?';
const MAX_ID = 'SELECT MAX(id) AS max FROM plants WHERE team = ?';

/**
 * POST /plants with an `Idempotency-Key` (contract §3). The key is claimed by an
 * INSERT into idempotency_keys, whose (team, key) primary key decides between concurrent
 * requests on every instance; the plant and the response to replay are written in the same
 * transaction. So a response is stored only with its plant, a crash or a database failure
 * before the commit leaves no trace (the key is free for the retry, nothing to go stale),
 * and two plants can never come of one key: the loser of a race waits for the winner's
 * commit on the key's row lock (MySQL; on SQLite for the process's transaction lock,
 * sqlite-transactions.ts) and then replays its response, or claims the key itself if the
 * winner rolled back.
 *
 * What is stored: the 201, and the 409 of an id already taken (the outcome of running the
 * request, as Stripe keeps it). Not stored: anything refused before the request runs
 * (401, 403, 429, every 400, 413, 415) and every failure of the database or the service
 * (5xx): those roll back, and the same request may be retried with the same key.
 */
@Injectable()
export class IdempotentCreatesService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private readonly mysql: boolean;
  private timer?: NodeJS.Timeout;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(plantsConfig.KEY) private readonly settings: ConfigType<typeof plantsConfig>,
    private readonly outbox: OutboxService,
  ) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
  }

  onApplicationBootstrap(): void {
    const interval = this.settings.IDEMPOTENCY_CLEANUP_INTERVAL_MS;
    this.timer = setInterval(() => void this.cleanUp(), interval).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /**
   * Runs the create once per (team, key), or gives back what the first run answered.
   * `plantId` is set when this call created the plant.
   */
  async create(team: string, key: string, plant: NewPlant, actor: Actor = 'system'): Promise<Outcome> {
    const hash = requestFingerprint(plant);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        return await this.run(team, key, hash, plant, actor);
      } catch (error) {
        if (error instanceof KeyTaken) {
          const stored = await this.find(team, key);
          // Gone meanwhile (expired and cleaned up): claim it again.
          if (!stored) continue;
          if (stored.expired) {
            await this.dataSource.query(`DELETE FROM idempotency_keys WHERE team = ? AND idempotency_key = ? AND created_at < ${this.cutoff()}`, [team, key]);
            continue;
          }
          if (stored.requestHash !== hash) throw new UnprocessableEntityException('this Idempotency-Key was already used with a different request body');
          if (stored.response === null) throw new IdempotencyKeyBusy();
          return stored.response;
        }
        // A deadlock, a lock wait or a Galera certification failure rolled the transaction back: run it again.
        if (isRetryableLockError(error) && attempt < ATTEMPTS) continue;
        throw error;
      }
    }
    throw new IdempotencyKeyBusy();
  }

  /** Deletes keys older than the 24 hours, in bounded statements; how many it deleted. */
  async deleteExpired(): Promise<number> {
    const sql = this.mysql
      ? `DELETE FROM idempotency_keys WHERE created_at < ${this.cutoff()} LIMIT ${CLEANUP_BATCH}`
      : `DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ${this.cutoff()} LIMIT ${CLEANUP_BATCH})`;
    let total = 0;
    for (let round = 0; round < CLEANUP_ROUNDS; round++) {
      const deleted = await this.affectedRows(sql);
      total += deleted;
      if (deleted < CLEANUP_BATCH) break;
    }
    return total;
  }

  private async affectedRows(sql: string): Promise<number> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return (await runner.query(sql, [], true)).affected ?? 0;
    } finally {
      await runner.release();
    }
  }

  private async cleanUp(): Promise<void> {
    try {
      const deleted = await this.deleteExpired();
      if (deleted > 0) this.logger.log(`deleted ${deleted} expired idempotency keys`);
    } catch (error) {
      // Housekeeping only: an expired key is also ignored (and replaced) when it is used again.
      this.logger.warn(`could not delete expired idempotency keys: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The database's own clock decides expiry, so that instances with skewed clocks agree. */
  private cutoff(): string {
    return this.mysql
      ? `CURRENT_TIMESTAMP(3) - INTERVAL ${IDEMPOTENCY_TTL_SECONDS} SECOND`
      : `strftime('%Y-%m-%d %H:%M:%f', 'now', '-${IDEMPOTENCY_TTL_SECONDS} seconds')`;
  }

  private async find(team: string, key: string): Promise<{ requestHash: string; expired: boolean; response: StoredResponse | null } | undefined> {
    const rows = await this.dataSource.query<
      Array<{ request_hash: string; response_status: number | null; response_location: string | null; response_body: string | null; expired: number | string }>
    >(
      `SELECT request_hash, response_status, response_location, response_body, CASE WHEN created_at < ${this.cutoff()} THEN 1 ELSE 0 END AS expired
       FROM idempotency_keys WHERE team = ? AND idempotency_key = ?`,
      [team, key],
    );
    const row = rows[0];
    if (!row) return undefined;
    const response =
      row.response_status === null
        ? null
        : { status: Number(row.response_status), location: row.response_location, body: JSON.parse(row.response_body ?? 'null') as unknown };
    return { requestHash: row.request_hash, expired: Number(row.expired) === 1, response };
  }

  /**
   * One transaction: on MySQL on one pooled connection, READ COMMITTED so that a retry of the
   * id assignment sees the plant that took its id (REPEATABLE READ would show it the same
   * maximum again); on SQLite, which knows no such level, with the process's transaction lock
   * (sqlite-transactions.ts), so nothing else runs in between.
   */
  private run(team: string, key: string, hash: string, plant: NewPlant, actor: Actor): Promise<Outcome> {
    const work = async (manager: EntityManager) => {
      try {
        await manager.query(CLAIM, [team, key, hash]);
      } catch (error) {
        throw isDuplicateKeyError(error) ? new KeyTaken() : error;
      }
      // The event of a plant made here is written with it (insertPlant); a replay of the key writes nothing.
      const outcome = await this.insertPlant(manager, team, plant, actor);
      await manager.query(COMPLETE, [outcome.status, outcome.location, JSON.stringify(outcome.body), team, key]);
      return outcome;
    };
    return this.mysql ? this.dataSource.transaction('READ COMMITTED', work) : this.dataSource.transaction(work);
  }

  private async insertPlant(manager: EntityManager, team: string, plant: NewPlant, actor: Actor): Promise<Outcome> {
    const tag = plant.tag ?? null;
    const insert = (id: number) =>
      this.outbox.createPlant({ team, id, name: plant.name, tag }, actor, { sql: INSERT_PLANT, params: [team, id, plant.name, tag] }, manager);
    if (plant.id !== undefined) {
      try {
        await insert(plant.id);
        return created(plant.id, plant);
      } catch (error) {
        // InnoDB and SQLite undo the failed statement only; the claim stays, and the 409 is stored with it.
        if (isDuplicateKeyError(error)) return conflict(`plant ${plant.id} already exists`);
        throw error;
      }
    }
    for (let attempt = 1; ; attempt++) {
      const [row] = await manager.query<Array<{ max: string | number | null }>>(MAX_ID, [team]);
      const id = Number(row?.max ?? 0) + 1;
      if (id > MAX_PLANT_ID) return noIdLeft();
      try {
        await insert(id);
        return created(id, plant);
      } catch (error) {
        if (!isDuplicateKeyError(error) || attempt >= ASSIGN_ATTEMPTS) throw error;
      }
    }
  }
}

/**
 * Answers a request with a stored (or just made) response: a 201 with its Location and
 * body, or the stored error thrown for the exception filter to write in the same shape.
 */
export function sendStored(response: StoredResponse, res: Response): unknown {
  if (response.status >= 400) throw new HttpException((response.body as { message: string }).message, response.status);
  if (response.location !== null) res.setHeader('Location', response.location);
  res.status(response.status);
  return response.body;
}
