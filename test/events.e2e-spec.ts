import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import ts from 'typescript';
import { ConsoleLogger } from '@nestjs/common';
import { plantEventTriggers } from '../src/database/plant-event-triggers.js';
import { EVENT_SOURCE } from '../src/events/outbox.service.js';
import { Metrics } from '../src/metrics/metrics.js';
import { Plant } from '../src/plants/plant.entity.js';
import { StoreImportService } from '../src/stores/store-import.service.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { runCli } from './support/cli.js';
import { TestNats, type PublishedEvent } from './support/nats.js';
import { startServer, type ServerProcess } from './support/server.js';
import { importStores, storesCsv, WEEK_OPEN } from './support/stores.js';
import { bearer, createTestApp, createTestDatabase, engine, ErrorCapture, type TestApp } from './support/test-app.js';

/** A stream of this test's own, so that runs and files never mix. */
const stream = () => `T${randomBytes(6).toString('hex').toUpperCase()}`;
const env = (nats: TestNats, extra: Record<string, string> = {}) => ({
  EVENTS_NATS_URL: nats.url,
  EVENTS_STREAM: stream(),
  EVENTS_RELAY_INTERVAL_MS: '100',
  TOKEN_CACHE_SECONDS: '0',
  TOKEN_RATE_LIMIT_PER_MINUTE: '0',
  AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  ...extra,
});
const outboxRows = async (t: TestApp) => Number((await t.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM event_outbox'))[0].n);
/** Waits, by count of checks (every 100 ms, at most `tries`), until the outbox is empty. */
async function drained(t: TestApp, tries = 100): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if ((await outboxRows(t)) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the outbox still holds ${await outboxRows(t)} rows`);
}
const brief = (e: PublishedEvent) => ({ subject: e.natsSubject, type: e.event.type, data: e.event.data });

/** The relay's warnings, kept for the test to check; otherwise what the tests' default logger prints (fatal and error). */
class WarningCapture extends ConsoleLogger {
  readonly warnings: string[] = [];
  constructor() {
    super('', { logLevels: ['fatal', 'error', 'warn'] });
  }
  warn(message: unknown, context?: string) {
    if (context === 'Events') this.warnings.push(String(message));
    else super.warn(message, context);
  }
}

describe('change events through the outbox to NATS JetStream', () => {
  let nats: TestNats;
  beforeAll(async () => {
    nats = await TestNats.create();
  });
  afterAll(() => nats.close());

  it('publishes exactly one CloudEvent per acknowledged write, in order; refused writes and idempotent replays publish nothing', async () => {
    const settings = env(nats);
    const t = await createTestApp({ env: settings });
    try {
      const { token, record } = await t.app.get(TokensService).create({ team: 'acme' });
      const { token: reader } = await t.app.get(TokensService).create({ team: 'acme', scope: 'read' });
      const { token: admin, record: adminRecord } = await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' });
      await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern', tag: 'green' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).send({ id: 7, name: 'Cactus' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).send({ id: 7, name: 'Again' }).expect(409);
      await t.http.post('/plants').set(bearer(token)).send({ name: '' }).expect(400);
      await t.http.post('/plants').set(bearer(reader)).send({ name: 'Nope' }).expect(403);
      await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'k-1').send({ name: 'Pilea' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'k-1').send({ name: 'Pilea' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'k-2').send({ id: 7, name: 'Taken' }).expect(409);
      await t.http.delete('/plants/7').set(bearer(token)).expect(204);
      await t.http.delete('/plants/7').set(bearer(token)).expect(404);
      await t.http
        .put('/admin/stores/NY-1')
        .set(bearer(admin))
        .send({ name: 'Store', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN })
        .expect(201);
      await importStores(
        t,
        storesCsv([
          { code: 'A', name: 'A' },
          { code: 'B', name: 'B' },
        ]),
      );
      await importStores(
        t,
        storesCsv([
          { code: 'A', name: 'A' },
          { code: 'B', name: 'B' },
        ]),
      ); // unchanged: no event
      // An import rolled back (its file changed between the passes) publishes nothing.
      const changing = [storesCsv([{ code: 'C', name: 'C' }]), storesCsv([{ code: 'C', name: 'C', state: 'XX' }])];
      await expect(t.app.get(StoreImportService).import(() => Readable.from([changing.shift()!]))).rejects.toThrow('changed between the passes');
      await drained(t);

      const events = await nats.events(settings.EVENTS_STREAM);
      expect(events.map(brief)).toEqual([
        {
          subject: 'plantstore.acme.plant.created',
          type: 'com.plantstore.plant.created',
          data: { team: 'acme', id: 1, name: 'Fern', tag: 'green', tokenId: record.id },
        },
        {
          subject: 'plantstore.acme.plant.created',
          type: 'com.plantstore.plant.created',
          data: { team: 'acme', id: 7, name: 'Cactus', tag: null, tokenId: record.id },
        },
        {
          subject: 'plantstore.acme.plant.created',
          type: 'com.plantstore.plant.created',
          data: { team: 'acme', id: 8, name: 'Pilea', tag: null, tokenId: record.id },
        },
        {
          subject: 'plantstore.acme.plant.deleted',
          type: 'com.plantstore.plant.deleted',
          data: { team: 'acme', id: 7, name: 'Cactus', tag: null, tokenId: record.id },
        },
        { subject: 'plantstore.stores.changed', type: 'com.plantstore.stores.changed', data: { added: 1, updated: 0, removed: 0 } },
        { subject: 'plantstore.stores.changed', type: 'com.plantstore.stores.changed', data: { added: 2, updated: 0, removed: 0 } },
      ]);
      for (const { event, msgId } of events) {
        expect(event).toMatchObject({ specversion: '1.0', source: EVENT_SOURCE, datacontenttype: 'application/json', id: msgId });
        expect(new Date(event.time).toISOString()).toBe(event.time);
      }
      expect(events.map((e) => e.event.subject)).toEqual([
        'teams/acme/plants/1',
        'teams/acme/plants/7',
        'teams/acme/plants/8',
        'teams/acme/plants/7',
        'stores',
        'stores',
      ]);
      expect(new Set(events.map((e) => e.event.id)).size).toBe(events.length);
      expect(adminRecord.id).toBeGreaterThan(0);
      // The gauge is the relay's count, taken every EVENTS_RELAY_INTERVAL_MS (100 ms here): polled
      // until the relay has counted the empty outbox, 100 checks at most.
      const gauge = () => t.app.get(Metrics).registry.getSingleMetricAsString('plant_store_events_backlog_rows');
      for (let i = 0; i < 100 && !(await gauge()).includes('plant_store_events_backlog_rows 0'); i++) await new Promise((r) => setTimeout(r, 100));
      await expect(gauge()).resolves.toContain('plant_store_events_backlog_rows 0');
    } finally {
      await t.close();
    }
  });

  it('publishes a holiday.changed for each change of the calendar, and stores.changed for a special day; writes that change nothing publish nothing', async () => {
    // A broker of its own: the first test's stream already holds the prefix's subjects on the shared one.
    const broker = await TestNats.create();
    const settings = env(broker);
    const t = await createTestApp({ env: settings });
    try {
      const { token: admin, record } = await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' });
      const holiday = (date: string) => t.http.put(`/admin/holidays/${date}`).set(bearer(admin));
      await holiday('2026-12-25').send({ name: 'Christmas Day', hours: 'Closed' }).expect(201);
      await holiday('2026-12-25').send({ name: 'Christmas Day', hours: 'Closed' }).expect(200); // as stored: no event
      await holiday('2026-12-25')
        .send({ name: 'Christmas Day', hours: '10:00 AM - 2:00 PM', states: ['NY'] })
        .expect(200);
      await holiday('2026-12-26')
        .send({ name: 'Boxing Day', hours: 'Closed', states: ['XX'] })
        .expect(400);
      await t.http.delete('/admin/holidays/2026-12-25').set(bearer(admin)).expect(204);
      await t.http.delete('/admin/holidays/2026-12-25').set(bearer(admin)).expect(404);
      const store = { name: 'Store', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...WEEK_OPEN };
      await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(store).expect(201);
      const special = { ...store, special_hours: [{ date: '2026-12-24', hours: '9:00 AM - 2:00 PM' }] };
      await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(special).expect(200);
      await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(special).expect(200); // as stored: no event
      await t.http.put('/admin/stores/NY-1').set(bearer(admin)).send(store).expect(200); // special days left out: kept, no event
      await drained(t);

      const events = await broker.events(settings.EVENTS_STREAM);
      const christmas = { date: '2026-12-25', name: 'Christmas Day', tokenId: record.id };
      expect(events.map(brief)).toEqual([
        {
          subject: 'plantstore.holidays.changed',
          type: 'com.plantstore.holiday.changed',
          data: { ...christmas, hours: 'Closed', states: null, deleted: false },
        },
        {
          subject: 'plantstore.holidays.changed',
          type: 'com.plantstore.holiday.changed',
          data: { ...christmas, hours: '10:00 AM - 2:00 PM', states: ['NY'], deleted: false },
        },
        {
          subject: 'plantstore.holidays.changed',
          type: 'com.plantstore.holiday.changed',
          data: { ...christmas, hours: '10:00 AM - 2:00 PM', states: ['NY'], deleted: true },
        },
        { subject: 'plantstore.stores.changed', type: 'com.plantstore.stores.changed', data: { added: 1, updated: 0, removed: 0 } },
        { subject: 'plantstore.stores.changed', type: 'com.plantstore.stores.changed', data: { added: 0, updated: 1, removed: 0 } },
      ]);
      expect(events.slice(0, 3).map((e) => e.event.subject)).toEqual(['holidays/2026-12-25', 'holidays/2026-12-25', 'holidays/2026-12-25']);
    } finally {
      await t.close();
      await broker.close();
    }
  });

  it("a deletion's event has the plant's name and tag as stored, whatever they hold; a missing plant and the loser of a race get 404 and no event", async () => {
    // The broker is down: the events stay in the outbox, where the test reads them.
    const down = await TestNats.create({ start: false });
    const t = await createTestApp({ env: env(down) });
    try {
      const token = await t.tokenFor('acme');
      const odd = { name: 'Say "hi" \\ to 🌵 Ёлка\n\u0001', tag: 'a"b\\c' };
      await t.http
        .post('/plants')
        .set(bearer(token))
        .send({ id: 1, ...odd })
        .expect(201);
      await t.http.post('/plants').set(bearer(token)).send({ id: 2, name: 'Plain' }).expect(201);
      await t.http.post('/plants').set(bearer(token)).send({ id: 3, name: 'Raced', tag: 'x' }).expect(201);
      await t.http.delete('/plants/1').set(bearer(token)).expect(204);
      await t.http.delete('/plants/2').set(bearer(token)).expect(204);
      await t.http.delete('/plants/4').set(bearer(token)).expect(404);
      const raced = await Promise.all([1, 2].map(() => t.http.delete('/plants/3').set(bearer(token))));
      expect(raced.map((r) => r.status).sort()).toEqual([204, 404]);
      expect(raced.find((r) => r.status === 404)!.body).toEqual({ error: 404, message: 'plant 3 not found' });

      const rows = await t.dataSource.query<Array<{ payload: string }>>('SELECT payload FROM event_outbox ORDER BY id');
      const events = rows.map((row) => JSON.parse(row.payload) as { type: string; data: Record<string, unknown> });
      // Made by the plants table's triggers on MySQL (the database quotes the name), by the service on SQLite: the same either way.
      expect(events.find((e) => e.type.endsWith('.created'))!.data).toEqual({ team: 'acme', id: 1, ...odd, tokenId: expect.any(Number) });
      const deleted = events.filter((e) => e.type.endsWith('.deleted')).map((e) => e.data);
      expect(deleted).toEqual([
        { team: 'acme', id: 1, ...odd, tokenId: expect.any(Number) },
        { team: 'acme', id: 2, name: 'Plain', tag: null, tokenId: expect.any(Number) },
        { team: 'acme', id: 3, name: 'Raced', tag: 'x', tokenId: expect.any(Number) },
      ]);
      // A deletion's data is its creation's, key for key.
      expect(deleted.map((d) => Object.keys(d))).toEqual(events.filter((e) => e.type.endsWith('.created')).map((e) => Object.keys(e.data)));
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);
    } finally {
      await t.close();
      await down.close();
    }
  });

  it('two deletes of one plant held up together: one 204 and one event, the other 404, and on MySQL no deadlock (the second waits for the lock)', async () => {
    const down = await TestNats.create({ start: false });
    const t = await createTestApp({ env: env(down) });
    const holder = engine === 'mysql' ? t.dataSource.createQueryRunner() : undefined;
    try {
      const token = await t.tokenFor('acme');
      await t.http.post('/plants').set(bearer(token)).send({ id: 7, name: 'Contested' }).expect(201);
      const deadlocks = async () => Number((await t.dataSource.query<Array<{ Value: string }>>("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'"))[0].Value);
      const before = holder ? await deadlocks() : 0;
      // On MySQL another transaction holds the plant's row, so that both deletes are under way and
      // waiting at once when it lets go (on SQLite the process's lock queues them regardless).
      await holder?.startTransaction();
      await holder?.query("SELECT 1 FROM plants WHERE team = 'acme' AND id = 7 FOR UPDATE");
      const raced = Promise.all(
        [1, 2].map(() =>
          t.http
            .delete('/plants/7')
            .set(bearer(token))
            .then((r) => r),
        ),
      );
      if (holder) {
        const waiting = async () =>
          Number(
            (
              await t.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM information_schema.innodb_trx WHERE trx_state = ?', [
                'LOCK WAIT',
              ])
            )[0].n,
          );
        for (let i = 0; i < 300 && (await waiting()) < 2; i++) await new Promise((r) => setTimeout(r, 100));
        expect(await waiting()).toBe(2);
        await holder.commitTransaction();
      }
      const statuses = (await raced).map((r) => r.status).sort();
      expect(statuses).toEqual([204, 404]);
      const rows = await t.dataSource.query<Array<{ payload: string }>>('SELECT payload FROM event_outbox ORDER BY id');
      expect(rows.map((row) => (JSON.parse(row.payload) as { type: string }).type.split('.').pop())).toEqual(['created', 'deleted']);
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);
      if (holder) expect(await deadlocks()).toBe(before);
    } finally {
      await holder?.release();
      await t.close();
      await down.close();
    }
  });

  if (engine === 'mysql') {
    it("on MySQL the plants table's triggers write a plant's event: only for the plant its session named, and once", async () => {
      const down = await TestNats.create({ start: false });
      const t = await createTestApp({ env: env(down) });
      const session = t.dataSource.createQueryRunner();
      try {
        const triggers = await t.dataSource.query<Array<{ name: string }>>(
          'SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME',
        );
        expect(triggers.map((row) => row.name)).toEqual(['plant_created_event', 'plant_deleted_event']);
        const token = await t.tokenFor('acme');
        await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Fern' }).expect(201);
        await expect(outboxRows(t)).resolves.toBe(1);

        // Writes that name no plant write no event: an operator's own SQL, a process with events off.
        await session.query("INSERT INTO plants (team, id, name, tag) VALUES ('acme', 2, 'By hand', NULL)");
        await session.query(
          "SET @plant_event_team = 'acme', @plant_event_plant = 3, @plant_event_id = 'e-3', @plant_event_subject = 's-3', @plant_event_head = '{\"name\":', @plant_event_tail = '}'",
        );
        await session.query("INSERT INTO plants (team, id, name, tag) VALUES ('acme', 4, 'Not the one named', NULL)");
        await session.query("INSERT INTO plants (team, id, name, tag) VALUES ('ACME', 3, 'Another team', NULL)");
        await expect(outboxRows(t)).resolves.toBe(1);
        await session.query(`INSERT INTO plants (team, id, name, tag) VALUES ('acme', 3, 'Named "3"', 'x')`);
        const [row] = await t.dataSource.query<Array<{ event_id: string; subject: string; payload: string }>>(
          'SELECT event_id, subject, payload FROM event_outbox ORDER BY id DESC LIMIT 1',
        );
        expect({ ...row, payload: JSON.parse(row.payload) as unknown }).toEqual({ event_id: 'e-3', subject: 's-3', payload: { name: 'Named "3"', tag: 'x' } });
        // Forgotten once written: the same session's delete of that plant writes nothing.
        await session.query("DELETE FROM plants WHERE team = 'acme' AND id = 3");
        await expect(outboxRows(t)).resolves.toBe(2);

        await t.http.delete('/plants/1').set(bearer(token)).expect(204);
        const payloads = await t.dataSource.query<Array<{ payload: string }>>('SELECT payload FROM event_outbox ORDER BY id');
        const fern = { team: 'acme', id: 1, name: 'Fern', tag: null, tokenId: expect.any(Number) };
        expect(payloads.map((r) => JSON.parse(r.payload) as unknown)).toEqual([
          expect.objectContaining({ type: 'com.plantstore.plant.created', data: fern }),
          { name: 'Named "3"', tag: 'x' },
          expect.objectContaining({ type: 'com.plantstore.plant.deleted', data: fern }),
        ]);
      } finally {
        await session.release();
        await t.close();
        await down.close();
      }
    });

    it("the event's session variables never outlive a write: after a refused create, a delete of no plant and a refused idempotent create, other writes on the same pooled connection make no event", async () => {
      const down = await TestNats.create({ start: false });
      // One connection in the pool: the service's writes and the test's own SQL share it.
      const t = await createTestApp({ env: env(down, { DB_POOL_SIZE: '1' }) });
      try {
        const token = await t.tokenFor('acme');
        await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Fern' }).expect(201);
        // A create of a taken id: its INSERT fails, so no trigger cleared the variables naming (acme, 1).
        await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Taken' }).expect(409);
        // A delete of no plant: its DELETE changes nothing, so none cleared the variables naming (acme, 5).
        await t.http.delete('/plants/5').set(bearer(token)).expect(404);
        // An idempotent create of a taken id: its INSERT fails inside the key's transaction, which commits the stored 409.
        await t.http.post('/plants').set(bearer(token)).set('Idempotency-Key', 'taken').send({ id: 1, name: 'Taken again' }).expect(409);
        await expect(outboxRows(t)).resolves.toBe(1);
        // Writes by anything else on that connection: were the variables still set, the triggers would write events for them.
        const [{ connections }] = await t.dataSource.query<Array<{ connections: number | string }>>(
          "SELECT COUNT(*) AS connections FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)",
        );
        expect(Number(connections)).toBe(1);
        await t.dataSource.query("DELETE FROM plants WHERE team = 'acme' AND id = 1");
        await t.dataSource.query("INSERT INTO plants (team, id, name, tag) VALUES ('acme', 5, 'By hand', NULL)");
        await expect(outboxRows(t)).resolves.toBe(1);
        const [variables] = await t.dataSource.query<Array<{ team: string | null }>>('SELECT @plant_event_team AS team');
        expect(variables.team).toBeNull();
      } finally {
        await t.close();
        await down.close();
      }
    });

    it('triggers dropped under a running instance (a migration undone): it notices, writes each event in the transaction from then on, and uses the triggers again once they are back, one event per write throughout', async () => {
      const down = await TestNats.create({ start: false });
      const log = new ErrorCapture();
      const t = await createTestApp({ env: env(down), logger: log });
      const admin = (await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' })).token;
      const way = async () => (await t.http.get('/admin/status').set(bearer(admin)).expect(200)).body.change_events.plant_events as string;
      try {
        const token = await t.tokenFor('acme');
        await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Fern' }).expect(201);
        await expect(way()).resolves.toBe('triggers');
        await t.dataSource.query('DROP TRIGGER plant_created_event');
        await t.dataSource.query('DROP TRIGGER plant_deleted_event');
        // Writes go on; within the look every 10 s (checked every 500 ms, 60 times at most) the instance writes their events itself.
        let id = 100;
        for (let i = 0; i < 60 && (await way()) !== 'statements'; i++) {
          await t.http.post('/plants').set(bearer(token)).send({ id: id++, name: 'While dropped' }).expect(201);
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(log.errors.join('\n')).toContain("the plants table's event triggers no longer write them");
        const before = await outboxRows(t);
        for (const n of [1, 2, 3, 4, 5])
          await t.http
            .post('/plants')
            .set(bearer(token))
            .send({ id: 1000 + n, name: `After ${n}` })
            .expect(201);
        for (const n of [1, 2])
          await t.http
            .delete(`/plants/${1000 + n}`)
            .set(bearer(token))
            .expect(204);
        await expect(outboxRows(t)).resolves.toBe(before + 7);

        // The migration run again: the triggers are back, and used within a look; no write makes two events meanwhile.
        for (const sql of plantEventTriggers()) await t.dataSource.query(sql);
        for (let i = 0; i < 60 && (await way()) !== 'triggers'; i++) {
          const written = await outboxRows(t);
          await t.http.post('/plants').set(bearer(token)).send({ id: id++, name: 'While back' }).expect(201);
          await expect(outboxRows(t)).resolves.toBe(written + 1);
          await new Promise((r) => setTimeout(r, 500));
        }
        await expect(way()).resolves.toBe('triggers');
        const again = await outboxRows(t);
        for (const n of [3, 4, 5])
          await t.http
            .delete(`/plants/${1000 + n}`)
            .set(bearer(token))
            .expect(204);
        await expect(outboxRows(t)).resolves.toBe(again + 3);
      } finally {
        await t.close();
        await down.close();
      }
    }, 90_000);

    it("an account that may not create triggers: the start-up says so and what to grant, and each event is written in its write's transaction instead", async () => {
      const base = new URL(process.env.TEST_DATABASE_URL!);
      const suffix = randomBytes(4).toString('hex');
      const name = `${base.pathname.slice(1)}_${suffix}`;
      const user = `no_triggers_${suffix}`;
      const admin = await mysql.createConnection({
        host: base.hostname,
        port: Number(base.port || 3306),
        user: decodeURIComponent(base.username),
        password: decodeURIComponent(base.password),
      });
      await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'secret-${suffix}'`);
      await admin.query(`GRANT ALL PRIVILEGES ON \`${name}\`.* TO '${user}'@'%'`);
      await admin.query(`REVOKE TRIGGER ON \`${name}\`.* FROM '${user}'@'%'`);
      const url = new URL(base);
      Object.assign(url, { username: user, password: `secret-${suffix}`, pathname: `/${name}` });
      const database = { env: { DATABASE_URL: url.toString() }, drop: () => Promise.resolve() };
      const down = await TestNats.create({ start: false });
      // A server of its own, its start-up summary logged: the line on plant events is in it.
      const server = await startServer(database, env(down, { LOG_LEVEL: 'log' }));
      try {
        // The log is written asynchronously: it may reach the pipe after the server is ready.
        const line = "plant change events: written in each write's transaction";
        for (let i = 0; i < 100 && !server.output().includes(line); i++) await new Promise((r) => setTimeout(r, 100));
        expect(server.output()).toContain(line);
        expect(server.output()).toContain('grant TRIGGER on the database to the account that runs the migrations');
        const [[{ n }]] = await admin.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?', [name]);
        expect(Number(n)).toBe(0);
        const token = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
        const odd = { name: 'Say "hi" \\ to 🌵', tag: 'a"b' };
        await server.http
          .post('/plants')
          .set(bearer(token))
          .send({ id: 1, ...odd })
          .expect(201);
        await server.http.post('/plants').set(bearer(token)).send({ id: 2, name: 'Raced' }).expect(201);
        await server.http.delete('/plants/1').set(bearer(token)).expect(204);
        const raced = await Promise.all([1, 2].map(() => server.http.delete('/plants/2').set(bearer(token))));
        expect(raced.map((r) => r.status).sort()).toEqual([204, 404]);
        const [rows] = await admin.query<mysql.RowDataPacket[]>(`SELECT payload FROM \`${name}\`.event_outbox ORDER BY id`);
        expect(rows.map((row) => JSON.parse(row.payload as string) as { type: string; data: object }).map((e) => [e.type.split('.').pop(), e.data])).toEqual([
          ['created', { team: 'acme', id: 1, ...odd, tokenId: expect.any(Number) }],
          ['created', { team: 'acme', id: 2, name: 'Raced', tag: null, tokenId: expect.any(Number) }],
          ['deleted', { team: 'acme', id: 1, ...odd, tokenId: expect.any(Number) }],
          ['deleted', { team: 'acme', id: 2, name: 'Raced', tag: null, tokenId: expect.any(Number) }],
        ]);
        const [[{ plants }]] = await admin.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS plants FROM \`${name}\`.plants`);
        expect(Number(plants)).toBe(0);
      } finally {
        await server.stop();
        await down.close();
        await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
        await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
        await admin.end();
      }
    });

    it('publishes a row that commits after rows with higher ids were published and the relay reads above them', async () => {
      const broker = await TestNats.create();
      // A full read once in 2 s: the reads in between start above what was read half a second ago.
      const settings = env(broker, { EVENTS_RELAY_INTERVAL_MS: '2000' });
      const t = await createTestApp({ env: settings });
      const late = t.dataSource.createQueryRunner();
      const published = async () => (await broker.events(settings.EVENTS_STREAM)).map((e) => `${e.event.type.split('.').pop()} ${String(e.event.data.id)}`);
      const until = async (count: number) => {
        for (let i = 0; i < 100 && (await published()).length < count; i++) await new Promise((r) => setTimeout(r, 100));
      };
      try {
        const token = await t.tokenFor('acme');
        // A transaction that takes its outbox id first and commits last, as a long one does.
        await late.startTransaction();
        const event = { specversion: '1.0', id: randomUUID(), source: EVENT_SOURCE, type: 'com.plantstore.stores.changed', subject: 'stores' };
        const time = new Date().toISOString();
        await late.query('INSERT INTO event_outbox (event_id, subject, payload) VALUES (?, ?, ?)', [
          event.id,
          'plantstore.stores.changed',
          JSON.stringify({ ...event, time, datacontenttype: 'application/json', data: { id: 'late', added: 1, updated: 0, removed: 0 } }),
        ]);
        for (const id of [1, 2, 3])
          await t.http
            .post('/plants')
            .set(bearer(token))
            .send({ id, name: `p${id}` })
            .expect(201);
        await until(3);
        // Past the floor's lag, a write whose read starts above the rows of the first three.
        await new Promise((r) => setTimeout(r, 700));
        await t.http.post('/plants').set(bearer(token)).send({ id: 4, name: 'p4' }).expect(201);
        await until(4);
        expect(await published()).toEqual(['created 1', 'created 2', 'created 3', 'created 4']);
        await late.commitTransaction();
        await until(5);
        expect(await published()).toEqual(['created 1', 'created 2', 'created 3', 'created 4', 'changed late']);
        await drained(t);
      } finally {
        if (late.isTransactionActive) await late.rollbackTransaction();
        await late.release();
        await t.close();
        await broker.close();
      }
    });
  }

  it('starts and serves with the broker down: ready stays 200, events wait in the outbox (metric and warning), then drain in order once it is up', async () => {
    const down = await TestNats.create({ start: false });
    const logger = new WarningCapture();
    const settings = env(down);
    const t = await createTestApp({ env: settings, logger });
    try {
      await t.http.get('/health/ready').expect(200);
      const token = await t.tokenFor('acme');
      for (let i = 1; i <= 5; i++)
        await t.http
          .post('/plants')
          .set(bearer(token))
          .send({ id: i, name: `p${i}` })
          .expect(201);
      await t.http.delete('/plants/3').set(bearer(token)).expect(204);
      await expect(outboxRows(t)).resolves.toBe(6);
      await t.http.get('/health/ready').expect(200);
      // The relay counted them (its next round) and said so, once (a warning every 30 s at most).
      const backlog = () => t.app.get(Metrics).registry.getSingleMetricAsString('plant_store_events_backlog_rows');
      for (let i = 0; i < 50 && !(await backlog()).includes('plant_store_events_backlog_rows 6'); i++) await new Promise((r) => setTimeout(r, 100));
      await expect(backlog()).resolves.toContain('plant_store_events_backlog_rows 6');
      expect(logger.warnings).toEqual([
        expect.stringMatching(/^\d change events wait in the outbox, the oldest for \d+ s: the broker is unreachable/) as string,
      ]);

      await down.start();
      await drained(t);
      const events = await down.events(settings.EVENTS_STREAM);
      expect(events.map((e) => `${e.event.type.split('.').pop()} ${String(e.event.data.id)}`)).toEqual([
        'created 1',
        'created 2',
        'created 3',
        'created 4',
        'created 5',
        'deleted 3',
      ]);
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(4);
    } finally {
      await t.close();
      await down.close();
    }
  });

  it("keeps publishing in order while deleting published rows fails; the failed rows' events are not stored twice, and the outbox drains once deletes work", async () => {
    const broker = await TestNats.create(); // a broker of its own: a stream per broker for the prefix's subjects
    const settings = env(broker);
    const logger = new WarningCapture();
    const t = await createTestApp({ env: settings, logger });
    // A trigger of the engine under test refuses every DELETE of the outbox (a lost connection or a lock wait timeout, as the relay sees it).
    const refuse =
      engine === 'sqlite'
        ? "CREATE TRIGGER refuse_outbox_delete BEFORE DELETE ON event_outbox BEGIN SELECT RAISE(ABORT, 'deletes refused by the test'); END"
        : "CREATE TRIGGER refuse_outbox_delete BEFORE DELETE ON event_outbox FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'deletes refused by the test'";
    const published = async () => (await broker.events(settings.EVENTS_STREAM)).map((e) => `${e.event.type.split('.').pop()} ${String(e.event.data.id)}`);
    try {
      const token = await t.tokenFor('acme');
      await t.dataSource.query(refuse);
      const expected: string[] = [];
      for (let i = 1; i <= 20; i++) {
        await t.http
          .post('/plants')
          .set(bearer(token))
          .send({ id: i, name: `p${i}` })
          .expect(201);
        expected.push(`created ${i}`);
        if (i % 4 === 0) {
          await t.http
            .delete(`/plants/${i - 1}`)
            .set(bearer(token))
            .expect(204);
          expected.push(`deleted ${i - 1}`);
        }
      }
      // Every event reaches the stream once, in order, though its row stays and is read and sent again.
      for (let i = 0; i < 100 && (await published()).length < expected.length; i++) await new Promise((r) => setTimeout(r, 100));
      // Then two more rounds of the relay, each sending every row again, counted by the relay's own
      // counter of acknowledged publications (the broker acknowledges a duplicate too).
      const sent = async () => (await t.app.get(Metrics).eventsPublished.get()).values.reduce((n, v) => n + v.value, 0);
      const sentBefore = await sent();
      for (let i = 0; i < 300 && (await sent()) < sentBefore + 2 * expected.length; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await sent()).toBeGreaterThanOrEqual(sentBefore + 2 * expected.length);
      expect(await published()).toEqual(expected);
      await expect(outboxRows(t)).resolves.toBe(expected.length);
      expect(logger.warnings).toEqual([
        expect.stringMatching(
          /change events wait in the outbox, the oldest for \d+ s: deleting published events failed: .*deletes refused by the test/,
        ) as string,
      ]);

      await t.dataSource.query('DROP TRIGGER refuse_outbox_delete');
      await t.http.post('/plants').set(bearer(token)).send({ id: 21, name: 'p21' }).expect(201);
      await drained(t);
      expect(await published()).toEqual([...expected, 'created 21']);
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(16);
    } finally {
      await t.close();
      await broker.close();
    }
  });

  it('refuses writes with 503 once EVENTS_OUTBOX_MAX_ROWS wait, writing nothing; reads go on', async () => {
    const down = await TestNats.create({ start: false });
    const log = new ErrorCapture();
    const t = await createTestApp({ env: env(down, { EVENTS_OUTBOX_MAX_ROWS: '100' }), logger: log });
    try {
      const token = await t.tokenFor('acme');
      for (let i = 1; i <= 100; i++)
        await t.http
          .post('/plants')
          .set(bearer(token))
          .send({ id: i, name: `p${i}` })
          .expect(201);
      const refused = await t.http.post('/plants').set(bearer(token)).send({ id: 101, name: 'one too many' }).expect(503);
      expect(refused.body.message).toMatch(/^change events cannot be delivered right now and 100 wait already \(EVENTS_OUTBOX_MAX_ROWS\)/);
      await t.http.delete('/plants/1').set(bearer(token)).expect(503);
      expect(log.errors).toEqual([expect.stringMatching(/POST \/plants failed with 503/), expect.stringMatching(/DELETE \/plants\/1 failed with 503/)]);
      await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(100);
      await expect(outboxRows(t)).resolves.toBe(100);
      await t.http.get('/plants?limit=1').set(bearer(token)).expect(200);

      // The command line (no relay of its own) counts in its import's transaction, and is refused too.
      const dir = mkdtempSync(join(tmpdir(), 'plant-store-events-cli-'));
      try {
        writeFileSync(join(dir, 'stores.csv'), storesCsv([{ code: 'A', name: 'A' }]));
        const cli = await runCli(t.database, ['locations', 'import', join(dir, 'stores.csv')], env(down, { EVENTS_OUTBOX_MAX_ROWS: '100' }));
        expect(cli.code).not.toBe(0);
        expect(cli.stderr).toMatch(/change events cannot be delivered right now and 100 wait already \(EVENTS_OUTBOX_MAX_ROWS\)/);
        await expect(t.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM stores').then(([row]) => Number(row.n))).resolves.toBe(0);
        await expect(outboxRows(t)).resolves.toBe(100);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    } finally {
      await t.close();
      await down.close();
    }
  });

  it('holds EVENTS_OUTBOX_MAX_ROWS for the sum of two instances: each counts every row of the table', async () => {
    const down = await TestNats.create({ start: false });
    const database = await createTestDatabase();
    const servers: ServerProcess[] = [];
    try {
      const settings = env(down, { EVENTS_OUTBOX_MAX_ROWS: '100' });
      servers.push(await startServer(database, settings), await startServer(database, settings));
      const token = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
      // 50 writes through each: neither instance alone comes near 100.
      for (let id = 1; id <= 100; id++)
        await servers[id % 2].http
          .post('/plants')
          .set(bearer(token))
          .send({ id, name: `p${id}` })
          .expect(201);
      // Within a count interval (100 ms here) each instance counts the other's rows: each is asked
      // until it refuses, 100 times at most. Before it has counted them, the write reaches the
      // database and is refused there (409: id 99 exists), which changes nothing.
      for (const server of servers) {
        const attempt = () => server.http.post('/plants').set(bearer(token)).send({ id: 99, name: 'one too many' });
        let refused = await attempt();
        for (let i = 0; i < 100 && refused.status !== 503; i++) {
          expect(refused.status).toBe(409);
          await new Promise((r) => setTimeout(r, 100));
          refused = await attempt();
        }
        expect(refused.status).toBe(503);
        expect(refused.body.message).toMatch(/and 100 wait already/);
      }
      const reader = await createTestApp({ database, env: { EVENTS_NATS_URL: '' } });
      try {
        await expect(outboxRows(reader)).resolves.toBe(100);
        await expect(reader.dataSource.getRepository(Plant).count()).resolves.toBe(100);
      } finally {
        await reader.close();
      }
    } finally {
      for (const server of servers) await server.stop();
      await database.drop();
      await down.close();
    }
  });

  it('writes no outbox row without EVENTS_NATS_URL, and on MySQL its pool takes one statement per query', async () => {
    const database = await createTestDatabase();
    const t = await createTestApp({ database, env: { EVENTS_NATS_URL: '' } });
    try {
      const token = await t.tokenFor('acme');
      await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern' }).expect(201);
      await t.http.delete('/plants/1').set(bearer(token)).expect(204);
      await expect(outboxRows(t)).resolves.toBe(0);
      await expect(t.dataSource.query('SELECT COUNT(*) AS n FROM plants')).resolves.toEqual([{ n: engine === 'mysql' ? '0' : 0 }]);
      // Several statements in one query are the plant writer's round trip with events on; without events none is allowed.
      if (engine === 'mysql') await expect(t.dataSource.query('SELECT 1; SELECT 2')).rejects.toThrow(/SQL syntax/);
      // The events are documented beside the OpenAPI document, without a token.
      const asyncapi = await t.http.get('/docs/events.yaml').expect(200);
      expect(asyncapi.headers['content-type']).toMatch(/^application\/yaml/);
      expect(asyncapi.text).toMatch(/^asyncapi: 3\.1\.0$/m);
      expect(asyncapi.text).toContain("address: '{prefix}.{team}.plant.created'");
    } finally {
      await t.close();
      await database.drop();
    }
  });

  it("runs docs/events.md's TypeScript consumer as written (against this machine's nats-server): it prints each event once", async () => {
    const nats = await TestNats.create();
    const settings = env(nats);
    const t = await createTestApp({ env: settings });
    let consumer: ChildProcess | undefined;
    try {
      const token = await t.tokenFor('acme');
      await t.http.post('/plants').set(bearer(token)).send({ id: 5, name: 'Fern' }).expect(201);
      await t.http.delete('/plants/5').set(bearer(token)).expect(204);
      await drained(t);
      const [example] = [...readFileSync(new URL('../docs/events.md', import.meta.url), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
      expect(example).toContain("consumers.get('PLANTSTORE')");
      // Only the broker's address and the stream's name are this test's own.
      const code = ts.transpileModule(example.replace('nats://nats.example.internal:4222', nats.url).replace("'PLANTSTORE'", `'${settings.EVENTS_STREAM}'`), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      consumer = spawn(process.execPath, ['--input-type=module', '-e', code], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      consumer.stdout!.on('data', (chunk) => (output += chunk));
      consumer.stderr!.on('data', (chunk) => (output += chunk));
      for (let i = 0; i < 100 && output.trim().split('\n').length < 2; i++) await new Promise((r) => setTimeout(r, 100));
      expect(output.trim().split('\n')).toEqual([
        "com.plantstore.plant.created { team: 'acme', id: 5, name: 'Fern', tag: null, tokenId: " + String(await tokenId(t, token)) + ' }',
        "com.plantstore.plant.deleted { team: 'acme', id: 5, name: 'Fern', tag: null, tokenId: " + String(await tokenId(t, token)) + ' }',
      ]);
    } finally {
      consumer?.kill();
      await t.close();
      await nats.close();
    }
  });

  describe('stopping the holder', () => {
    const lease = async (t: TestApp) =>
      (await t.dataSource.query<Array<{ owner: string | null }>>('SELECT owner FROM event_relay_lease WHERE id = 1'))[0]?.owner ?? null;
    /**
     * A new app on a database of the test's own whose relay holds the lease, having published its
     * first write (the polls bound a hang only); `after` reads the database once it is closed, with
     * an app of its own (two apps at once in one process share Nest's loggers and TypeORM's names).
     */
    async function holder(broker: TestNats, extra: Record<string, string>) {
      const settings = env(broker, extra);
      const logger = new WarningCapture();
      const database = await createTestDatabase();
      const t = await createTestApp({ database, env: settings, logger });
      const token = await t.tokenFor('acme');
      await t.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'first' }).expect(201);
      for (let i = 0; i < 100 && (await broker.events(settings.EVENTS_STREAM)).length < 1; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await broker.events(settings.EVENTS_STREAM)).toHaveLength(1);
      expect(await lease(t)).not.toBeNull();
      const after = async (read: (reader: TestApp) => Promise<void>) => {
        const reader = await createTestApp({ database, env: { EVENTS_NATS_URL: '' } });
        try {
          await read(reader);
        } finally {
          await reader.close();
        }
      };
      return { t, logger, token, settings, database, after };
    }

    it('keeps the lease when a batch is still unacknowledged as the grace time ends: the events stay in the outbox for the next holder', async () => {
      const broker = await TestNats.create();
      const { t, logger, token, database, after } = await holder(broker, { SHUTDOWN_GRACE_MS: '500' });
      try {
        // The broker stops answering with its connection open: the write commits its event, whose
        // publication then waits for an acknowledgement that does not come before the deadline.
        await broker.pause();
        await t.http.post('/plants').set(bearer(token)).send({ id: 2, name: 'second' }).expect(201);
        const owner = await lease(t);
        await t.close();
        expect(logger.warnings.at(-1)).toBe(
          "a batch of change events was still unacknowledged SHUTDOWN_GRACE_MS=500 after the listener closed: the relay's lease is kept and expires within 10 s",
        );
        // Before it at most the warning of the round that was publishing when the broker froze,
        // which the shutdown waits for, failing on its own timeout.
        expect(
          logger.warnings
            .slice(0, -1)
            .filter((w) => !/^\d+ change events wait in the outbox, the oldest for \d+ s: no acknowledgement from the broker within 2000 ms$/.test(w)),
        ).toEqual([]);
        await after(async (reader) => {
          await expect(lease(reader)).resolves.toBe(owner);
          await expect(outboxRows(reader)).resolves.toBe(1);
        });
      } finally {
        broker.resume();
        await broker.close();
        await database.drop();
      }
    });

    it('says so when releasing the lease fails at shutdown, having published everything; the lease then expires as after a kill', async () => {
      const broker = await TestNats.create();
      const { t, logger, token, settings, database, after } = await holder(broker, {});
      try {
        // The engine refuses the release (owner NULL) and nothing else: renewals go on.
        await t.dataSource.query(
          engine === 'sqlite'
            ? "CREATE TRIGGER refuse_release BEFORE UPDATE ON event_relay_lease WHEN NEW.owner IS NULL BEGIN SELECT RAISE(ABORT, 'lease release refused by the test'); END"
            : "CREATE TRIGGER refuse_release BEFORE UPDATE ON event_relay_lease FOR EACH ROW BEGIN IF NEW.owner IS NULL THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'lease release refused by the test'; END IF; END",
        );
        await t.http.post('/plants').set(bearer(token)).send({ id: 2, name: 'second' }).expect(201);
        const owner = await lease(t);
        await t.close();
        expect(logger.warnings).toEqual([
          expect.stringMatching(
            /^relay not handed over: [01] change events published while stopping, the lease not released \(.*lease release refused by the test.*\): it expires within 10 s$/,
          ) as string,
        ]);
        await after(async (reader) => {
          await expect(lease(reader)).resolves.toBe(owner);
          // Everything was published before the release was tried: nothing waits.
          await expect(outboxRows(reader)).resolves.toBe(0);
        });
        expect((await broker.events(settings.EVENTS_STREAM)).map((e) => e.event.data.id)).toEqual([1, 2]);
      } finally {
        await broker.close();
        await database.drop();
      }
    });
  });
});

/** The id of the token record behind a bearer token, as events name it. */
async function tokenId(t: TestApp, token: string): Promise<number> {
  const [row] = await t.dataSource.query<Array<{ id: number | string }>>('SELECT id FROM api_tokens ORDER BY id DESC LIMIT 1');
  expect(token).toMatch(/^pst_/);
  return Number(row.id);
}
