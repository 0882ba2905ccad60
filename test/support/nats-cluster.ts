import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from './server.js';
import type { PublishedEvent } from './nats.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ClusterNode {
  name: string;
  port: number;
  url: string;
  running(): boolean;
  /** Starts the node again on its port and store (it rejoins the cluster); resolves once it answers. */
  start(): Promise<void>;
  kill(): Promise<void>;
  /** Freezes the process (SIGSTOP): its sockets stay open and nothing answers, as behind a partition. */
  pause(): Promise<void>;
  resume(): void;
}

/**
 * Three nats-server processes of the test's own (Debian's package), one JetStream cluster: each
 * listens for clients and for routes on spare ports, with a store directory of its own, and routes
 * to the other two (`--cluster`, `--routes`, `--cluster_name`, `--server_name`), as NATS's Helm
 * chart deploys it. Nodes are killed, paused and started again by the tests.
 */
export class NatsCluster {
  private constructor(
    readonly nodes: ClusterNode[],
    private readonly dir: string,
  ) {}

  /** The three client URLs, comma-separated, as EVENTS_NATS_URL takes them. */
  get urls(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  static async start(size = 3): Promise<NatsCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-nats-cluster-'));
    const cluster = `plant-store-${randomUUID().slice(0, 8)}`;
    const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()));
    const routes = Array.from({ length: size }, (_, i) => `nats://127.0.0.1:${ports[size + i]}`);
    const nodes = Array.from({ length: size }, (_, i): ClusterNode => {
      const name = `${cluster}-n${i + 1}`;
      const port = ports[i];
      const store = join(dir, `n${i + 1}`);
      mkdirSync(store, { recursive: true });
      let child: ChildProcess | undefined;
      const answers = () =>
        connect({ servers: `nats://127.0.0.1:${port}`, timeout: 300, reconnect: false }).then(
          async (nc) => {
            const answered = nc.info?.server_name;
            await nc.close();
            return answered === name;
          },
          () => false,
        );
      const node: ClusterNode = {
        name,
        port,
        url: `nats://127.0.0.1:${port}`,
        running: () => child !== undefined && child.exitCode === null,
        start: async () => {
          if (node.running()) return;
          const started = spawn(
            process.env.NATS_SERVER ?? '/usr/sbin/nats-server',
            [
              '-a',
              '127.0.0.1',
              '-p',
              String(port),
              '-js',
              '-sd',
              store,
              '--server_name',
              name,
              '--cluster_name',
              cluster,
              '--cluster',
              routes[i],
              '--routes',
              routes.filter((_, j) => j !== i).join(','),
            ],
            { stdio: 'ignore' },
          );
          child = started;
          for (let t = 0; t < 200; t++) {
            if (await answers()) return;
            if (started.exitCode !== null) throw new Error(`nats-server ${name} exited with ${started.exitCode}`);
            await sleep(100);
          }
          throw new Error(`nats-server ${name} did not start on port ${port}`);
        },
        kill: async () => {
          const target = child;
          child = undefined;
          if (!target || target.exitCode !== null) return;
          const exited = new Promise((resolve) => target.once('exit', resolve));
          target.kill('SIGCONT');
          target.kill('SIGKILL');
          await exited;
        },
        pause: async () => {
          const pid = child?.pid;
          if (!pid) throw new Error(`${name} is not running`);
          child!.kill('SIGSTOP');
          for (let t = 0; t < 100; t++) {
            const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
            if (state === 'T' || state === 't') return;
            await sleep(20);
          }
          throw new Error(`${name} did not stop on SIGSTOP`);
        },
        resume: () => void child?.kill('SIGCONT'),
      };
      return node;
    });
    const started = new NatsCluster(nodes, dir);
    try {
      await Promise.all(nodes.map((n) => n.start()));
      await started.waitForMetaLeader();
    } catch (error) {
      await started.destroy();
      throw error;
    }
    return started;
  }

  /** Connects to the running nodes and runs `work` with a JetStream manager, within `timeoutMs` per API request. */
  private async withManager<T>(work: (manager: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>, timeoutMs = 1000): Promise<T> {
    const servers = this.nodes.filter((n) => n.running()).map((n) => n.url);
    const nc = await connect({ servers, timeout: 1000, reconnect: false });
    try {
      return await work(await jetstreamManager(nc, { timeout: timeoutMs }));
    } finally {
      await nc.close();
    }
  }

  /** Resolves once the cluster has elected its JetStream meta leader (the API answers). */
  async waitForMetaLeader(ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      const ok = await this.withManager(async (m) => (await m.getAccountInfo(), true)).catch(() => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`the JetStream cluster elected no meta leader within ${ms} ms`);
      await sleep(200);
    }
  }

  /** The stream's info as a running node answers it; undefined while nobody can (no leader, no quorum). */
  streamInfo(stream: string): Promise<StreamInfo | undefined> {
    return this.withManager((m) => m.streams.info(stream)).catch(() => undefined);
  }

  /** The node leading `stream` now, once it has a leader. */
  async streamLeader(stream: string, ms = 60_000): Promise<ClusterNode> {
    const deadline = Date.now() + ms;
    for (;;) {
      const leader = (await this.streamInfo(stream))?.cluster?.leader;
      const node = this.nodes.find((n) => n.name === leader && n.running());
      if (node) return node;
      if (Date.now() > deadline) throw new Error(`stream ${stream} has no leader within ${ms} ms`);
      await sleep(100);
    }
  }

  /**
   * Every message of the stream, in stream order, asked of whichever running node answers; asked
   * again while the cluster answers that JetStream is temporarily unavailable (a node that just
   * came back, a meta leader being elected), for a minute at most.
   */
  async events(stream: string): Promise<PublishedEvent[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.readEvents(stream);
      } catch (error) {
        if (attempt === 300) throw error;
        await sleep(200);
      }
    }
  }

  private async readEvents(stream: string): Promise<PublishedEvent[]> {
    return this.withManager(async (manager) => {
      const info = await manager.streams.info(stream);
      const events: PublishedEvent[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const message = await manager.streams.getMessage(stream, { seq }).catch(() => null);
        if (!message) continue;
        events.push({ natsSubject: message.subject, msgId: message.header?.get('Nats-Msg-Id'), storedAt: message.time.getTime(), event: message.json() });
      }
      return events;
    }, 5000);
  }

  async destroy(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
