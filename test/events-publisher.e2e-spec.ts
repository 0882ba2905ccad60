import { randomUUID } from 'node:crypto';
import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { BatchPublisher, type OutgoingEvent } from '../src/events/batch-publisher.js';
import { TestNats } from './support/nats.js';

/**
 * The relay's publisher against a real nats-server with JetStream: what it counts as acknowledged
 * is what the stream holds, in order, and every way the broker can refuse or fail to answer ends
 * the batch with the acknowledged prefix and a reason, never a hang.
 */
describe('BatchPublisher', () => {
  let nats: TestNats;
  let connection: NatsConnection;

  beforeAll(async () => {
    nats = await TestNats.create();
  });
  beforeEach(async () => {
    connection = await connect({ servers: nats.url, reconnect: false });
  });
  afterEach(async () => {
    if (!connection.isClosed()) await connection.close();
  });
  afterAll(async () => {
    await nats.close();
  });

  const stream = async (options: { max_msgs?: number; discard?: DiscardPolicy } = {}) => {
    const name = `P${randomUUID().slice(0, 8).toUpperCase()}`;
    const manager = await jetstreamManager(connection);
    await manager.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], ...options });
    return name;
  };
  const events = (name: string, n: number): OutgoingEvent[] =>
    Array.from({ length: n }, (_, i) => ({
      subject: `${name.toLowerCase()}.plant.${i % 3}`,
      payload: JSON.stringify({ n: i, text: 'é ✓' }),
      id: randomUUID(),
    }));

  it('publishes a batch in order, each with its Nats-Msg-Id, all acknowledged', async () => {
    const name = await stream();
    const batch = events(name, 700);
    const publisher = new BatchPublisher(connection, 5000, name);
    expect(await publisher.publish(batch)).toEqual({ acked: 700 });
    expect(await publisher.publish(batch.slice(0, 0))).toEqual({ acked: 0 });
    const stored = await nats.events(name);
    expect(stored.map((e) => [e.natsSubject, e.msgId, e.event])).toEqual(batch.map((e) => [e.subject, e.id, JSON.parse(e.payload)]));
  });

  it('counts an event the stream had already (same id, within its duplicate window) as acknowledged, and stores it once', async () => {
    const name = await stream();
    const [first, second] = events(name, 2);
    const publisher = new BatchPublisher(connection, 5000, name);
    expect(await publisher.publish([first])).toEqual({ acked: 1 });
    expect(await publisher.publish([first, second, first])).toEqual({ acked: 3 });
    expect((await nats.events(name)).map((e) => e.msgId)).toEqual([first.id, second.id]);
  });

  it('a subject no stream takes: nothing acknowledged, the 503 named', async () => {
    const publisher = new BatchPublisher(connection, 5000, 'NONE');
    const outcome = await publisher.publish([{ subject: `nostream${Date.now()}.x`, payload: '{}', id: randomUUID() }]);
    expect(outcome).toEqual({ acked: 0, error: expect.stringContaining('503'), silent: false });
  });

  it('a stream that refuses part of a batch: the prefix it stored is acknowledged, the refusal named', async () => {
    const name = await stream({ max_msgs: 3, discard: DiscardPolicy.New });
    const publisher = new BatchPublisher(connection, 5000, name);
    const outcome = await publisher.publish(events(name, 5));
    expect(outcome).toEqual({ acked: 3, error: expect.stringMatching(/^JetStream refused the event: .*maximum messages/i), silent: false });
    expect(await nats.events(name)).toHaveLength(3);
  });

  /** A subscriber on `silent.>` that takes every message and answers none: a publish there gets neither a PubAck nor a 503. */
  const silence = () => {
    const held: Msg[] = [];
    const subscription = connection.subscribe('silent.>', { callback: (_error, msg) => void held.push(msg) });
    const silentEvents = (n: number): OutgoingEvent[] => Array.from({ length: n }, (_, i) => ({ subject: `silent.${i}`, payload: '{}', id: randomUUID() }));
    return { held, subscription, silentEvents };
  };

  it('no answer: the batch ends after the timeout with nothing acknowledged, and a later batch counts only its own answers', async () => {
    const name = await stream();
    const { held, subscription, silentEvents } = silence();
    const publisher = new BatchPublisher(connection, 300, name);
    expect(await publisher.publish(silentEvents(4))).toEqual({ acked: 0, error: 'no acknowledgement from the broker within 300 ms', silent: true });
    // The four messages reached the silent subscriber (polled; the deadline only bounds a hang).
    for (let i = 0; i < 200 && held.length < 4; i++) await new Promise((r) => setTimeout(r, 25));
    expect(held).toHaveLength(4);
    // Their answers come late, while the next batch waits: refusals, which would fail it if they were taken for its own.
    const next = events(name, 2);
    const outcome = publisher.publish(next);
    for (const msg of held) msg.respond('{"error":{"code":503,"err_code":10077,"description":"late"}}');
    expect(await outcome).toEqual({ acked: 2 });
    expect((await nats.events(name)).map((e) => e.msgId)).toEqual(next.map((e) => e.id));
    subscription.unsubscribe();
  });

  it("a batch's own timeout, shorter than the publisher's (the relay's retry of one event)", async () => {
    const { silentEvents, subscription } = silence();
    const publisher = new BatchPublisher(connection, 600_000, 'NONE');
    expect(await publisher.publish(silentEvents(1), 200)).toEqual({ acked: 0, error: 'no acknowledgement from the broker within 200 ms', silent: true });
    subscription.unsubscribe();
  });

  it('the connection lost while a batch waits: the batch ends at once, not at the timeout', async () => {
    const { silentEvents } = silence();
    // A timeout no test waits for: only the connection's loss can end this batch in time.
    const publisher = new BatchPublisher(connection, 600_000, 'NONE');
    const outcome = publisher.publish(silentEvents(3));
    await connection.close();
    expect(await outcome).toEqual({ acked: 0, error: 'the connection to the broker closed', silent: true });
    await expect(publisher.publish(silentEvents(1))).resolves.toEqual({ acked: 0, error: expect.stringMatching(/closed/), silent: true });
  });

  it("an acknowledgement from another stream (whose subjects overlap) is a refusal naming it, not the stream's", async () => {
    const other = await stream();
    const publisher = new BatchPublisher(connection, 5000, 'NOT_THAT_ONE');
    const outcome = await publisher.publish(events(other, 2));
    expect(outcome).toEqual({ acked: 0, error: `the event was stored by the stream ${other}, not NOT_THAT_ONE: their subjects overlap`, silent: false });
  });

  it('one batch at a time', async () => {
    const name = await stream();
    const publisher = new BatchPublisher(connection, 5000, name);
    const first = publisher.publish(events(name, 1));
    await expect(publisher.publish(events(name, 1))).rejects.toThrow('one batch at a time');
    expect(await first).toEqual({ acked: 1 });
  });
});
