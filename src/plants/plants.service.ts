import { ConflictException, Injectable, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { OutboxService, type Actor } from '../events/outbox.service.js';
import { isDuplicateKeyError, isRetryableLockError, retryWriteConflicts } from '../database/database-errors.js';
import { preparedRead, type SqlValue } from '../database/prepared-read.js';
import { Plant } from './plant.entity.js';
import { MAX_PLANT_ID } from './plant-id.js';

export interface NewPlant {
  name: string;
  tag?: string | null;
  id?: number;
}

export interface PlantPage {
  plants: Array<Pick<Plant, 'id' | 'name' | 'tag'>>;
  /** Set when more plants follow: the cursor of the next page. */
  nextAfter?: number;
}

/**
 * Another instance may take the same "next" id between our read and our insert (a
 * duplicate key, or on Galera a failed certification): tried again with a fresh maximum.
 */
const ASSIGN_ATTEMPTS = 20;
export const INSERT_PLANT = 'INSERT INTO plants (team, id, name, tag) VALUES (?, ?, ?, ?)';
const DELETE_PLANT = 'DELETE FROM plants WHERE team = ? AND id = ?';

@Injectable()
export class PlantsService {
  /** Tail of the queue of id assignments per team in this process (see create). */
  private readonly assigning = new Map<string, Promise<unknown>>();

  constructor(
    @InjectRepository(Plant) private readonly plants: Repository<Plant>,
    private readonly outbox: OutboxService,
  ) {}

  /**
   * A given id is inserted as is: the (team, id) primary key decides a race, so of two
   * concurrent creates exactly one wins and the other gets 409. Without an id the team's
   * highest + 1 is taken; assignments are queued per team within this process, and a
   * collision with another instance is retried with a fresh maximum.
   * A write conflict (a deadlock; on Galera a concurrent commit on another node) is tried
   * again (retryWriteConflicts) until the key decides: the loser then gets its 409.
   */
  async create(team: string, plant: NewPlant, actor: Actor = 'system'): Promise<Plant> {
    if (plant.id !== undefined) {
      const id = plant.id;
      try {
        return await retryWriteConflicts(() => this.insert(team, id, plant, actor));
      } catch (error) {
        if (isDuplicateKeyError(error)) throw new ConflictException(`plant ${plant.id} already exists`);
        throw error;
      }
    }
    return this.queued(team, () => this.insertWithNextId(team, plant, actor));
  }

  /**
   * The hottest read of the service: one SQL statement, the same on both engines, run by
   * preparedRead (which says why it is not the query builder).
   */
  async list(team: string, { limit, tag, after }: { limit: number; tag?: string; after?: number }): Promise<PlantPage> {
    const params: SqlValue[] = [team, after ?? 0];
    // The id as text: mysql2 turns a BIGINT of the binary protocol into a string through a Long
    // object and its long division (about 6 KB of garbage per page of 20); text is read as is.
    let sql = 'SELECT CAST(id AS CHAR) AS id_text, name, tag FROM plants WHERE team = ? AND id > ?';
    if (tag !== undefined) {
      // MySQL's PAD SPACE collations find "fern" = "fern "; equal lengths make the match exact on both engines.
      sql += ' AND tag = ? AND LENGTH(tag) = LENGTH(?)';
      params.push(tag, tag);
    }
    sql += ' ORDER BY id LIMIT ?';
    params.push(limit + 1);
    const rows = await preparedRead<{ id_text: string; name: string; tag: string | null }>(this.plants.manager.connection, sql, params);
    const plants = rows.map((row) => ({ id: Number(row.id_text), name: row.name, tag: row.tag }));
    if (plants.length <= limit) return { plants };
    plants.length = limit;
    return { plants, nextAfter: plants[limit - 1].id };
  }

  /** The delete with its event, if events are on (OutboxService.deletePlant: the one writer of plants and their events). */
  async remove(team: string, id: number, actor: Actor = 'system'): Promise<void> {
    const deleted = await retryWriteConflicts(() => this.outbox.deletePlant(team, id, actor, { sql: DELETE_PLANT, params: [team, id] }));
    if (deleted === 0) throw new NotFoundException(`plant ${id} not found`);
  }

  private async insertWithNextId(team: string, plant: NewPlant, actor: Actor): Promise<Plant> {
    const attempt = async () => {
      const row = await this.plants
        .createQueryBuilder('plant')
        .select('MAX(plant.id)', 'max')
        .where('plant.team = :team', { team })
        .getRawOne<{ max: string | number | null }>();
      const id = Number(row?.max ?? 0) + 1;
      if (id > MAX_PLANT_ID) throw new ConflictException(`no plant id is left above ${MAX_PLANT_ID}; give an id explicitly`);
      return this.insert(team, id, plant, actor);
    };
    try {
      return await retryWriteConflicts(attempt, { attempts: ASSIGN_ATTEMPTS, retryOn: (error) => isDuplicateKeyError(error) || isRetryableLockError(error) });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new ServiceUnavailableException('too many concurrent creates in this team to assign an id, try again shortly');
      throw error;
    }
  }

  /** The plant with its event, if events are on (OutboxService.createPlant: the one writer of plants and their events). */
  private async insert(team: string, id: number, { name, tag }: NewPlant, actor: Actor): Promise<Plant> {
    const plant = this.plants.create({ team, id, name, tag: tag ?? null });
    await this.outbox.createPlant(plant, actor, { sql: INSERT_PLANT, params: [team, id, plant.name, plant.tag] });
    return plant;
  }

  private queued<T>(team: string, task: () => Promise<T>): Promise<T> {
    const previous = this.assigning.get(team) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.assigning.set(team, tail);
    void tail.then(() => {
      if (this.assigning.get(team) === tail) this.assigning.delete(team);
    });
    return run;
  }
}
