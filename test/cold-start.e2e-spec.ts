import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from './support/cli.js';
import { schemaOf, queryDatabase } from './support/schema.js';
import { startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, type TestDatabase } from './support/test-app.js';

/**
 * Instances started at the same moment on an empty database (without a lock, one
 * of two exited in 6 of 20 rounds with "Table 'api_tokens' already exists"). Each round
 * starts two servers, two command lines and `migration:run` at once: each of them
 * migrates at start-up, under the migration lock.
 */
const ROUNDS = 3;
const MIGRATE = fileURLToPath(new URL('../dist/migrate.js', import.meta.url));
const LOCK_TABLE = 'CREATE TABLE migration_lock (id INTEGER PRIMARY KEY, owner VARCHAR(200) NOT NULL, expires_at BIGINT NOT NULL)';

/** A loaded machine starts five processes at once slowly: the deadline is generous, the check is that they all come up. */
const start = (database: TestDatabase) => startServer(database, {}, { readyWithinMs: 120_000 });

interface Run {
  exited: Promise<number | null>;
  output: () => string;
}

/** `npm run migration:run` without the build: the built script itself. */
function migrate(database: TestDatabase, command = 'run'): Run {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test', ...database.env };
  if (!database.env.DATABASE_URL) delete env.DATABASE_URL;
  const child = spawn(process.execPath, [MIGRATE, command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return { exited: new Promise((resolve) => child.once('exit', resolve)), output: () => output };
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('instances started together on an empty database', () => {
  let reference: string;

  beforeAll(async () => {
    const database = await createTestDatabase();
    try {
      await expect(runCli(database, ['tokens', 'list'])).resolves.toMatchObject({ code: 0 });
      reference = await schemaOf(database.env);
    } finally {
      await database.drop();
    }
  });

  it(`all come up, ${ROUNDS} rounds of five processes, and the schema ends exactly as after one start`, async () => {
    let started = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const database = await createTestDatabase();
      const servers: ServerProcess[] = [];
      try {
        const job = migrate(database);
        const [a, b, cliA, cliB] = await Promise.allSettled([
          start(database),
          start(database),
          runCli(database, ['tokens', 'list']),
          runCli(database, ['tokens', 'list']),
        ]);
        for (const result of [a, b]) if (result.status === 'fulfilled') servers.push(result.value);
        expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
        expect([cliA, cliB]).toEqual([
          { status: 'fulfilled', value: { code: 0, stdout: '', stderr: '' } },
          { status: 'fulfilled', value: { code: 0, stdout: '', stderr: '' } },
        ]);
        await expect(job.exited).resolves.toBe(0);
        for (const server of servers) await server.http.get('/health/ready').expect(200);
        started += 5;
        await expect(schemaOf(database.env)).resolves.toBe(reference);
        // Released by whoever held it last.
        await expect(queryDatabase(database.env, ['SELECT owner FROM migration_lock'])).resolves.toEqual([[]]);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
        await database.drop();
      }
    }
    expect(started).toBe(ROUNDS * 5);
  }, 300_000);

  it('migration:run waits while another process holds the lock, then migrates', async () => {
    const database = await createTestDatabase();
    try {
      await queryDatabase(database.env, [
        LOCK_TABLE,
        `INSERT INTO migration_lock (id, owner, expires_at) VALUES (1, 'other-host:42:live', ${Date.now() + 600_000})`,
      ]);
      const job = migrate(database);
      await waitFor(() => job.output().includes('waiting for the migrations run by other-host:42:live'), 'migration:run reports the holder');
      // Nothing migrated while the lock is held by someone else.
      await expect(queryDatabase(database.env, ['SELECT COUNT(*) AS n FROM migration_lock'])).resolves.toEqual([[{ n: 1 }]]);
      await expect(queryDatabase(database.env, ['SELECT name FROM migrations'])).rejects.toThrow(/migrations/);
      await queryDatabase(database.env, ['DELETE FROM migration_lock']);
      await expect(job.exited).resolves.toBe(0);
      expect(job.output()).toContain('applied InitialSchema1763700000000');
      await expect(schemaOf(database.env)).resolves.toBe(reference);
    } finally {
      await database.drop();
    }
  }, 120_000);

  it('a lock whose holder stopped renewing it (crashed) is taken over; a second run finds nothing to do', async () => {
    const database = await createTestDatabase();
    try {
      await queryDatabase(database.env, [
        LOCK_TABLE,
        `INSERT INTO migration_lock (id, owner, expires_at) VALUES (1, 'crashed-host:7:gone', ${Date.now() - 1000})`,
      ]);
      const job = migrate(database);
      await expect(job.exited).resolves.toBe(0);
      await expect(schemaOf(database.env)).resolves.toBe(reference);
      await expect(queryDatabase(database.env, ['SELECT owner FROM migration_lock'])).resolves.toEqual([[]]);
      const again = migrate(database);
      await expect(again.exited).resolves.toBe(0);
      expect(again.output()).toContain('no pending migrations');
    } finally {
      await database.drop();
    }
  }, 120_000);
});
