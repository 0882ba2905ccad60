import { randomUUID } from 'node:crypto';
import { Injectable, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { EntityManager } from 'typeorm';
import type { EnvironmentVariables } from '../config/environment.js';

/** The CloudEvents `type` of each event, under this service's reverse-DNS prefix. */
export const EVENT_TYPES = {
  plantCreated: 'com.plantstore.plant.created',
  plantDeleted: 'com.plantstore.plant.deleted',
  storesChanged: 'com.plantstore.stores.changed',
} as const;

/** The CloudEvents `source` of every event. */
export const EVENT_SOURCE = '/plant-store-service';

export interface PlantChange {
  team: string;
  id: number;
  name: string;
  tag: string | null;
}

export interface StoresChange {
  added: number;
  updated: number;
  removed: number;
}

/** Who made a change: the acting token's id (`oidc:<sub>` for single sign-on, `admin-file`). */
export type Actor = number | string;

const INSERT = 'INSERT INTO event_outbox (event_id, subject, payload) VALUES (?, ?, ?)';

/**
 * The transactional outbox (issue 20): each change event is one row written with the manager of
 * the change's own transaction, so that it exists if and only if the change was committed; the
 * relay (outbox-relay.ts) publishes it afterwards. Without EVENTS_NATS_URL nothing is written.
 *
 * A full outbox (EVENTS_OUTBOX_MAX_ROWS, as the relay last counted it) refuses the write with
 * 503 instead of dropping events: a consumer may rely on getting every event, and the client
 * may retry the write once the broker is back.
 */
@Injectable()
export class OutboxService {
  readonly enabled: boolean;
  private readonly prefix: string;
  private readonly maxRows: number;
  /** Rows in the outbox, as last counted (by the relay), plus those written here since. */
  private backlog = 0;

  constructor(config: ConfigService<EnvironmentVariables, true>) {
    this.enabled = Boolean(config.get('EVENTS_NATS_URL', { infer: true }));
    this.prefix = config.get('EVENTS_SUBJECT_PREFIX', { infer: true });
    this.maxRows = config.get('EVENTS_OUTBOX_MAX_ROWS', { infer: true });
  }

  /** Set by this process's relay: called after a row is written, so that it goes out without waiting for the next round. */
  onRecorded?: () => void;

  /** The relay's count of the rows waiting. */
  counted(rows: number): void {
    this.backlog = rows;
  }

  plantCreated(manager: EntityManager, plant: PlantChange, actor: Actor): Promise<void> {
    return this.record(manager, `${this.prefix}.${plant.team}.plant.created`, EVENT_TYPES.plantCreated, `plants/${plant.id}`, { ...plantData(plant), tokenId: actor });
  }

  plantDeleted(manager: EntityManager, plant: PlantChange, actor: Actor): Promise<void> {
    return this.record(manager, `${this.prefix}.${plant.team}.plant.deleted`, EVENT_TYPES.plantDeleted, `plants/${plant.id}`, { ...plantData(plant), tokenId: actor });
  }

  /** After an import or an admin change of the store list: counts, never the list. */
  storesChanged(manager: EntityManager, change: StoresChange): Promise<void> {
    if (change.added + change.updated + change.removed === 0) return Promise.resolve();
    return this.record(manager, `${this.prefix}.stores.changed`, EVENT_TYPES.storesChanged, 'stores', change);
  }

  private async record(manager: EntityManager, subject: string, type: string, ceSubject: string, data: object): Promise<void> {
    if (!this.enabled) return;
    if (this.backlog >= this.maxRows) {
      throw new ServiceUnavailableException(`change events cannot be delivered right now and ${this.backlog} wait already (EVENTS_OUTBOX_MAX_ROWS); try again later`);
    }
    const id = randomUUID();
    const event = { specversion: '1.0', id, source: EVENT_SOURCE, type, subject: ceSubject, time: new Date().toISOString(), datacontenttype: 'application/json', data };
    await manager.query(INSERT, [id, subject, JSON.stringify(event)]);
    this.backlog++;
    this.onRecorded?.();
  }
}

function plantData({ team, id, name, tag }: PlantChange) {
  return { team, id, name, tag };
}
