import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DataSource } from 'typeorm';
import { requestFields } from '../common/request-fields.js';
import { ShutdownState } from '../common/shutdown-state.js';
import { serverConfig } from '../common/server.config.js';
import { eventsConfig } from './events.config.js';
import { Metrics } from '../metrics/metrics.js';
import { OutboxService } from './outbox.service.js';
import { BatchPublisher } from './batch-publisher.js';
import { checkStream, stateOf, wantedStream, type StreamState, type WantedStream } from './event-stream.js';

/**
 * Rows read and published per batch, all in flight at once (a window of acknowledgements): the
 * acks of a batch come back in a few socket reads, so a relay in a saturated process pays a few
 * turns of its event loop per batch instead of one per event (docs/performance.md, "Change events under load").
 */
const BATCH = 500;
/** How long a relay's lease lasts without renewal: another instance takes over after it. */
const LEASE_SECONDS = 10;
/** The holder renews its lease when this much of it has passed (by its own clock), not every batch. */
const RENEW_AFTER_MS = 3000;
/** A broker that is down is reported at most this often. */
const WARN_EVERY_MS = 30_000;
const CONNECT_TIMEOUT_MS = 2000;
/**
 * How long a batch's acknowledgements may take. A stream stores a batch in milliseconds; what
 * goes unanswered this long went to a leader that died, and waiting longer only delays the resend
 * to its successor (a batch partly stored is sent again from its first unacknowledged event, the
 * rest dropped as duplicates by the stream).
 */
const ACK_TIMEOUT_MS = 2000;
/**
 * The same for the one event a retry sends: a leader stores it in milliseconds, and one that is
 * paused or cut off (its node still routes to it until the cluster elects another) never answers.
 */
const RETRY_ACK_TIMEOUT_MS = 500;
/** After a batch went unanswered, the server it went through is asked for a PONG this long: one that answers is alive (the stream's leader behind it was not). */
const SERVER_PING_MS = 300;
/**
 * How long the JetStream API (the stream's info, its creation) may take to answer, where the
 * client waits 5 s by default: while a cluster elects a leader it does not answer at all, and the
 * relay must be back to publishing as soon as there is one.
 */
const API_TIMEOUT_MS = 1000;
/**
 * After a failed round, the next one waits this long, doubling up to RETRY_MAX_MS: while a cluster
 * elects the stream's leader every publish is refused at once (503, no responders), and a relay
 * that tried after every write would spin. Each retry sends one event (see relay()).
 */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 500;
/** A stream the relay found unusable, or one that may be gone (publishes refused), is looked at again this often. */
const STREAM_RECHECK_MS = 5000;
/** After a row written inside a transaction of this instance, the next round starts this much later (the commit comes first). */
const POKE_DELAY_MS = 10;
/**
 * From SIGTERM to the handover (the drain, SHUTDOWN_DRAIN_MS), the holder looks this often:
 * the load balancer sends its writes elsewhere, and a write of another instance does not start a
 * round here, so they would otherwise wait for the next EVENTS_RELAY_INTERVAL_MS.
 */
const DRAINING_INTERVAL_MS = 100;
/** The lease's release at shutdown is one UPDATE: given this long at most, even when the grace time is spent. */
const RELEASE_TIMEOUT_MS = 2000;
/**
 * How long after a read its highest id becomes the floor of the reads that follow: a row with a
 * lower id whose write commits later than this is found by the next full read instead (one every
 * EVENTS_RELAY_INTERVAL_MS), not by the reads in between. A write's commit takes milliseconds; a
 * long transaction or a stalled commit is what this leaves to the full read.
 */
const FLOOR_LAG_MS = 500;

interface OutboxRow {
  id: number | string;
  event_id: string;
  subject: string;
  payload: string;
}

