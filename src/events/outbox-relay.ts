import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DataSource } from 'typeorm';
import type { EnvironmentVariables } from '../config/environment.js';
import { Metrics } from '../metrics/metrics.js';
import { OutboxService } from './outbox.service.js';

/** Rows published per round; the round goes on while rows are left and the broker answers. */
const BATCH = 100;
/** How long a relay's lease lasts without renewal: another instance takes over after it. */
const LEASE_SECONDS = 10;
/** A broker that is down is reported at most this often. */
const WARN_EVERY_MS = 30_000;
/** The broker's de-duplication window (Nats-Msg-Id), set on the stream it creates. */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1e9;
const CONNECT_TIMEOUT_MS = 2000;
/** After a write of this instance, the next round starts this much later (its transaction commits first). */
const POKE_DELAY_MS = 25;

interface OutboxRow {
  id: number | string;
  event_id: string;
  subject: string;
  payload: string;
}

/**
 * Publishes the outbox to NATS JetStream (issue 20). Every instance runs one, and one at a time
 * relays: the holder of the lease row `event_relay_lease`, renewed each round on the database's
 * clock and taken over by another instance LEASE_SECONDS after its holder stopped renewing (a
 * SIGKILL, a lost database). One publisher publishing in id order keeps the order of every
 * subject. Why a lease and not `SELECT … FOR UPDATE SKIP LOCKED`: SQLite has no row locks, and
 * on Galera row locks are not cluster-wide (two nodes would both skip nothing), while the lease
 * row is an ordinary write that certification decides between nodes. The broker's
 * de-duplication by `Nats-Msg-Id` (the event id) covers the one window a lease cannot: a
 * holder that published and died before deleting the row; the next holder publishes it again
 * and JetStream drops the copy (within its duplicate window), so consumers that also de-duplicate
 * by `id` never see an event twice.
 *
 * A row is deleted only after the broker acknowledged it. The broker being down never fails a
 * request: events wait, the backlog metrics grow, a warning says how many and how old.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  private readonly owner = `relay-${randomUUID()}`;
  private readonly mysql: boolean;
  private readonly servers: string[];
  private readonly stream: string;
  private readonly prefix: string;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private connection?: NatsConnection;
  private js?: JetStreamClient;
  private lastWarning = 0;
  private lastError = '';
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly metrics: Metrics,
    private readonly config: ConfigService<EnvironmentVariables, true>,
  ) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    this.servers = (config.get('EVENTS_NATS_URL', { infer: true }) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    this.stream = config.get('EVENTS_STREAM', { infer: true });
    this.prefix = config.get('EVENTS_SUBJECT_PREFIX', { infer: true });
    // Written inside a transaction that has not committed yet: the round starts a moment later.
    outbox.onRecorded = () => void setTimeout(() => void this.round(), POKE_DELAY_MS).unref();
  }

  onApplicationBootstrap(): void {
    if (!this.outbox.enabled) return;
    this.timer = setInterval(() => void this.round(), this.config.get('EVENTS_RELAY_INTERVAL_MS', { infer: true })).unref();
    void this.round();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.connection?.drain().catch(() => undefined);
  }

  /** One round now, unless one is running (a write of this instance calls it, so events leave at once). */
  round(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.relay().finally(() => (this.running = undefined));
    return this.running;
  }

  private async relay(): Promise<void> {
    try {
      const backlog = await this.count();
      if (backlog.rows === 0 || !(await this.holdLease())) return;
      const js = await this.jetstream();
      if (!js) return this.warnBacklog(backlog.rows, backlog.ageSeconds, 'the broker is unreachable');
      for (;;) {
        const rows = await this.dataSource.query<OutboxRow[]>(`SELECT id, event_id, subject, payload FROM event_outbox ORDER BY id LIMIT ${BATCH}`);
        // One at a time, each acknowledged before the next is sent: the order of a subject is
        // never at the mercy of a failed publish. The rows go in one statement per batch; should
        // the process die in between, the next round publishes them again and the broker drops the copies.
        const published: Array<number | string> = [];
        try {
          for (const row of rows) {
            if (this.stopped) break;
            await js.publish(row.subject, row.payload, { msgID: row.event_id });
            published.push(row.id);
          }
        } finally {
          if (published.length > 0) {
            await this.dataSource.query(`DELETE FROM event_outbox WHERE id IN (${published.map(() => '?').join(', ')})`, published);
            this.metrics.eventsPublished.inc(published.length);
          }
        }
        if (this.stopped) return;
        if (rows.length < BATCH || !(await this.holdLease())) break;
      }
      await this.count();
    } catch (error) {
      const backlog = await this.count().catch(() => ({ rows: NaN, ageSeconds: NaN }));
      this.warnBacklog(backlog.rows, backlog.ageSeconds, error instanceof Error ? error.message : String(error));
    }
  }

  /** The rows waiting and the age of the oldest, into the metrics and the outbox's full check. */
  private async count(): Promise<{ rows: number; ageSeconds: number }> {
    const age = this.mysql
      ? 'TIMESTAMPDIFF(MICROSECOND, MIN(created_at), CURRENT_TIMESTAMP(3)) / 1000000'
      : "(julianday('now') - julianday(MIN(created_at))) * 86400";
    const [row] = await this.dataSource.query<Array<{ n: number | string; age: number | string | null }>>(`SELECT COUNT(*) AS n, ${age} AS age FROM event_outbox`);
    const rows = Number(row.n);
    const ageSeconds = rows === 0 ? 0 : Math.max(0, Number(row.age ?? 0));
    this.outbox.counted(rows);
    this.metrics.eventsBacklogRows.set(rows);
    this.metrics.eventsBacklogAge.set(ageSeconds);
    return { rows, ageSeconds };
  }

  /** Takes or renews the lease; false while another instance holds it. */
  private async holdLease(): Promise<boolean> {
    const now = this.mysql ? 'CURRENT_TIMESTAMP(3)' : "strftime('%Y-%m-%d %H:%M:%f', 'now')";
    const until = this.mysql ? `CURRENT_TIMESTAMP(3) + INTERVAL ${LEASE_SECONDS} SECOND` : `strftime('%Y-%m-%d %H:%M:%f', 'now', '+${LEASE_SECONDS} seconds')`;
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(
        `UPDATE event_relay_lease SET owner = ?, expires_at = ${until} WHERE id = 1 AND (owner = ? OR owner IS NULL OR expires_at < ${now})`,
        [this.owner, this.owner],
        true,
      );
      return (result.affected ?? 0) > 0;
    } finally {
      await runner.release();
    }
  }

  /** The JetStream client, connecting (and creating the stream if missing) when there is none; undefined while the broker is unreachable. */
  private async jetstream(): Promise<JetStreamClient | undefined> {
    if (this.js && this.connection && !this.connection.isClosed()) return this.js;
    try {
      this.connection = await connect({ servers: this.servers, timeout: CONNECT_TIMEOUT_MS, maxReconnectAttempts: -1, name: this.owner });
      const manager = await jetstreamManager(this.connection);
      const subjects = [`${this.prefix}.>`];
      try {
        await manager.streams.info(this.stream);
      } catch {
        await manager.streams.add({ name: this.stream, subjects, duplicate_window: DUPLICATE_WINDOW_NS });
        this.logger.log(`created the JetStream stream ${this.stream} for ${subjects.join(', ')}`);
      }
      this.js = jetstream(this.connection);
      return this.js;
    } catch (error) {
      await this.connection?.close().catch(() => undefined);
      this.connection = undefined;
      this.js = undefined;
      this.lastError = error instanceof Error ? error.message : String(error);
      return undefined;
    }
  }

  private warnBacklog(rows: number, ageSeconds: number, reason: string): void {
    if (Date.now() - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = Date.now();
    this.logger.warn(`${rows} change events wait in the outbox, the oldest for ${Math.round(ageSeconds)} s: ${reason}${this.lastError ? ` (${this.lastError})` : ''}`);
  }
}
