import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createToken, runCli } from './support/cli.js';
import { scrape, valueOf } from './support/metrics.js';
import { TestNats } from './support/nats.js';
import { freePort, startServer, type ServerProcess } from './support/server.js';
import { bearer, createTestDatabase, type TestDatabase } from './support/test-app.js';

/**
 * The stream the relay publishes to, as the service sets it up and checks it on a real
 * nats-server: a stream it cannot use is said at once (log, metric, status page) rather than found
 * later as a growing outbox; one that exists with other settings is used as it is, with a warning
 * naming each difference; a stream that is full refuses events, which wait in the outbox (writes get
 * 503 at its bound) until the operator makes room, and then arrive, none lost.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the change events stream', () => {
  let nats: TestNats;
  let connection: NatsConnection;
  let manager: JetStreamManager;
  let database: TestDatabase;
  let server: ServerProcess | undefined;
  /** A second instance, when a test starts one. */
  let bystander: ServerProcess | undefined;

  beforeAll(async () => {
    nats = await TestNats.create();
    connection = await connect({ servers: nats.url });
    manager = await jetstreamManager(connection);
  });
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await server?.stop();
    await bystander?.stop();
    server = bystander = undefined;
    await database.drop();
  });
  afterAll(async () => {
    await connection.close();
    await nats.close();
  });

  const names = () => {
    const suffix = randomBytes(4).toString('hex');
    return { stream: `S${suffix.toUpperCase()}`, prefix: `p${suffix}` };
  };
  const start = (stream: string, prefix: string, env: Record<string, string> = {}) =>
    startServer(database, {
      EVENTS_NATS_URL: nats.url,
      EVENTS_STREAM: stream,
      EVENTS_SUBJECT_PREFIX: prefix,
      EVENTS_RELAY_INTERVAL_MS: '100',
      TOKEN_CACHE_SECONDS: '0',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'log',
      ...env,
    });
  const logHas = async (text: string) => {
    for (let i = 0; i < 100 && !server!.output().includes(text); i++) await sleep(100);
    return server!.output();
  };
  const adminToken = async () => (await runCli(database, ['tokens', 'create', '--team', 'ops', '--scope', 'admin'])).stdout.trim();
  const messages = async (stream: string) => (await manager.streams.info(stream)).state.messages;

  it("another stream that takes the same subjects: the instance says at start-up that it cannot publish, naming both streams' clash; the metric and the status page too; fixed, the waiting events go out", async () => {
    const { stream, prefix } = names();
    const other = `${stream}_OTHER`;
    await manager.streams.add({ name: other, subjects: [`${prefix}.>`] });
    const metricsPort = await freePort();
    server = await start(stream, prefix, { METRICS_PORT: String(metricsPort) });
    // A second instance on the same database, which never holds the relay's lease while the first runs.
    const bystanderMetrics = await freePort();
    bystander = await start(stream, prefix, { METRICS_PORT: String(bystanderMetrics) });
    const log = await logHas('change events cannot be published');
    expect(log).toMatch(new RegExp(`change events cannot be published: the JetStream stream ${stream} could not be created: .*overlap.* \\(error \\d+\\)`));
    const metric = async (port = metricsPort) => valueOf(await scrape(`http://127.0.0.1:${port}/metrics`), 'plant_store_events_stream_problem');
    await expect(metric()).resolves.toBe(1);
    await expect(metric(bystanderMetrics)).resolves.toBe(1);
    const admin = await adminToken();
    const status = await server.http.get('/admin/status').set(bearer(admin)).expect(200);
    expect(status.body.change_events).toEqual({
      enabled: true,
      stream,
      backlog: 0,
      plant_events: 'statements',
      stream_problem: expect.stringContaining(`the JetStream stream ${stream} could not be created`),
    });

    // Writes go on; their events wait, and none goes to the other stream.
    const token = await createToken(database, 'acme');
    for (const id of [1, 2, 3])
      await server.http
        .post('/plants')
        .set(bearer(token))
        .send({ id, name: `Fern ${id}` })
        .expect(201);
    await sleep(1000);
    await expect(messages(other)).resolves.toBe(0);
    const waiting = await server.http.get('/admin/status').set(bearer(admin)).expect(200);
    expect(waiting.body.change_events.backlog).toBe(3);

    // The operator removes the other stream: within a look or two (every 5 s) the relay creates its own and publishes.
    await manager.streams.delete(other);
    for (let i = 0; i < 150 && (await nats.events(stream)).length < 3; i++) await sleep(100);
    expect((await nats.events(stream)).map((e) => `${e.event.type.split('.').pop()} ${String(e.event.data.id)}`)).toEqual([
      'created 1',
      'created 2',
      'created 3',
    ]);
    await expect(metric()).resolves.toBe(0);
    // The other instance looks again too (every 5 s), holding the lease or not.
    for (let i = 0; i < 150 && (await metric(bystanderMetrics)) !== 0; i++) await sleep(100);
    await expect(metric(bystanderMetrics)).resolves.toBe(0);
    const fixed = await server.http.get('/admin/status').set(bearer(admin)).expect(200);
    expect(fixed.body.change_events).toMatchObject({
      stream_problem: null,
      backlog: 0,
      stream_state: { replicas: 1, messages: 3, leader: null, followers: [] },
    });
    // One of the two created the stream; this one said the problem is gone.
    await logHas(`the JetStream stream ${stream} takes this service's events again`);
    expect(server.output() + bystander.output()).toContain(`created the JetStream stream ${stream}`);
  }, 60_000);

  it('a stream of the same name that takes other subjects: the same, naming its subjects', async () => {
    const { stream, prefix } = names();
    await manager.streams.add({ name: stream, subjects: ['someone.else.>'] });
    server = await start(stream, prefix);
    const log = await logHas('change events cannot be published');
    expect(log).toContain(`the JetStream stream ${stream} does not take the subjects ${prefix}.> (its subjects: someone.else.>)`);
    await manager.streams.delete(stream);
  });

  it('created as the settings say: age, size, discard policy, file storage, replicas', async () => {
    const { stream, prefix } = names();
    server = await start(stream, prefix, { EVENTS_STREAM_MAX_AGE: '36h', EVENTS_STREAM_MAX_BYTES: '64MiB', EVENTS_STREAM_DISCARD: 'new' });
    await logHas(`created the JetStream stream ${stream}`);
    const { config } = await manager.streams.info(stream);
    expect(config).toMatchObject({
      subjects: [`${prefix}.>`],
      num_replicas: 1,
      max_age: 36 * 3600e9,
      max_bytes: 64 * 2 ** 20,
      discard: 'new',
      storage: 'file',
      duplicate_window: 120e9,
    });
    await manager.streams.delete(stream);
  });

  it('an existing stream with other settings is used as it is, and one warning names each difference', async () => {
    const { stream, prefix } = names();
    await manager.streams.add({ name: stream, subjects: [`${prefix}.>`], max_age: 0 });
    server = await start(stream, prefix, { EVENTS_STREAM_MAX_BYTES: '1MiB' });
    const log = await logHas('exists with other settings');
    expect(log).toContain(
      `the JetStream stream ${stream} exists with other settings than this instance's, and is used as it is: max age unlimited (EVENTS_STREAM_MAX_AGE: 7d); max bytes unlimited (EVENTS_STREAM_MAX_BYTES: 1048576 bytes)`,
    );
    expect(log.split('exists with other settings').length - 1).toBe(1);
    const token = await createToken(database, 'acme');
    await server.http.post('/plants').set(bearer(token)).send({ id: 1, name: 'Fern' }).expect(201);
    for (let i = 0; i < 100 && (await messages(stream)) < 1; i++) await sleep(100);
    await expect(messages(stream)).resolves.toBe(1);
    expect((await manager.streams.info(stream)).config).toMatchObject({ max_age: 0, max_bytes: -1 });
    await manager.streams.delete(stream);
  });

  it('a full stream that refuses new events: they wait in the outbox, writes get 503 at its bound and change nothing, and once room is made every acknowledged event arrives, once, in order', async () => {
    const { stream, prefix } = names();
    server = await start(stream, prefix, { EVENTS_STREAM_MAX_BYTES: '4KiB', EVENTS_STREAM_DISCARD: 'new', EVENTS_OUTBOX_MAX_ROWS: '100' });
    await logHas(`created the JetStream stream ${stream}`);
    const token = await createToken(database, 'acme');
    const acknowledged: number[] = [];
    let refused: { status: number; body: unknown } | undefined;
    for (let id = 1; id <= 400 && !refused; id++) {
      const res = await server.http
        .post('/plants')
        .set(bearer(token))
        .send({ id, name: `Fern ${id}` });
      if (res.status === 201) acknowledged.push(id);
      else refused = { status: res.status, body: res.body };
    }
    expect(refused).toEqual({ status: 503, body: { error: 503, message: expect.stringContaining('EVENTS_OUTBOX_MAX_ROWS') } });
    const stored = await messages(stream);
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(acknowledged.length);
    // The refused write changed nothing.
    await server.http
      .get('/plants?limit=1000')
      .set(bearer(token))
      .expect(200)
      .expect((res) => expect(res.body).toHaveLength(acknowledged.length));

    // The operator makes room (a larger bound): the relay's next try stores the rest.
    const { config } = await manager.streams.info(stream);
    await manager.streams.update(stream, { ...config, max_bytes: -1 });
    for (let i = 0; i < 150 && (await messages(stream)) < acknowledged.length; i++) await sleep(100);
    const events = await nats.events(stream);
    expect(events.map((e) => Number(e.event.data.id))).toEqual(acknowledged);
    expect(new Set(events.map((e) => e.event.id)).size).toBe(events.length);
    await server.http.post('/plants').set(bearer(token)).send({ id: 1000, name: 'After' }).expect(201);
    await manager.streams.delete(stream);
  }, 60_000);
});
