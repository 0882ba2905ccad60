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
    const port = await freePort();
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
      const up = await Promise.race([
        client.ping().then(
          () => true,
          () => false,
        ),
        failed,
      ]).finally(() => client.disconnect());
      if (up) return redis;
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