/** `?, ?, …`, one per value of an IN list. */
const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What `work` answered, or false when it did not within `ms` (it goes on regardless). */
async function within(work: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), false)));
  try {
    return await Promise.race([work, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** The CloudEvents `time` of an outbox payload, in ms since the epoch (found by its key: no JSON.parse per event). */
export function eventTime(payload: string): number {
  const at = payload.indexOf('"time":"');
  return at < 0 ? NaN : Date.parse(payload.slice(at + 8, payload.indexOf('"', at + 8)));
}

/**
 * Publishes the outbox to NATS JetStream. Every instance runs one, and one at a
 * time relays: the holder of the lease row `event_relay_lease`, renewed on the database's clock
 * and taken over by another instance LEASE_SECONDS after its holder stopped renewing (a SIGKILL,
 * a lost database), or at once when its holder stops gracefully (`beforeApplicationShutdown`: the
 * handover below). Why a lease and not `SELECT … FOR UPDATE SKIP LOCKED`: SQLite has no row
 * locks, and on Galera row locks are not cluster-wide (two nodes would both skip nothing), while
 * the lease row is an ordinary write that certification decides between nodes.
 *
 * Order: one publisher sends the rows in id order on one connection, BATCH at a time without
 * waiting for each acknowledgement (batch-publisher.ts). JetStream stores the messages of a connection in the order
 * they arrive, so a subject's order holds as long as nothing is sent again out of turn: the
 * connection never reconnects by itself (`reconnect: false`, which would resend what was buffered
 * after a message lost with the old socket), and on a failed acknowledgement the relay deletes the
 * acknowledged prefix only, drops the connection and resumes at the first unacknowledged row. What
 * follows it and was stored already is sent again with the same `Nats-Msg-Id` (the event id), and
 * the broker drops the copy within its duplicate window; consumers that also de-duplicate by `id`
 * never see an event twice. That also covers a holder that published and died before deleting.
 *
 * Handover: on SIGTERM the HTTP server stops taking requests and the requests in flight finish
 * (src/common/graceful-shutdown.ts) before Nest's shutdown hooks run. Then the holder publishes
 * what the outbox holds, whoever wrote it, batch by batch until SHUTDOWN_GRACE_MS after the
 * listener closed, and releases the lease (owner NULL: an ordinary UPDATE, which certification
 * decides on Galera like a renewal), so the next round of another instance, after its next write
 * or within EVENTS_RELAY_INTERVAL_MS, takes it instead of waiting LEASE_SECONDS. Rows still
 * waiting when the grace runs out are left to the next holder. A batch still unacknowledged at the deadline
 * keeps the lease (it expires as after a SIGKILL): released, another relay could publish later
 * rows before the broker had stored that batch, out of order.
 *
 * A row is deleted only after the broker acknowledged it. The broker being down never fails a
 * request: events wait, the backlog metrics grow, a warning says how many and how old.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  /** Names the instance in the lease row and on the broker: host, process id, and a random part for uniqueness. */
  private readonly owner = `${hostname().slice(0, 24)}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly mysql: boolean;
  private readonly servers: string[];
  private readonly stream: string;
  private readonly interval: number;
  private readonly graceMs: number;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** A write came in while a round ran: run another right after it. */
  private again = false;
  private connection?: NatsConnection;
  private publisher?: BatchPublisher;
  private manager?: JetStreamManager;
  private readonly wanted: WantedStream;
  /** The stream was found (or created) taking the relay's subjects, once in this process. */
  private streamKnown = false;
  private lastStreamCheck = -Infinity;
  /** Why the relay cannot publish to its stream (another stream's subjects overlap, …); undefined while it can, or cannot tell. */
  private streamProblem?: string;
  /** The stream's figures as last read, for the status page. */
  private streamState?: StreamState;
  /** Failed rounds in a row; the next round waits until retryAt (performance.now()). */
  private failures = 0;
  private retryAt = 0;
  private retryTimer?: NodeJS.Timeout;
  /** performance.now() of this relay's last successful lease renewal. */
  private leaseRenewed = -Infinity;
  private lastCount = -Infinity;
  /** Events this relay published (acknowledged), for the handover's log line. */
  private published = 0;
  private lastWarning = 0;
  private lastError = '';
  private releaseError?: string;
  private stopped = false;
  /**
   * The DELETE of the last batch's acknowledged rows, still running while the next round reads and
   * publishes (at most one at a time): under load it would otherwise be one more turn of a busy
   * event loop between a write's commit and its event's publish. Its ids are left out of the reads
   * it overlaps; they are read (and sent again, a duplicate the broker drops) only if it fails.
   */
  private deleting?: { ids: Array<number | string>; done: Promise<void> };
  /**
   * The highest id of each recent read and when it started, for the floor of the reads (see
   * readFloor): the oldest entry is the newest one at least FLOOR_LAG_MS old.
   */
  private reads: Array<{ at: number; id: number }> = [];
  /** performance.now() of the last read from the start of the table (a full read). */
  private lastFullRead = -Infinity;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly metrics: Metrics,
    private readonly shutdown: ShutdownState,
    @Inject(eventsConfig.KEY) events: ConfigType<typeof eventsConfig>,
    @Inject(serverConfig.KEY) server: ConfigType<typeof serverConfig>,
  ) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    const servers = (events.EVENTS_NATS_URL ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    // Tried in this order (see avoid()), from a place of its own so that instances spread over a cluster's nodes.
    const start = Math.floor(Math.random() * servers.length);
    this.servers = [...servers.slice(start), ...servers.slice(0, start)];
    this.stream = events.EVENTS_STREAM;
    this.wanted = wantedStream(events);
    this.interval = events.EVENTS_RELAY_INTERVAL_MS;
    this.graceMs = server.SHUTDOWN_GRACE_MS;
    // Written inside a transaction that has not committed yet: the round starts a moment later.
    // Outside the writing request's context: the relay's log lines are not that request's. A
    // row written inside a transaction that has not committed yet is looked for a moment later.
    outbox.streamStatus = () => this.streamStatus();
    outbox.onRecorded = (committed) => {
      if (this.running) this.again = true;
      else if (committed) requestFields.exit(() => void this.round());
      else requestFields.exit(() => void setTimeout(() => void this.round(), POKE_DELAY_MS).unref());
    };
  }

  onApplicationBootstrap(): void {
    if (!this.outbox.enabled) return;
    this.timer = setInterval(() => void this.round(true), this.interval).unref();
    void this.shutdown.begun.then(() => {
      if (this.stopped || this.interval <= DRAINING_INTERVAL_MS) return;
      clearInterval(this.timer);
      // Rounds that count no more than once per interval (round(false)); one that finds the lease held elsewhere is one UPDATE that changes nothing.
      this.timer = setInterval(() => void this.round(), DRAINING_INTERVAL_MS).unref();
    });
    // The stream exists from the start (when the broker is up), so that consumers can be added before the first event.
    void this.jetstream().then(() => this.round(true));
  }

  /** Before the database pool closes (onApplicationShutdown): the handover (see the class comment). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retryTimer);
    await this.running;
    await this.deleting?.done;
    // Not the holder as far as this instance knows (never was, or a renewal found another owner).
    if (!this.outbox.enabled || this.leaseRenewed === -Infinity) return;
    // Set by the signal handler; an app closed otherwise (tests) has the whole grace time.
    const deadline = this.shutdown.graceEndsAt ?? performance.now() + this.graceMs;
    const published = this.published;
    if (performance.now() < deadline) {
      const flushed = await within(
        this.relay(false, deadline).then(async () => (await this.deleting?.done, true)),
        deadline - performance.now(),
      );
      if (!flushed) {
        this.logger.warn(
          `a batch of change events was still unacknowledged SHUTDOWN_GRACE_MS=${this.graceMs} after the listener closed: the relay's lease is kept and expires within ${LEASE_SECONDS} s`,
        );
        return;
      }
    }
    const released = await within(this.release(), Math.max(RELEASE_TIMEOUT_MS, deadline - performance.now()));
    const how = `${this.published - published} change events published while stopping`;
    if (released) this.logger.log(`relay handed over: ${how}, the lease released`);
    else
      this.logger.warn(
        `relay not handed over: ${how}, the lease not released (${this.releaseError ?? 'no answer in time'}): it expires within ${LEASE_SECONDS} s`,
      );
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.retryTimer);
    await this.running;
    await this.deleting?.done;
    await this.connection?.drain().catch(() => undefined);
  }

  /**
   * One round now, unless one is running (a write of this instance calls it, so events leave at
   * once). `count`: the timer's rounds count the outbox (metrics, the full check of every
   * instance); a write's round only when the last count is an interval old.
   */
  round(count = false): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.relay(count).finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.round();
      }
    });
    return this.running;
  }

  /** `until`: the handover's deadline (performance.now()), up to which it goes on although the relay is stopped. */
  private async relay(count: boolean, until?: number): Promise<void> {
    try {
      // A stream found unusable is looked at again by every instance, the lease's holder or not, so
      // that each one's metric and status page clear once it is fixed (jetstream(): every 5 s).
      if (count && this.streamProblem) await this.jetstream();
      // Under load a round starts after nearly every write, and COUNT(*) reads the whole table.
      if (count || performance.now() - this.lastCount >= this.interval) {
        const backlog = await this.count();
        if (backlog.rows === 0) return;
      }
      // After a failure, rounds wait for the retry (a timer starts it): a write's round does not.
      if (until === undefined && performance.now() < this.retryAt) return;
      if (!(await this.holdLease())) return;
      const publisher = await this.jetstream();
      if (!publisher) throw new Error(this.streamProblem ?? `the broker is unreachable (${this.lastError})`);
      for (;;) {
        // After a failure, one event first: while a cluster elects a leader each try is refused.
        const size = this.failures > 0 ? 1 : BATCH;
        // The rows of a DELETE still running are skipped by the database, whether or not it has removed them yet.
        const skip = this.deleting?.ids ?? [];
        const unless = skip.length === 0 ? '' : ` AND id NOT IN (${placeholders(skip)})`;
        const at = performance.now();
        const rows = await this.dataSource.query<OutboxRow[]>(
          `SELECT id, event_id, subject, payload FROM event_outbox WHERE id > ?${unless} ORDER BY id LIMIT ${size}`,
          [this.readFloor(at, until !== undefined), ...skip],
        );
        if (rows.length === 0) break;
        this.reads.push({ at, id: Number(rows.at(-1)!.id) });
        const acked = await this.publish(publisher, rows);
        if (acked > 0) await this.remove(rows.slice(0, acked));
        if (acked < rows.length) {
          this.readFromStart();
          throw new Error(this.lastError);
        }
        this.failures = 0;
        const more = until === undefined ? !this.stopped : performance.now() < until;
        if (!more || rows.length < size || !(await this.holdLease())) break;
      }
      this.failures = 0;
    } catch (error) {
      this.retryLater();
      this.logger.debug(`a round failed (${this.failures} in a row, the next in ${Math.round(this.retryAt - performance.now())} ms): ${messageOf(error)}`);
      await this.warnFailure(messageOf(error));
    }
  }

  /** After a failed round: the next one in RETRY_MIN_MS, doubling up to RETRY_MAX_MS, started by a timer. */
  private retryLater(): void {
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** this.failures);
    this.failures++;
    this.retryAt = performance.now() + delay;
    clearTimeout(this.retryTimer);
    if (!this.stopped) this.retryTimer = setTimeout(() => void this.round(), delay).unref();
  }

  /**
   * Where a read starts: after the highest id read FLOOR_LAG_MS ago or earlier; from the start of
   * the table once an EVENTS_RELAY_INTERVAL_MS, during the handover (`full`), and after a failure
   * (readFromStart). The outbox is a queue: a published row's DELETE leaves it in InnoDB's index,
   * delete-marked, until the purge thread removes it, and a read from the start steps over every
   * such row first. While purge is held back (a snapshot kept open by `mysqldump
   * --single-transaction` or a long report) those rows pile up, and every read paid for all of
   * them (docs/performance.md, "The relay's reads from a floor"). A row below the floor
   * that committed after the floor was set (a long transaction, another instance's write) is read
   * by the next full read.
   */
  private readFloor(now: number, full: boolean): number {
    while (this.reads.length > 1 && now - this.reads[1].at >= FLOOR_LAG_MS) this.reads.shift();
    if (full || now - this.lastFullRead >= this.interval) {
      this.lastFullRead = now;
      return 0;
    }
    return this.reads.length > 0 && now - this.reads[0].at >= FLOOR_LAG_MS ? this.reads[0].id : 0;
  }

  /** The next read from the start of the table: after a failed publish or delete, or a lease that was lost. */
  private readFromStart(): void {
    this.lastFullRead = -Infinity;
    this.reads = [];
  }

  /**
   * Deletes acknowledged rows in the background, after the DELETE before it: the next round need
   * not wait for it. A failed DELETE is logged with the backlog; its rows are read again.
   */
  private async remove(rows: OutboxRow[]): Promise<void> {
    await this.deleting?.done;
    const ids = rows.map((row) => row.id);
    // By id, not `id <= last`: a transaction that took a lower id may commit after the read.
    const done = this.dataSource
      .query(`DELETE FROM event_outbox WHERE id IN (${placeholders(ids)})`, ids)
      .then(
        () => this.outbox.removed(ids.length),
        (error: unknown) => {
          // Its rows are read again (and sent again, duplicates the broker drops) by the next read, from the start.
          this.readFromStart();
          return this.warnFailure(`deleting published events failed: ${messageOf(error)}`);
        },
      )
      .finally(() => {
        this.deleting = undefined;
      });
    this.deleting = { ids, done };
  }

  /**
   * Sends `rows` in order, all in flight, and returns how many of them, from the first, the
   * broker acknowledged. After a failure the connection is dropped (see the class comment).
   */
  private async publish(publisher: BatchPublisher, rows: OutboxRow[]): Promise<number> {
    const { acked, error, silent } = await publisher.publish(
      rows.map((row) => ({ subject: row.subject, payload: row.payload, id: row.event_id })),
      this.failures > 0 ? RETRY_ACK_TIMEOUT_MS : ACK_TIMEOUT_MS,
    );
    const now = Date.now();
    for (let i = 0; i < acked; i++) this.metrics.eventsDeliveryDelay.observe(Math.max(0, now - eventTime(rows[i].payload)) / 1000);
    this.metrics.eventsPublished.inc(acked);
    this.published += acked;
    if (error !== undefined) {
      this.lastError = error;
      const connection = this.connection;
      if (silent && connection && !(await answersPing(connection))) this.avoid(connection.getServer());
      await this.disconnect();
    }
    return acked;
  }

  /** The rows waiting and the age of the oldest, into the metrics and the outbox's full check. */
  private async count(): Promise<{ rows: number; ageSeconds: number }> {
    this.lastCount = performance.now();
    const [row] = await this.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM event_outbox');
    const rows = Number(row.n);
    // The oldest row is the first by id: its payload's time, not MIN(created_at) over the table.
    const [oldest] = rows === 0 ? [] : await this.dataSource.query<Array<{ payload: string }>>('SELECT payload FROM event_outbox ORDER BY id LIMIT 1');
    const ageSeconds = oldest ? Math.max(0, (Date.now() - eventTime(oldest.payload)) / 1000) : 0;
    this.outbox.counted(rows);
    this.metrics.eventsBacklogRows.set(rows);
    this.metrics.eventsBacklogAge.set(ageSeconds);
    return { rows, ageSeconds };
  }

  /** Takes or renews the lease when a third of it has passed; false while another instance holds it. */
  private async holdLease(): Promise<boolean> {
    if (performance.now() - this.leaseRenewed < RENEW_AFTER_MS) return true;
    const now = this.mysql ? 'CURRENT_TIMESTAMP(3)' : "strftime('%Y-%m-%d %H:%M:%f', 'now')";
    const until = this.mysql ? `CURRENT_TIMESTAMP(3) + INTERVAL ${LEASE_SECONDS} SECOND` : `strftime('%Y-%m-%d %H:%M:%f', 'now', '+${LEASE_SECONDS} seconds')`;
    const asked = performance.now();
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(
        `UPDATE event_relay_lease SET owner = ?, expires_at = ${until} WHERE id = 1 AND (owner = ? OR owner IS NULL OR expires_at < ${now})`,
        [this.owner, this.owner],
        true,
      );
      const held = (result.affected ?? 0) > 0;
      // Another holder published meanwhile: what this one read before says nothing of the rows now.
      if (!held) this.readFromStart();
      // Counted from when it was asked: the lease runs on the database's clock from some moment after that.
      this.leaseRenewed = held ? asked : -Infinity;
      return held;
    } finally {
      await runner.release();
    }
  }

  /**
   * Gives the lease up if this instance holds it (owner NULL, so the next round of any instance
   * takes it). Tried twice: on Galera a commit can fail certification against a write of another
   * node (error 1213), and what this write decides is only whether the others wait LEASE_SECONDS.
   * False when it failed.
   */
  private async release(): Promise<boolean> {
    const now = this.mysql ? 'CURRENT_TIMESTAMP(3)' : "strftime('%Y-%m-%d %H:%M:%f', 'now')";
    for (let attempt = 1; ; attempt++) {
      try {
        await this.dataSource.query(`UPDATE event_relay_lease SET owner = NULL, expires_at = ${now} WHERE id = 1 AND owner = ?`, [this.owner]);
        this.leaseRenewed = -Infinity;
        return true;
      } catch (error) {
        this.releaseError = messageOf(error);
        if (attempt === 2) return false;
      }
    }
  }

  /**
   * The publisher, connecting when there is none; undefined while the broker is unreachable or the
   * stream unusable. The stream is looked up (and created as the settings say when missing) on the
   * first connection; after that only when it was found unusable, or while publishes fail, in the
   * background: a stream deleted meanwhile is made again, and a cluster without a leader for it
   * (whose API does not answer) does not hold up the publish that finds the new leader.
   */
  private async jetstream(): Promise<BatchPublisher | undefined> {
    if (this.publisher && this.connection && !this.connection.isClosed()) {
      if (this.streamProblem && performance.now() - this.lastStreamCheck >= STREAM_RECHECK_MS) await this.lookAtStream();
      return this.streamProblem ? undefined : this.publisher;
    }
    try {
      // No reconnect of its own: after a lost connection the relay resumes from its first unacknowledged row.
      // noAsyncTraces: no Error (and its stack) made up front for each request (the stream's info and creation).
      this.connection = await connect({
        servers: this.servers,
        noRandomize: true,
        timeout: CONNECT_TIMEOUT_MS,
        reconnect: false,
        name: this.owner,
        noAsyncTraces: true,
      });
      // The servers before the one that took the connection did not (down, or stopped): tried last next time.
      const at = this.servers.findIndex((url) => sameServer(url, this.connection!.getServer()));
      for (let i = 0; i < at; i++) this.avoid(this.servers[0]);
      // checkAPI false: no account-info request first, which a cluster electing a leader leaves unanswered (API_TIMEOUT_MS per connection).
      this.manager = await jetstreamManager(this.connection, { timeout: API_TIMEOUT_MS, checkAPI: false });
      this.publisher = new BatchPublisher(this.connection, ACK_TIMEOUT_MS, this.stream);
      this.lastError = '';
    } catch (error) {
      await this.disconnect();
      this.lastError = messageOf(error);
      return undefined;
    }
    if (!this.streamKnown || this.streamProblem) await this.lookAtStream();
    else if (this.failures > 0 && performance.now() - this.lastStreamCheck >= STREAM_RECHECK_MS) void this.lookAtStream();
    return this.streamProblem ? undefined : this.publisher;
  }

  /**
   * Looks the stream up (checkStream): an unusable one is said at once, at error level, naming the
   * stream and why, and in the metric and the status page until it is fixed; a usable one that
   * differs from the settings, once, as a warning naming each difference. An API that does not
   * answer decides nothing.
   */
  private async lookAtStream(): Promise<void> {
    const manager = this.manager;
    if (!manager) return;
    this.lastStreamCheck = performance.now();
    try {
      const found = await checkStream(manager, this.wanted);
      if (!found.usable) {
        if (found.problem !== this.streamProblem) this.logger.error(`change events cannot be published: ${found.problem}`);
        this.streamProblem = found.problem;
        this.metrics.eventsStreamProblem.set(1);
        return;
      }
      if (this.streamProblem) this.logger.log(`the JetStream stream ${this.stream} takes this service's events again`);
      this.streamProblem = undefined;
      this.metrics.eventsStreamProblem.set(0);
      this.streamState = found.state;
      if (found.created)
        this.logger.log(`created the JetStream stream ${this.stream} for ${this.wanted.subjects.join(', ')} (${found.state.replicas} replicas)`);
      if (!this.streamKnown && found.differences.length > 0)
        this.logger.warn(
          `the JetStream stream ${this.stream} exists with other settings than this instance's, and is used as it is: ${found.differences.join('; ')}`,
        );
      this.streamKnown = true;
    } catch (error) {
      this.lastError = messageOf(error);
    }
  }

  /**
   * The stream as the status page shows it: JetStream's figures read now (within the API's timeout,
   * else as last read), and why the relay cannot use it, if it cannot.
   */
  async streamStatus(): Promise<{ problem: string | null; state: StreamState | null }> {
    if (this.streamProblem) await this.jetstream();
    const manager = this.connection && !this.connection.isClosed() ? this.manager : undefined;
    if (manager && !this.streamProblem) {
      this.streamState = await manager.streams.info(this.stream).then(stateOf, () => this.streamState);
    }
    return { problem: this.streamProblem ?? null, state: this.streamProblem ? null : (this.streamState ?? null) };
  }

  /**
   * Moves a server that does not answer (a batch and then a PING unanswered, a connection refused
   * or timed out) to the end of the list: a node that is paused or cut off accepts connections and
   * answers nothing, and each try of it costs a timeout, while a node that answers, even with a
   * refusal (no leader yet), is alive.
   */
  private avoid(server: string | undefined): void {
    const at = server === undefined ? -1 : this.servers.findIndex((url) => sameServer(url, server));
    if (at >= 0 && this.servers.length > 1) this.servers.push(...this.servers.splice(at, 1));
  }

  private async disconnect(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.manager = undefined;
    this.publisher?.close();
    this.publisher = undefined;
    await connection?.close().catch(() => undefined);
  }

  /** After a failed round or DELETE: the backlog counted (the database may be what failed) and the warning. */
  private async warnFailure(reason: string): Promise<void> {
    // Counted only when the warning is due: failed rounds repeat every RETRY_MAX_MS, and COUNT(*) reads the table.
    if (Date.now() - this.lastWarning < WARN_EVERY_MS) return;
    const backlog = await this.count().catch(() => ({ rows: NaN, ageSeconds: NaN }));
    this.warnBacklog(backlog.rows, backlog.ageSeconds, reason);
  }

  private warnBacklog(rows: number, ageSeconds: number, reason: string): void {
    if (Date.now() - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = Date.now();
    this.logger.warn(
      `${rows} change events wait in the outbox, the oldest for ${Math.round(ageSeconds)} s: ${reason}${this.lastError && !reason.includes(this.lastError) ? ` (${this.lastError})` : ''}`,
    );
  }
}

/** Whether a server of EVENTS_NATS_URL (`nats://user:pass@host:4222`) is `hostport`, as the client names the one it is connected to. */
function sameServer(url: string, hostport: string): boolean {
  const { host } = new URL(url.includes('://') ? url : `nats://${url}`);
  return host === hostport || (!host.includes(':') && `${host}:4222` === hostport);
}

/** Whether the server of `connection` answers a PING within SERVER_PING_MS: alive, whatever the stream's leader behind it does. */
function answersPing(connection: NatsConnection): Promise<boolean> {
  return within(
    connection.rtt().then(
      () => true,
      () => false,
    ),
    SERVER_PING_MS,
  );
}
