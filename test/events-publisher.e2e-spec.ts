import { randomUUID } from 'node:crypto';
import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
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
    nats.resume();
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
    const publisher = new BatchPublisher(connection, 5000);
    expect(await publisher.publish(batch)).toEqual({ acked: 700 });
    expect(await publisher.publish(batch.slice(0, 0))).toEqual({ acked: 0 });
    const stored = await nats.events(name);
    expect(stored.map((e) => [e.natsSubject, e.msgId, e.event])).toEqual(batch.map((e) => [e.subject, e.id, JSON.parse(e.payload)]));
  });

  it('counts an event the stream had already (same id, within its duplicate window) as acknowledged, and stores it once', async () => {
    const name = await stream();
    const [first, second] = events(name, 2);
    const publisher = new BatchPublisher(connection, 5000);
    expect(await publisher.publish([first])).toEqual({ acked: 1 });
    expect(await publisher.publish([first, second, first])).toEqual({ acked: 3 });
    expect((await nats.events(name)).map((e) => e.msgId)).toEqual([first.id, second.id]);
  });

  it('a subject no stream takes: nothing acknowledged, the 503 named', async () => {
    const publisher = new BatchPublisher(connection, 5000);
    const outcome = await publisher.publish([{ subject: `nostream${Date.now()}.x`, payload: '{}', id: randomUUID() }]);
    expect(outcome).toEqual({ acked: 0, error: expect.stringContaining('503') });
  });

  it('a stream that refuses part of a batch: the prefix it stored is acknowledged, the refusal named', async () => {
    const name = await stream({ max_msgs: 3, discard: DiscardPolicy.New });
    const publisher = new BatchPublisher(connection, 5000);
    const outcome = await publisher.publish(events(name, 5));
    expect(outcome).toEqual({ acked: 3, error: expect.stringMatching(/^JetStream refused the event: .*maximum messages/i) });
    expect(await nats.events(name)).toHaveLength(3);
  });

  it('a frozen broker: the batch ends after the timeout with nothing acknowledged, and a later batch counts only its own answers', async () => {
    const name = await stream();
    const publisher = new BatchPublisher(connection, 300);
    nats.pause();
    expect(await publisher.publish(events(name, 4))).toEqual({ acked: 0, error: 'no acknowledgement from the broker within 300 ms' });
    nats.resume();
    // The four late acknowledgements arrive before or while this batch waits; they are not its own.
    const next = events(name, 2);
    expect(await publisher.publish(next)).toEqual({ acked: 2 });
    expect((await nats.events(name)).map((e) => e.msgId).slice(-2)).toEqual(next.map((e) => e.id));
  });

  it('the connection lost while a batch waits: the batch ends at once, not at the timeout', async () => {
    const name = await stream();
    // A timeout no test waits for: only the connection's loss can end this batch in time.
    const publisher = new BatchPublisher(connection, 600_000);
    nats.pause();
    const outcome = publisher.publish(events(name, 3));
    await connection.close();
    expect(await outcome).toEqual({ acked: 0, error: 'the connection to the broker closed' });
    await expect(publisher.publish(events(name, 1))).resolves.toEqual({ acked: 0, error: expect.stringMatching(/closed/) });
  });

  it('one batch at a time', async () => {
    const name = await stream();
    const publisher = new BatchPublisher(connection, 5000);
    const first = publisher.publish(events(name, 1));
    await expect(publisher.publish(events(name, 1))).rejects.toThrow('one batch at a time');
    expect(await first).toEqual({ acked: 1 });
  });
});
