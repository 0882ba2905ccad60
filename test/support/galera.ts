import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

export const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';

/** The service's account, as docs/deployment.md has it created: ALL PRIVILEGES on its database, nothing global. */
export const APP_USER = 'plantstore';

export interface NodeStatus {
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, Initialized… */
  state: string;
  /** wsrep_cluster_status: Primary, non-Primary, Disconnected. */
  cluster: string;
  size: number;
  ready: boolean;
}

export interface GaleraNode {
  index: number;
  port: number;
  /**
   * mysql://plantstore:<password>@127.0.0.1:<port>/<database>: the application account, what the
   * instances, the command line and migration:run connect as (its grant: GaleraCluster.createDatabase).
   */
  url(database: string): string;
  /** Running (possibly paused) as far as this harness knows. */
  running(): boolean;
  /** Starts the node again (it joins the cluster: IST or SST); resolves once its server answers. */
  start(): Promise<void>;
  /** Sends a signal; SIGKILL and SIGTERM wait for the process to end. */
  signal(signal: 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** The node's own view, or null when it does not answer within a second. */
  status(): Promise<NodeStatus | null>;
  /** Runs SQL on this node as root, over its Unix socket (a fresh connection each time): the test's own looks and switches. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  log(): string;
}

export interface GaleraCluster {
  nodes: GaleraNode[];
  /** Resolves once every running node sees the whole cluster primary and itself synced. */
  waitSynced(ms?: number): Promise<void>;
  /**
   * Creates `name` (utf8mb4) on node 1 and grants the application account ALL PRIVILEGES on it and
   * nothing else: the documented grant. Both statements replicate to every node.
   */
  createDatabase(name: string): Promise<void>;
  destroy(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether 127.0.0.1:`port` can be listened on now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `count` ports free now, below the kernel's range of ephemeral ports. A node binds its state
 * transfer ports only while it joins, and a port of the ephemeral range can be handed meanwhile to
 * one of the many client connections of a test under load, or to another server's listen(0): seen
 * in CI, where a node's rejoin failed because its rsync could not listen on its SST port. Below the
 * range, only a program that asks for that very port can take it.
 */
async function distinctFreePorts(count: number): Promise<number[]> {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: the IANA range's start is a fair guess.
  }
  const from = 10_000;
  const ports = new Set<number>();
  while (ports.size < count) {
    const port = from + Math.floor(Math.random() * (Math.max(low, from + 1_000) - from));
    if (!ports.has(port) && (await bindable(port))) ports.add(port);
  }
  return [...ports];
}

/**
 * A MariaDB Galera cluster of `size` nodes of its own (Debian's mariadb-server + galera-4,
 * rsync for state transfers), on free loopback ports in a temporary directory: node 1
 * bootstraps (--wsrep-new-cluster), the others join it. It listens on 127.0.0.1 only and lives
 * for one test file.
 *
 * Grant tables on, and two accounts. The test's own queries (`query()`, `status()`) are root's,
 * over each node's Unix socket: mariadb-install-db's root@localhost with an empty password
 * (--auth-root-authentication-method=normal; with --skip-name-resolve a TCP client is never
 * `localhost`). The service connects over TCP as the application account `plantstore`@'%' (a
 * random password per cluster), with exactly the documented grant: ALL PRIVILEGES on its database
 * (`createDatabase`), nothing global, no SUPER.
 * That is the point: every Galera node logs its writes as a binary log does, and then the server
 * refuses CREATE TRIGGER to an account without SUPER (log_bin_trust_function_creators is OFF here,
 * its default), so the service must run without its plant event triggers; run as root, as it was
 * with --skip-grant-tables, the test created them and hid that.
 *
 * Run as root, mariadbd runs as the `mysql` user: the rsync daemon of a state transfer
 * drops root to `nobody`, which could not write the joiner's data directory.
 * The group-communication timeouts are shortened (a peer silent for 3 s is suspected,
 * 6 s evicted) so that a killed or paused node leaves the primary component quickly;
 * keep-alives go every second, far more often than a loaded machine stalls.
 */
export async function startGaleraCluster(size = 3): Promise<GaleraCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-galera-'));
  const root = process.getuid?.() === 0;
  if (root) chmodSync(dir, 0o755);
  const ports = await distinctFreePorts(size * 4);
  const specs = Array.from({ length: size }, (_, i) => ({
    index: i + 1,
    home: join(dir, `node${i + 1}`),
    mysql: ports[i * 4],
    galera: ports[i * 4 + 1],
    ist: ports[i * 4 + 2],
    sst: ports[i * 4 + 3],
  }));
  const address = `gcomm://${specs.map((s) => `127.0.0.1:${s.galera}`).join(',')}`;
  const user = root ? ['--user=mysql'] : [];
  const password = randomBytes(12).toString('base64url');

  const installing = Promise.all(
    specs.map(async (spec) => {
      // A temporary directory of its own: other programs' clean-ups of /tmp must not reach it.
      mkdirSync(join(spec.home, 'tmp'), { recursive: true });
      if (root) execFileSync('chown', ['-R', 'mysql:mysql', spec.home]);
      await promisify(execFile)(
        'mariadb-install-db',
        [
          '--no-defaults',
          `--datadir=${join(spec.home, 'data')}`,
          `--tmpdir=${join(spec.home, 'tmp')}`,
          '--auth-root-authentication-method=normal',
          '--skip-test-db',
          ...user,
        ],
        { timeout: 180_000 },
      );
    }),
  );
  await installing.catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });

  const nodes = specs.map((spec): GaleraNode & { bootstrap(): Promise<void> } => {
    let child: ChildProcess | undefined;
    let output = '';
    const args = (extra: string[]) => [
      '--no-defaults',
      `--datadir=${join(spec.home, 'data')}`,
      `--socket=${join(spec.home, 'mariadb.sock')}`,
      `--pid-file=${join(spec.home, 'mariadb.pid')}`,
      `--tmpdir=${join(spec.home, 'tmp')}`,
      `--port=${spec.mysql}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=16M',
      '--innodb-flush-log-at-trx-commit=2',
      '--max-connections=400',
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      '--wsrep-on=ON',
      `--wsrep-provider=${GALERA_PROVIDER}`,
      '--wsrep-cluster-name=plant-store-test',
      `--wsrep-cluster-address=${address}`,
      `--wsrep-node-name=node${spec.index}`,
      `--wsrep-node-address=127.0.0.1:${spec.galera}`,
      `--wsrep-node-incoming-address=127.0.0.1:${spec.mysql}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${spec.sst}`,
      `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${spec.galera};ist.recv_addr=127.0.0.1:${spec.ist};gcache.size=64M;evs.keepalive_period=PT1S;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.install_timeout=PT6S`,
      ...user,
      ...extra,
    ];

    const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
      const connection = await mysql.createConnection({ socketPath: join(spec.home, 'mariadb.sock'), user: 'root', connectTimeout: 2000 });
      try {
        return (await connection.query({ sql, values: params, timeout: 10_000 }))[0] as T[];
      } finally {
        connection.destroy();
      }
    };

    const status = async (): Promise<NodeStatus | null> => {
      try {
        const rows = await Promise.race([
          query<{ Variable_name: string; Value: string }>(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size', 'wsrep_ready')",
          ),
          sleep(1000).then(() => null),
        ]);
        if (!rows) return null;
        const value = new Map(rows.map((r) => [r.Variable_name, r.Value]));
        return {
          state: value.get('wsrep_local_state_comment') ?? '',
          cluster: value.get('wsrep_cluster_status') ?? '',
          size: Number(value.get('wsrep_cluster_size')),
          ready: value.get('wsrep_ready') === 'ON',
        };
      } catch {
        return null;
      }
    };

    const launch = async (extra: string[]) => {
      if (child) return;
      output = '';
      const started = spawn('mariadbd', args(extra), { stdio: ['ignore', 'pipe', 'pipe'] });
      started.stdout.on('data', (chunk) => (output += chunk));
      started.stderr.on('data', (chunk) => (output += chunk));
      started.once('exit', () => {
        if (child === started) child = undefined;
      });
      child = started;
      // Answers SQL: for a joiner that is after its state transfer.
      const deadline = Date.now() + 180_000;
      while (!(await status())) {
        if (started.exitCode !== null) throw new Error(`node ${spec.index} (mariadbd) exited with ${started.exitCode}:\n${output.slice(-4000)}`);
        if (Date.now() > deadline) throw new Error(`node ${spec.index} did not start:\n${output.slice(-4000)}`);
        await sleep(250);
      }
    };

    return {
      index: spec.index,
      port: spec.mysql,
      url: (database) => `mysql://${APP_USER}:${encodeURIComponent(password)}@127.0.0.1:${spec.mysql}/${encodeURIComponent(database)}`,
      running: () => child !== undefined,
      bootstrap: () => launch(['--wsrep-new-cluster']),
      start: () => launch([]),
      signal: async (signal) => {
        const target = child;
        if (!target) return;
        const exited = new Promise((resolve) => target.once('exit', resolve));
        target.kill(signal);
        if (signal === 'SIGKILL' || signal === 'SIGTERM') await exited;
      },
      status,
      query,
      log: () => output,
    };
  });

  const cluster: GaleraCluster = {
    nodes,
    createDatabase: async (name) => {
      await nodes[0].query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      await nodes[0].query(`GRANT ALL PRIVILEGES ON \`${name}\`.* TO '${APP_USER}'@'%'`);
    },
    waitSynced: async (ms = 240_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const running = nodes.filter((n) => n.running());
        const statuses = await Promise.all(running.map((n) => n.status()));
        if (statuses.every((s) => s && s.state === 'Synced' && s.cluster === 'Primary' && s.ready && s.size === running.length)) return;
        if (Date.now() > deadline) throw new Error(`the cluster did not settle within ${ms} ms: ${JSON.stringify(statuses)}`);
        await sleep(250);
      }
    },
    destroy: async () => {
      for (const node of nodes) {
        await node.signal('SIGCONT');
        await node.signal('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };

  try {
    await nodes[0].bootstrap();
    await cluster.waitSynced();
    // Before the joiners start: their state transfer brings the account along.
    await nodes[0].query(`CREATE USER '${APP_USER}'@'%' IDENTIFIED BY ?`, [password]);
    // One at a time: each joiner takes its state transfer from a synced donor.
    for (const node of nodes.slice(1)) {
      await node.start();
      await cluster.waitSynced();
    }
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
