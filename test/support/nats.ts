import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './server.js';

/** A CloudEvent as the relay publishes it, with the subject and message id it was published under. */
export interface PublishedEvent {
  natsSubject: string;
  msgId: string | undefined;
  /** When the broker stored it (ms since the epoch, the broker's clock: this machine's). */
  storedAt: number;
  event: {
    specversion: string;
    id: string;
    source: string;
    type: string;
    subject: string;
    time: string;
    datacontenttype: string;
    data: Record<string, unknown>;
  };
}

/** The spare port was taken by another process before this server could listen on it. */
class PortTaken extends Error {}

/**
 * A nats-server of the test's own (Debian's package, `-js`, a spare port, a temporary store
 * directory), so that a test can stop and restart the broker without touching anyone else's.
 * It is known by a name of its own (`--server_name`): a spare port is only spare until something
 * listens on it, and with other test runs on the machine another nats-server can take it between
 * the pick and the start; a test would then talk to that one, and its pause would freeze nothing.
 */
export class TestNats {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'plant-store-nats-'));
  private readonly name = `plant-store-test-${randomUUID()}`;

  private constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static async create({ start = true } = {}): Promise<TestNats> {
    for (let attempt = 1; ; attempt++) {
      const nats = new TestNats(await freePort());
      if (!start) return nats;
      try {
        await nats.start();
        return nats;
      } catch (error) {
        await nats.close();
        if (!(error instanceof PortTaken) || attempt === 5) throw error;
      }
    }
  }

  async start(): Promise<void> {
    const child = spawn(
      process.env.NATS_SERVER ?? '/usr/sbin/nats-server',
      ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir, '--server_name', this.name],
      { stdio: 'ignore' },
    );
    this.child = child;
    for (let i = 0; i < 100; i++) {
      const answered = await connect({ servers: this.url, timeout: 200, reconnect: false }).then(
        async (nc) => {
          const name = nc.info?.server_name;
          await nc.close();
          return name;
        },
        () => undefined,
      );
      if (answered === this.name) return;
      if (answered !== undefined || child.exitCode !== null) throw new PortTaken(`port ${this.port} is another process's: nats-server could not listen on it`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`nats-server did not start on ${this.url}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  /**
   * Freezes the broker (SIGSTOP) or lets it go on (SIGCONT): its connections stay open and what
   * clients send waits unanswered, as with a broker stuck under load or a network that drops
   * packets, rather than refused as when it is stopped.
   */
  async pause(): Promise<void> {
    const child = this.child;
    if (!child?.pid) throw new Error('nats-server is not running: nothing to pause');
    child.kill('SIGSTOP');
    // Stopped once the kernel says so (state T in /proc): until every thread has stopped, one busy
    // in a system call (JetStream's store on a loaded disk) can still finish what it had begun.
    for (let i = 0; i < 100; i++) {
      const state = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state === 'T' || state === 't') return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`nats-server (pid ${child.pid}) did not stop on SIGSTOP`);
  }
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async close(): Promise<void> {
    this.resume();
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Every message of the stream, in stream order. */
  async events(stream: string): Promise<PublishedEvent[]> {
    const nc = await connect({ servers: this.url });
    try {
      const manager = await jetstreamManager(nc);
      const info = await manager.streams.info(stream).catch(() => undefined);
      if (!info) return [];
      const events: PublishedEvent[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await manager.streams.getMessage(stream, { seq });
        if (!message) continue;
        events.push({ natsSubject: message.subject, msgId: message.header?.get('Nats-Msg-Id'), storedAt: message.time.getTime(), event: message.json() });
      }
      return events;
    } finally {
      await nc.close();
    }
  }
}
