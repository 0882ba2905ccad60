import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createToken, runCli } from './support/cli.js';
import { NatsCluster, type ClusterNode } from './support/nats-cluster.js';
import { plantChurn } from './support/plant-churn.js';
import { startServer, type ServerProcess } from './support/server.js';
import { bearer, createTestDatabase, type TestDatabase } from './support/test-app.js';

/**
 * Change events on JetStream as operators run it: a cluster of three nats-server processes, the
 * service given all three URLs and a stream of three replicas (EVENTS_STREAM_REPLICAS=3). Under a
 * steady load of writes, the stream's leader is killed, then two nodes at once (no quorum), then
 * the leader is paused rather than killed (a partition). Each time writes go on answering 201/204,
 * and once the cluster can store again every acknowledged write's event is in the stream, none
 * twice, each plant's in the order of its writes. The figures an operator would ask for (delivery
 * delay, the first event after a new leader, the backlog's drain) are printed, not asserted: they
 * are the machine's as much as the service's (`npm run test:external` prints them).
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

describe('change events on a three-node JetStream cluster, its nodes killed and paused under sustained writes', () => {
  const stream = `C${randomBytes(4).toString('hex').toUpperCase()}`;
  let cluster: NatsCluster;
  let database: TestDatabase;
  let server: ServerProcess;
  let token: string;
  let admin: string;
  const figures: string[] = [];
  /** Every write answered 201 or 204, over all phases: `created <id>` / `deleted <id>`. */
  const acknowledged = new Set<string>();

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
    database = await createTestDatabase();
    server = await startServer(database, {
      EVENTS_NATS_URL: cluster.urls,
      EVENTS_STREAM: stream,
      EVENTS_STREAM_REPLICAS: '3',
      EVENTS_RELAY_INTERVAL_MS: '100',
      TOKEN_CACHE_SECONDS: '0',
      TOKEN_RATE_LIMIT_PER_MINUTE: '0',
    });
    token = await createToken(database, 'acme');
    admin = (await runCli(database, ['tokens', 'create', '--team', 'ops', '--scope', 'admin'])).stdout.trim();
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
    await database?.drop();
    process.stderr.write(`\nchange events on a three-node cluster\n  ${figures.join('\n  ')}\n`);
  });

  /** One writer, a create then a delete of each plant and 10 ms after each write, until stopped; each answer counted. */
  let phase = 0;
  const writeLoad = () => {
    phase++;
    const churn = plantChurn({ writers: 1, token, firstId: phase * 100_000, name: 'Fern', route: () => server, pauseMs: 10 });
    return {
      statuses: churn.statuses,
      keys: churn.acknowledged,
      stop: async () => {
        await churn.stop();
        for (const key of churn.acknowledged) acknowledged.add(key);
      },
    };
  };

  const backlog = async () => Number((await server.http.get('/admin/status').set(bearer(admin)).expect(200)).body.change_events.backlog);
  /** Waits (checked every 100 ms, 1,200 times at most) until the outbox is empty; answers when that was. */
  const drained = async () => {
    for (let i = 0; i < 1200; i++) {
      if ((await backlog()) === 0) return Date.now();
      await sleep(100);
    }
    throw new Error(`${await backlog()} events still wait in the outbox`);
  };

  /**
   * The stream against every acknowledged write: none lost, none twice (by CloudEvents id, and by
   * write), each plant's deletion after its creation. Answers the events, for the phase's figures.
   */
  const everyEventOnce = async () => {
    const events = await cluster.events(stream);
    const ids = new Set(events.map((e) => e.event.id));
    const keys = events.map((e) => `${e.event.type.split('.').pop()} ${String(e.event.data.id)}`);
    const position = new Map(keys.map((key, i) => [key, i]));
    const lost = [...acknowledged].filter((key) => !position.has(key));
    const outOfOrder = keys.filter((key, i) => key.startsWith('deleted') && !(position.get(key.replace('deleted', 'created'))! < i));
    expect({ lost, copies: events.length - ids.size, doubled: keys.length - new Set(keys).size, outOfOrder }).toEqual({
      lost: [],
      copies: 0,
      doubled: 0,
      outOfOrder: [],
    });
    return events;
  };

  /** Resolves with the moment the cluster announces a new leader of the stream (its advisory), heard on a node that stays up. */
  const leaderElection = async (via: ClusterNode[]) => {
    const nc: NatsConnection = await connect({ servers: via.map((n) => n.url) });
    const elected = new Promise<number>((resolve) => {
      nc.subscribe(`$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.${stream}`, { max: 1, callback: () => resolve(Date.now()) });
    });
    await nc.flush();
    return { elected: elected.finally(() => void nc.close()) };
  };

  /** The phase's figures: the delivery delay of its writes' events, counted from their write and from `from` (a new leader), and the first event stored after `from`. */
  const delivery = (events: Awaited<ReturnType<typeof everyEventOnce>>, mine: Set<string>, from: number) => {
    const phase = events.filter((e) => mine.has(`${e.event.type.split('.').pop()} ${String(e.event.data.id)}`));
    const sinceWrite = phase.map((e) => e.storedAt - Date.parse(e.event.time));
    const sinceLeader = phase.map((e) => e.storedAt - Math.max(Date.parse(e.event.time), from));
    const first = Math.min(...events.filter((e) => e.storedAt >= from).map((e) => e.storedAt));
    return `delivery p50 ${percentile(sinceWrite, 50)} ms, p99 ${percentile(sinceWrite, 99)} ms from the write; p50 ${percentile(sinceLeader, 50)} ms, p99 ${percentile(sinceLeader, 99)} ms counted from the new leader; first event stored ${first - from} ms after it`;
  };
  const nonSuccess = (statuses: Map<number, number>) => [...statuses].filter(([status]) => status !== 201 && status !== 204);

  it('creates the stream with three replicas as EVENTS_STREAM_REPLICAS says, and the status page shows its leader and followers', async () => {
    for (let i = 0; i < 100 && !(await cluster.streamInfo(stream)); i++) await sleep(100);
    const info = await cluster.streamInfo(stream);
    expect(info?.config).toMatchObject({ num_replicas: 3, max_age: 7 * 86_400e9, storage: 'file' });
    const status = await server.http.get('/admin/status').set(bearer(admin)).expect(200);
    expect(status.body.change_events).toMatchObject({
      stream,
      stream_problem: null,
      stream_state: {
        replicas: 3,
        leader: expect.any(String),
        followers: [expect.objectContaining({ current: true }), expect.objectContaining({ current: true })],
      },
    });
  });

  it("the stream's leader SIGKILLed: writes go on, events are stored again once the cluster elects a new leader, none lost or doubled", async () => {
    const load = writeLoad();
    await sleep(2000);
    const leader = await cluster.streamLeader(stream);
    const { elected } = await leaderElection(cluster.nodes.filter((n) => n !== leader));
    const killedAt = Date.now();
    await leader.kill();
    const electedAt = await elected;
    await sleep(3000);
    await load.stop();
    const drainedAt = await drained();
    const events = await everyEventOnce();
    expect(nonSuccess(load.statuses)).toEqual([]);
    figures.push(
      `leader killed: ${load.keys.size} writes acknowledged, ${nonSuccess(load.statuses).length} other answers; new leader ${electedAt - killedAt} ms after the kill; ${delivery(events, load.keys, electedAt)}; outbox empty ${drainedAt - electedAt} ms after the new leader`,
    );
    await leader.start();
    await cluster.waitForMetaLeader();
  }, 180_000);

  it('two nodes SIGKILLed (no quorum): writes go on and their events wait in the outbox; once a node returns every event arrives, in order, none doubled', async () => {
    const load = writeLoad();
    await sleep(1000);
    const leader = await cluster.streamLeader(stream);
    const other = cluster.nodes.find((n) => n !== leader)!;
    await Promise.all([leader.kill(), other.kill()]);
    await sleep(5000);
    const waiting = await backlog();
    const { elected } = await leaderElection(cluster.nodes.filter((n) => n !== other));
    const returnedAt = Date.now();
    await leader.start();
    const electedAt = await elected;
    await sleep(2000);
    await load.stop();
    const drainedAt = await drained();
    const events = await everyEventOnce();
    expect(nonSuccess(load.statuses)).toEqual([]);
    expect(waiting).toBeGreaterThan(0);
    figures.push(
      `quorum lost for 5 s: ${load.keys.size} writes acknowledged, ${nonSuccess(load.statuses).length} other answers, ${waiting} events waiting; a node back, new leader ${electedAt - returnedAt} ms after its start; ${delivery(events, load.keys, electedAt)}; outbox empty ${drainedAt - returnedAt} ms after the node's start`,
    );
    await other.start();
    await cluster.waitForMetaLeader();
  }, 180_000);

  it("the stream's leader paused (SIGSTOP, as behind a partition): writes go on, a new leader takes the events; resumed, it catches up; none lost or doubled", async () => {
    const load = writeLoad();
    await sleep(2000);
    const leader = await cluster.streamLeader(stream);
    const { elected } = await leaderElection(cluster.nodes.filter((n) => n !== leader));
    const pausedAt = Date.now();
    await leader.pause();
    const electedAt = await elected;
    await sleep(3000);
    leader.resume();
    await sleep(2000);
    await load.stop();
    const drainedAt = await drained();
    const events = await everyEventOnce();
    expect(nonSuccess(load.statuses)).toEqual([]);
    figures.push(
      `leader paused: ${load.keys.size} writes acknowledged, ${nonSuccess(load.statuses).length} other answers; new leader ${electedAt - pausedAt} ms after the pause; ${delivery(events, load.keys, electedAt)}; outbox empty ${drainedAt - electedAt} ms after the new leader`,
    );
    // Every copy catches up once the paused node is back.
    for (let i = 0; i < 300; i++) {
      const followers = (await cluster.streamInfo(stream))?.cluster?.replicas ?? [];
      if (followers.length === 2 && followers.every((f) => f.current)) break;
      await sleep(100);
    }
    expect((await cluster.streamInfo(stream))?.cluster?.replicas?.map((f) => f.current)).toEqual([true, true]);
  }, 180_000);
});
