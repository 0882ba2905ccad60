import { randomBytes } from 'node:crypto';
import { createToken } from './support/cli.js';
import { TestNats } from './support/nats.js';
import { plantChurn } from './support/plant-churn.js';
import { startServer, type ServerProcess } from './support/server.js';
import { bearer, createTestApp, createTestDatabase, type TestApp, type TestDatabase } from './support/test-app.js';

/**
 * The change events' faults, counted: two instances on one database write plants while the broker is
 * stopped, one of them is SIGKILLed (perhaps holding the relay's lease, perhaps mid-relay), the
 * broker comes back. Every acknowledged write's event must arrive, none twice once consumers
 * de-duplicate by the CloudEvents id, and each plant's events in the order of its writes.
 */
describe('change events survive a broker outage and a killed instance', () => {
  let database: TestDatabase;
  let nats: TestNats;
  let servers: ServerProcess[] = [];
  let reader: TestApp | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    nats = await TestNats.create();
  });
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await reader?.close();
    await nats.close();
    await database.drop();
  });

  it('0 of N acknowledged writes lost, 0 duplicates after de-duplication by id, per-plant order kept', async () => {
    const stream = `F${randomBytes(6).toString('hex').toUpperCase()}`;
    const env = {
      EVENTS_NATS_URL: nats.url,
      EVENTS_STREAM: stream,
      EVENTS_RELAY_INTERVAL_MS: '100',
      TOKEN_CACHE_SECONDS: '0',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
    };
    servers = [await startServer(database, env), await startServer(database, env)];
    const [a, b] = servers;
    const token = await createToken(database, 'acme');
    // What the clients were told: each acknowledged write, in the order it was acknowledged.
    const acknowledged: Array<{ kind: 'created' | 'deleted'; id: number }> = [];
    const statuses = new Map<number, number>();
    const write = async (server: ServerProcess, kind: 'created' | 'deleted', id: number) => {
      const res =
        kind === 'created'
          ? await server.http
              .post('/plants')
              .set(bearer(token))
              .send({ id, name: `plant ${id}` })
          : await server.http.delete(`/plants/${id}`).set(bearer(token));
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 201 || res.status === 204) acknowledged.push({ kind, id });
    };

    let killed = false;
    // Alternating between the instances; only B once A is gone.
    const via = (n: number) => (killed || n % 2 === 0 ? b : a);
    for (let id = 1; id <= 10; id++) await write(via(id), 'created', id);
    await nats.stop();
    for (let id = 11; id <= 50; id++) {
      await write(via(id), 'created', id);
      if (id % 3 === 0) await write(via(id + 1), 'deleted', id);
      if (id === 30) {
        // Mid-outage, with events waiting and the lease taken by one of them: A is killed.
        await a.stop('SIGKILL');
        killed = true;
      }
    }
    await nats.start();

    // Read the database beside the survivor, without a relay of its own.
    reader = await createTestApp({ database, env: { EVENTS_NATS_URL: '' } });
    const waiting = async () => Number((await reader!.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM event_outbox'))[0].n);
    // The killed instance's lease runs out after 10 s; checked every 200 ms, 150 times at most.
    for (let i = 0; i < 150 && (await waiting()) > 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await waiting()).toBe(0);

    const published = await nats.events(stream);
    const unique = new Map(published.map((p) => [p.event.id, p]));
    const seen = [...unique.values()].map((p) => ({ kind: p.event.type.endsWith('created') ? 'created' : 'deleted', id: Number(p.event.data.id) }));
    const key = (e: { kind: string; id: number }) => `${e.kind} ${e.id}`;
    const lost = acknowledged.filter((e) => !seen.some((s) => key(s) === key(e)));
    const duplicates = seen.length - new Set(seen.map(key)).size;
    // Writes to A after its kill never happened (no answer): every event stands for an acknowledged write.
    const unexplained = seen.filter((s) => !acknowledged.some((e) => key(e) === key(s)));
    const outOfOrder = seen.filter((s) => s.kind === 'deleted' && seen.findIndex((c) => c.kind === 'created' && c.id === s.id) > seen.indexOf(s));
    console.info(
      `events under faults: ${acknowledged.length} writes acknowledged, ${lost.length} lost, ${published.length} published, ${published.length - unique.size} broker-level copies, ${duplicates} duplicates after de-duplication, ${outOfOrder.length} out of order; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(40);
    expect(lost).toEqual([]);
    expect(duplicates).toBe(0);
    expect(unexplained).toEqual([]);
    expect(outOfOrder).toEqual([]);
  }, 120_000);
});

/**
 * The same guarantees at full write rate. Sixteen writers create and delete plants
 * through two instances; the relay's lease holder is SIGKILLed while the load runs and the
 * broker is up (its relay is then mid-batch nearly all the time: a window of publishes in
 * flight), then the broker stops for 10 s and comes back, with the load going on throughout.
 */
describe('change events at full write rate, through a killed relay and a broker outage', () => {
  let database: TestDatabase;
  let nats: TestNats;
  let servers: ServerProcess[] = [];
  let reader: TestApp | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    nats = await TestNats.create();
  });
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await reader?.close();
    await nats.close();
    await database.drop();
  });

  it('under full write load: holder SIGKILLed mid-publish, broker down for 500 writes: 0 lost, 0 duplicates, per-plant order kept', async () => {
    const stream = `L${randomBytes(6).toString('hex').toUpperCase()}`;
    const env = {
      EVENTS_NATS_URL: nats.url,
      EVENTS_STREAM: stream,
      EVENTS_RELAY_INTERVAL_MS: '200',
      TOKEN_CACHE_SECONDS: '0',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
    };
    servers = [await startServer(database, env), await startServer(database, env)];
    const token = await createToken(database, 'load');
    reader = await createTestApp({ database, env: { EVENTS_NATS_URL: '' } });
    const query = <T>(sql: string) => reader!.dataSource.query<T>(sql);
    // An instance that died with a request under way may have committed it: `unanswered` explains its event.
    const { acknowledged, unanswered, statuses, stop } = plantChurn({
      writers: 16,
      token,
      firstId: 1_000_000,
      name: 'load',
      route: (n) => {
        const alive = servers.filter((s) => s.process.exitCode === null && s.process.signalCode === null);
        return alive[n % alive.length];
      },
    });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const waiting = async () => Number((await query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM event_outbox'))[0].n);
    // Each phase lasts until enough has happened in it, counted; the deadline only bounds a hang (a
    // loaded machine is slower, not wrong).
    const until = async (what: string, check: () => Promise<boolean> | boolean) => {
      const deadline = Date.now() + 90_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`not within 90 s: ${what}`);
        await sleep(250);
      }
    };
    await until('100 events published under the load', async () => (await nats.events(stream)).length >= 100);
    // The holder, named in the lease row as host:pid:random, is killed while its relay publishes.
    const [{ owner }] = await query<Array<{ owner: string }>>('SELECT owner FROM event_relay_lease WHERE id = 1');
    const holder = servers.find((s) => owner.split(':')[1] === String(s.process.pid));
    expect(holder).toBeDefined();
    const publishedBeforeKill = (await nats.events(stream)).length;
    await holder!.stop('SIGKILL');
    const atKill = acknowledged.size;
    await until('300 writes acknowledged by the other instance after the kill', () => acknowledged.size >= atKill + 300);
    await nats.stop();
    const backlogAtStop = await waiting();
    await until('500 more rows in the outbox while the broker is down', async () => (await waiting()) >= backlogAtStop + 500);
    await nats.start();
    const atRestart = acknowledged.size;
    await until('300 writes acknowledged after the broker is back', () => acknowledged.size >= atRestart + 300);
    await stop();

    await until('the outbox drained', async () => (await waiting()) === 0);
    const published = await nats.events(stream);
    const unique = new Map(published.map((p) => [p.event.id, p]));
    const seen = [...unique.values()].map((p) => `${p.event.type.endsWith('created') ? 'created' : 'deleted'} ${String(p.event.data.id)}`);
    const lost = [...acknowledged].filter((key) => !seen.includes(key));
    const duplicates = seen.length - new Set(seen).size;
    const unexplained = seen.filter((key) => !acknowledged.has(key) && !unanswered.has(key));
    const outOfOrder = seen.filter((key, i) => key.startsWith('deleted') && seen.indexOf(key.replace('deleted', 'created')) > i);
    console.info(
      `events under load: ${acknowledged.size} writes acknowledged (${publishedBeforeKill} published before the kill), ${unanswered.size} cut off by the kill, ${lost.length} lost, ${published.length} published, ${duplicates} duplicates after de-duplication, ${outOfOrder.length} out of order; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(publishedBeforeKill).toBeGreaterThan(100);
    expect(acknowledged.size).toBeGreaterThan(1000);
    expect(lost).toEqual([]);
    expect(duplicates).toBe(0);
    expect(unexplained).toEqual([]);
    expect(outOfOrder).toEqual([]);
  }, 180_000);
});
