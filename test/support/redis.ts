import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './server.js';

/**
 * A redis-server of the test's own (Debian's package, a spare port, nothing saved), so that the
 * suite needs no Redis running beside it; `TEST_REDIS_URL` names one to use instead.
 */
export class TestRedis {
  private constructor(
    readonly url: string,
    private readonly child?: ChildProcess,
  ) {}

  static async create(): Promise<TestRedis> {
    if (process.env.TEST_REDIS_URL) return new TestRedis(process.env.TEST_REDIS_URL);
    // A spare port is spare until something listens on it: another test run's server can take it
    // between the pick and the start. The server that answers must be this one (its process id).
    for (let attempt = 1; attempt <= 5; attempt++) {
      const redis = await TestRedis.start(await freePort());
      if (redis) return redis;
    }
    throw new Error('redis-server: five spare ports in a row were taken by other processes before it could listen');
  }

  /** A redis-server on `port`; undefined when another process answers there. */
  private static async start(port: number): Promise<TestRedis | undefined> {
    const child = spawn(process.env.REDIS_SERVER ?? 'redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const failed = new Promise<never>((_, reject) =>
      child.once('error', (error) => reject(new Error(`redis-server: ${error.message} (scripts/install-test-tools.sh installs it)`))),
    );
    const redis = new TestRedis(`redis://127.0.0.1:${port}`, child);
    for (let i = 0; i < 100; i++) {
      const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      const pid = await Promise.race([
        client.info('server').then(
          (info) => Number(/^process_id:(\d+)/m.exec(info)?.[1]),
          () => undefined,
        ),
        failed,
      ]).finally(() => client.disconnect());
      if (pid === child.pid) return redis;
      if (pid !== undefined || child.exitCode !== null) {
        await redis.close();
        return undefined;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server did not start on ${redis.url}`);
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }
}
