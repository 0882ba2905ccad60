import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from './server.js';

export interface MariaDb {
  /** mysql://root@127.0.0.1:<port>/plantstore — the database `plantstore` exists. */
  url: string;
  port: number;
  /** Its Unix socket: root connects there without TLS or password, whatever the options. */
  socket: string;
  /** Stops the server (SIGTERM, a clean shutdown); the data directory stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory, resolving once it answers. */
  start(): Promise<void>;
  /** Stops it and deletes the data directory. */
  destroy(): Promise<void>;
}

/** The spare port was taken by another server before this one could listen on it. */
class PortTaken extends Error {}

export interface MariaDbOptions {
  /** Serve TLS with these PEM files and refuse unencrypted TCP connections (require_secure_transport). */
  tls?: { ca: string; cert: string; key: string };
  /** Check users and their REQUIRE clauses (CREATE USER … REQUIRE X509); root has no password. */
  grantTables?: boolean;
  /** performance_schema on, e.g. to read the TLS cipher of other sessions (status_by_thread). */
  performanceSchema?: boolean;
  /** A binary log in ROW format, as a replicated or backed-up server writes (MySQL 8's default): CREATE TRIGGER then needs SUPER or log_bin_trust_function_creators. */
  binaryLog?: boolean;
}

/**
 * A private MariaDB server (its own data directory, port and socket) that a test may stop
 * and start at will to simulate an outage, without touching the shared server on 3306.
 * No authentication (--skip-grant-tables) unless asked: it listens on 127.0.0.1 only and lives for one test file.
 */
export async function startMariaDb(options: MariaDbOptions = {}): Promise<MariaDb> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-mariadb-'));
  const datadir = join(dir, 'data');
  const port = await freePort();
  // mariadbd refuses to run as root unless told to; elsewhere it runs as the current user.
  const user = process.getuid?.() === 0 ? ['--user=root'] : [];
  await promisify(execFile)(
    'mariadb-install-db',
    ['--no-defaults', `--datadir=${datadir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...user],
    { timeout: 120_000 },
  );

  const socket = join(dir, 'mariadb.sock');
  const extra = [
    ...(options.tls ? [`--ssl-ca=${options.tls.ca}`, `--ssl-cert=${options.tls.cert}`, `--ssl-key=${options.tls.key}`, '--require-secure-transport=ON'] : []),
    ...(options.grantTables ? [] : ['--skip-grant-tables']),
    ...(options.performanceSchema ? ['--performance-schema=ON'] : []),
    ...(options.binaryLog ? [`--log-bin=${join(dir, 'binlog')}`, '--binlog-format=ROW', '--server-id=1'] : ['--skip-log-bin']),
  ];
  let server: ChildProcess | undefined;
  let output = '';

  const answers = async (): Promise<boolean> => {
    try {
      // Over the socket when TCP needs TLS: root has neither certificate nor password.
      const where = options.tls ? { socketPath: socket } : { host: '127.0.0.1', port };
      const connection = await mysql.createConnection({ ...where, user: 'root', connectTimeout: 1000 });
      try {
        // The server on the port must be this one: another test run's can take a spare port between its pick and this start.
        const [[{ dir: answering }]] = await connection.query<Array<mysql.RowDataPacket & { dir: string }>>('SELECT @@datadir AS dir');
        if (resolve(answering) !== resolve(datadir)) throw new PortTaken(`port ${port} is another MariaDB's (${answering}), not this test's`);
        await connection.query('CREATE DATABASE IF NOT EXISTS plantstore CHARACTER SET utf8mb4');
      } finally {
        await connection.end();
      }
      return true;
    } catch (error) {
      if (error instanceof PortTaken) throw error;
      return false;
    }
  };

  const start = async () => {
    if (server) return;
    output = '';
    const child = spawn(
      'mariadbd',
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--socket=${socket}`,
        `--pid-file=${join(dir, 'mariadb.pid')}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        ...extra,
        '--innodb-buffer-pool-size=32M',
        '--innodb-log-file-size=16M',
        ...user,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    server = child;
    const deadline = Date.now() + 60_000;
    while (!(await answers())) {
      if (child.exitCode !== null) throw new Error(`mariadbd exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`mariadbd did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const stop = async () => {
    const child = server;
    server = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `mysql://root@127.0.0.1:${port}/plantstore`,
    port,
    socket,
    start,
    stop,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
