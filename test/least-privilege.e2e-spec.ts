import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { migrations as ALL_MIGRATIONS } from '../src/database/database-options.js';
import { PlantEventTriggers1764800000000 } from '../src/database/migrations/1764800000000-plant-event-triggers.js';
import { EVENT_SOURCE } from '../src/events/outbox.service.js';
import { runCli } from './support/cli.js';
import { startMariaDb, type MariaDb } from './support/mariadb.js';
import { TestNats } from './support/nats.js';
import { schemaOf } from './support/schema.js';
import { startServer, type ServerProcess } from './support/server.js';
import { bearer, type TestDatabase } from './support/test-app.js';

/**
 * The service as operators run it on MySQL: a server that writes a binary log (MySQL 8's default,
 * a managed MySQL with backups, every Galera node) and an account with the documented grant only
 * (docs/deployment.md, "The database account"): the privileges it names on the service's database,
 * or `ALL PRIVILEGES` on it as its examples give, or `SELECT, INSERT, UPDATE, DELETE` for instances
 * that do not migrate. Such a server refuses CREATE
 * TRIGGER, and DROP TRIGGER too, to an account without SUPER unless `log_bin_trust_function_creators`
 * is on; the specs that run as root never see that. Each test runs with the variable off (events in
 * each write's transaction) and on (the plants table's triggers).
 */
