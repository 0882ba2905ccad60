import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

export interface MariaDb {
  /** `mysql://root@127.0.0.1:<port>/plantstore`, the database created empty. */
  url: string;
  port: number;
  /** Shuts the server down (SIGTERM, as an operator or orchestrator would) and waits for it. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A MariaDB server of the test's own (mariadb-install-db into a temporary data directory,
 * mariadbd on a free loopback port with its own socket and pid file), so that a test may
 * stop and start it without touching the shared server on 3306.
 */
export async function startMariaDb(): Promise<MariaDb> {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-mariadb-'));
  const datadir = join(dir, 'data');
  const asRoot = process.getuid?.() === 0 ? ['--user=root'] : [];
  await promisify(execFile)('mariadb-install-db', ['--no-defaults', `--datadir=${datadir}`, '--auth-root-authentication-method=normal', '--skip-test-db', ...asRoot]);
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const ping = async () => {
    const connection = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1000 });
    try {
      await connection.query('CREATE DATABASE IF NOT EXISTS plantstore CHARACTER SET utf8mb4');
    } finally {
      await connection.end();
    }
  };

  const start = async () => {
    const args = [
      '--no-defaults',
      `--datadir=${datadir}`,
      `--port=${port}`,
      '--bind-address=127.0.0.1',
      `--socket=${join(dir, 'mariadbd.sock')}`,
      `--pid-file=${join(dir, 'mariadbd.pid')}`,
      `--log-error=${join(dir, 'error.log')}`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=32M',
      ...asRoot,
    ];
    const server = spawn('mariadbd', args, { stdio: 'ignore' });
    child = server;
    exited = new Promise((resolve) => server.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`mariadbd exited with ${server.exitCode}; see ${join(dir, 'error.log')}`);
      try {
        await ping();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };

  const stop = async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    child = undefined;
  };

  await start();
  return {
    url: `mysql://root@127.0.0.1:${port}/plantstore`,
    port,
    start,
    stop,
    destroy: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