const MIGRATE = fileURLToPath(new URL('../dist/migrate.js', import.meta.url));
/** The release before the triggers: every migration up to the one that creates them. */
const RELEASE_BEFORE = ALL_MIGRATIONS.slice(0, ALL_MIGRATIONS.indexOf(PlantEventTriggers1764800000000));
/** What docs/deployment.md names for the account that migrates, in the order SHOW GRANTS writes it. */
const MIGRATING_GRANT = 'SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, TRIGGER';
const TRANSACTION_LINE = "plant change events: written in each write's transaction";
const TRIGGERS_LINE = "plant change events: written by the plants table's triggers";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a MariaDB server with binary logging on, as the least-privilege account the deployment docs give', () => {
  let server: MariaDb;
  let admin: mysql.Connection;
  let broker: TestNats;

  beforeAll(async () => {
    server = await startMariaDb({ grantTables: true, binaryLog: true });
    admin = await mysql.createConnection({ socketPath: server.socket, user: 'root' });
    broker = await TestNats.create();
  }, 120_000);

  afterAll(async () => {
    await admin?.end();
    await server?.destroy();
    await broker?.close();
  });

  const trust = async (on: boolean) => void (await admin.query(`SET GLOBAL log_bin_trust_function_creators = ${on ? 1 : 0}`));
  const triggers = async (database: string) =>
    (
      await admin.query<mysql.RowDataPacket[]>('SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY 1', [database])
    )[0].map((row) => row.name as string);

  /** A new database and an account of its own with exactly `grant` on it, as an administrator makes them. */
  const account = async (grant = 'ALL PRIVILEGES', database = `plantstore_${randomBytes(4).toString('hex')}`) => {
    const user = `app_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await admin.query(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    await admin.query(`GRANT ${grant} ON \`${database}\`.* TO '${user}'@'%'`);
    // The account has that grant and nothing else: no global privilege to hide a refusal.
    const [grants] = await admin.query<mysql.RowDataPacket[]>(`SHOW GRANTS FOR '${user}'@'%'`);
    expect(grants.map((row) => String(Object.values(row)[0]).replace(/ IDENTIFIED BY PASSWORD '[^']*'/, ''))).toEqual([
      `GRANT USAGE ON *.* TO \`${user}\`@\`%\``,
      `GRANT ${grant} ON \`${database}\`.* TO \`${user}\`@\`%\``,
    ]);
    const db: TestDatabase & { name: string } = {
      name: database,
      env: { DATABASE_URL: `mysql://${user}:${password}@127.0.0.1:${server.port}/${database}` },
      drop: async () => {
        await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
        await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
      },
    };
    return db;
  };

  const migrate = (database: TestDatabase, command: 'run' | 'revert') =>
    new Promise<{ code: number; output: string }>((resolve) => {
      execFile(process.execPath, [MIGRATE, command], { env: { ...process.env, ...database.env } }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
      );
    });

  const start = (database: TestDatabase, stream: string, env: Record<string, string> = {}) =>
    startServer(database, {
      EVENTS_NATS_URL: broker.url,
      EVENTS_STREAM: stream,
      EVENTS_SUBJECT_PREFIX: stream.toLowerCase(),
      EVENTS_RELAY_INTERVAL_MS: '100',
      TOKEN_CACHE_SECONDS: '0',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      // The start-up summary is written at info.
      LOG_LEVEL: 'log',
      ...env,
    });

  /** The server's log once it holds `text` (the log reaches the pipe after the server is ready). */
  const logOf = async (instance: ServerProcess, text: string) => {
    for (let i = 0; i < 100 && !instance.output().includes(text); i++) await sleep(100);
    return instance.output();
  };

  const outboxRows = async (database: string) =>
    Number((await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${database}\`.event_outbox`))[0][0].n);

  /** `type id` of every event in the stream, once the outbox is empty and the stream holds at least `count`. */
  const published = async (stream: string, database: string, count: number) => {
    for (let i = 0; i < 200; i++) {
      if ((await outboxRows(database)) === 0 && (await broker.events(stream)).length >= count) break;
      await sleep(100);
    }
    const events = await broker.events(stream);
    expect(new Set(events.map((e) => e.event.id)).size).toBe(events.length);
    return events.map((e) => `${e.event.type.split('.').pop()} ${e.event.data.team as string}/${String(e.event.data.id)}`);
  };

  /**
   * Writes of every outcome through `instance`: five creates, a create of a taken id (409), two
   * deletes and a delete of no plant (404). Answers the events they must make, one per 201 and 204.
   */
  const write = async (instance: ServerProcess, token: string, from: number) => {
    const ids = [0, 1, 2, 3, 4].map((i) => from + i);
    for (const id of ids)
      await instance.http
        .post('/plants')
        .set(bearer(token))
        .send({ id, name: `Fern ${id}` })
        .expect(201);
    await instance.http.post('/plants').set(bearer(token)).send({ id: ids[0], name: 'Taken' }).expect(409);
    await instance.http.delete(`/plants/${ids[1]}`).set(bearer(token)).expect(204);
    await instance.http.delete(`/plants/${ids[2]}`).set(bearer(token)).expect(204);
    await instance.http
      .delete(`/plants/${from + 99}`)
      .set(bearer(token))
      .expect(404);
    return [...ids.map((id) => `created acme/${id}`), `deleted acme/${ids[1]}`, `deleted acme/${ids[2]}`];
  };

  const plantIds = async (database: string) =>
    (await admin.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${database}\`.plants WHERE team = 'acme' ORDER BY id`))[0].map((row) => Number(row.id));

  describe.each([
    ['off', false],
    ['on', true],
  ])('log_bin_trust_function_creators %s', (_, trusted) => {
    beforeAll(() => trust(trusted));
    afterAll(() => trust(false));

    it(`every migration from an empty database, undone one by one and applied again, under exactly the grant the docs name: ${trusted ? 'with' : 'without'} the triggers`, async () => {
      const database = await account(MIGRATING_GRANT);
      try {
        const first = await migrate(database, 'run');
        expect(first).toMatchObject({ code: 0 });
        expect(first.output).toContain(`applied ${new (ALL_MIGRATIONS.at(-1)!)().name}`);
        expect(first.output).toContain(trusted ? TRIGGERS_LINE : TRANSACTION_LINE);
        if (!trusted) expect(first.output).toContain('log_bin_trust_function_creators is OFF: set it to 1');
        await expect(triggers(database.name)).resolves.toEqual(trusted ? ['plant_created_event', 'plant_deleted_event'] : []);
        const schema = await schemaOf(database.env);

        for (let i = 0; i < ALL_MIGRATIONS.length; i++) await expect(migrate(database, 'revert')).resolves.toMatchObject({ code: 0 });
        const [left] = await admin.query<mysql.RowDataPacket[]>('SELECT table_name FROM information_schema.tables WHERE table_schema = ?', [database.name]);
        // The migrations' own table and the lock's stay, empty of migrations.
        expect(left.map((row) => row.table_name as string).sort()).toEqual(['migration_lock', 'migrations']);
        await expect(triggers(database.name)).resolves.toEqual([]);

        await expect(migrate(database, 'run')).resolves.toMatchObject({ code: 0 });
        await expect(schemaOf(database.env)).resolves.toBe(schema);
        await expect(triggers(database.name)).resolves.toEqual(trusted ? ['plant_created_event', 'plant_deleted_event'] : []);
      } finally {
        await database.drop();
      }
    }, 300_000);

    it('a cold start on the empty database: it comes up, says how plant events are written, and each write makes exactly one event', async () => {
      const database = await account();
      const stream = `LEAST_${randomBytes(4).toString('hex').toUpperCase()}`;
      const instance = await start(database, stream);
      try {
        const log = await logOf(instance, 'plant change events:');
        expect(log).toContain(trusted ? TRIGGERS_LINE : TRANSACTION_LINE);
        if (!trusted) expect(log).toContain('log_bin_trust_function_creators is OFF: set it to 1');
        await expect(triggers(database.name)).resolves.toEqual(trusted ? ['plant_created_event', 'plant_deleted_event'] : []);
        const token = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
        const expected = await write(instance, token, 1);
        expect((await published(stream, database.name, expected.length)).sort()).toEqual(expected.sort());
        await expect(plantIds(database.name)).resolves.toEqual([1, 4, 5]);
      } finally {
        await instance.stop();
        await database.drop();
      }
    }, 180_000);

    it('an upgrade from the release before, with plants and change events already in the database: the waiting events go out once, then one event per write', async () => {
      const database = await account();
      const stream = `UPGRADE_${randomBytes(4).toString('hex').toUpperCase()}`;
      const prefix = stream.toLowerCase();
      // The release before, as its migrations left the database, then its writes: two plants of
      // acme, their creations' events still in the outbox (the broker was away).
      const before = new DataSource({ type: 'mysql', url: database.env.DATABASE_URL, migrations: RELEASE_BEFORE, migrationsTransactionMode: 'each' });
      await before.initialize();
      try {
        await before.runMigrations();
        for (const id of [1, 2]) {
          await before.query("INSERT INTO plants (team, id, name, tag) VALUES ('acme', ?, ?, NULL)", [id, `Old ${id}`]);
          const event = {
            specversion: '1.0',
            id: randomUUID(),
            source: EVENT_SOURCE,
            type: 'com.plantstore.plant.created',
            subject: `teams/acme/plants/${id}`,
            time: new Date().toISOString(),
            datacontenttype: 'application/json',
            data: { team: 'acme', id, name: `Old ${id}`, tag: null, tokenId: 1 },
          };
          await before.query('INSERT INTO event_outbox (event_id, subject, payload) VALUES (?, ?, ?)', [
            event.id,
            `${prefix}.acme.plant.created`,
            JSON.stringify(event),
          ]);
        }
      } finally {
        await before.destroy();
      }
      await expect(triggers(database.name)).resolves.toEqual([]);

      const instance = await start(database, stream);
      try {
        expect(await logOf(instance, 'plant change events:')).toContain(trusted ? TRIGGERS_LINE : TRANSACTION_LINE);
        await expect(triggers(database.name)).resolves.toEqual(trusted ? ['plant_created_event', 'plant_deleted_event'] : []);
        const token = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
        // A plant of the release before is the team's like any other, and its deletion has its event.
        await instance.http.delete('/plants/1').set(bearer(token)).expect(204);
        const expected = ['created acme/1', 'created acme/2', 'deleted acme/1', ...(await write(instance, token, 10))];
        const events = await published(stream, database.name, expected.length);
        expect([...events].sort()).toEqual([...expected].sort());
        // The waiting events first, in the order they were written.
        expect(events.slice(0, 2)).toEqual(['created acme/1', 'created acme/2']);
        const deleted = (await broker.events(stream)).find((e) => e.event.type === 'com.plantstore.plant.deleted' && e.event.data.id === 1);
        expect(deleted?.event.data).toEqual({ team: 'acme', id: 1, name: 'Old 1', tag: null, tokenId: expect.any(Number) });
        await expect(plantIds(database.name)).resolves.toEqual([2, 10, 13, 14]);
      } finally {
        await instance.stop();
        await database.drop();
      }
    }, 180_000);

    it('instances that do not migrate, on an account with only SELECT, INSERT, UPDATE and DELETE after a migration job: they find out how events are written and make exactly one per write', async () => {
      const job = await account();
      const runtime = await account('SELECT, INSERT, UPDATE, DELETE', job.name);
      const stream = `DML_${randomBytes(4).toString('hex').toUpperCase()}`;
      const migrated = await migrate(job, 'run');
      expect(migrated).toMatchObject({ code: 0 });
      expect(migrated.output).toContain(trusted ? TRIGGERS_LINE : TRANSACTION_LINE);
      const instance = await start(runtime, stream, { MIGRATIONS_RUN: 'false' });
      try {
        const log = await logOf(instance, 'plant change events:');
        expect(log).toContain(trusted ? TRIGGERS_LINE : TRANSACTION_LINE);
        const token = (await runCli(runtime, ['tokens', 'create', '--team', 'acme'], { MIGRATIONS_RUN: 'false' })).stdout.trim();
        const expected = await write(instance, token, 1);
        expect((await published(stream, job.name, expected.length)).sort()).toEqual(expected.sort());
        await expect(plantIds(job.name)).resolves.toEqual([1, 4, 5]);
      } finally {
        await instance.stop();
        await runtime.drop();
        await job.drop();
      }
    }, 180_000);
  });

  it('a server that allows the triggers only later: the next start of a migrating instance creates them, and from then on they write the events', async () => {
    await trust(false);
    const database = await account();
    const stream = `LATER_${randomBytes(4).toString('hex').toUpperCase()}`;
    let instance = await start(database, stream);
    try {
      expect(await logOf(instance, 'plant change events:')).toContain(TRANSACTION_LINE);
      const token = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
      const expected = await write(instance, token, 1);
      await instance.stop();

      await trust(true);
      instance = await start(database, stream);
      const log = await logOf(instance, 'plant change events:');
      expect(log).toContain("created the plants table's event triggers");
      expect(log).toContain(TRIGGERS_LINE);
      await expect(triggers(database.name)).resolves.toEqual(['plant_created_event', 'plant_deleted_event']);
      expected.push(...(await write(instance, token, 10)));
      expect((await published(stream, database.name, expected.length)).sort()).toEqual(expected.sort());
      await expect(plantIds(database.name)).resolves.toEqual([1, 4, 5, 10, 13, 14]);
    } finally {
      await instance.stop();
      await trust(false);
      await database.drop();
    }
  }, 180_000);
});
