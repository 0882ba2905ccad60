// npm run --silent events:next -- <stream> <consumer> [--count 10] [--wait 5s]
//
// Reads the next change events from the service's JetStream stream with a durable pull consumer,
// creating the consumer first when the stream has none of that name (every subject of the
// stream, from its first message, explicit acks), so that a fresh machine without the `nats`
// command line can follow the README's "Change events" (`nats consumer add` / `nats consumer
// next` do the same: docs/events.md). Prints one line per event: its NATS subject, a space and
// the CloudEvent as JSON; acks each. Stops after --count events, or once none has come for --wait
// (the first one) or a second (the ones after). The broker: EVENTS_NATS_URL, as the service reads
// it (default nats://127.0.0.1:4222). A missing stream or broker exits 1 with a message.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const [value] = args.splice(at, 2).slice(1);
  return value;
};
const count = Number(option('--count', '10'));
const waitText = option('--wait', '5s');
const [stream, name] = args;
const waitMs = /^\d+(ms)?$/.test(waitText) ? parseInt(waitText, 10) : /^\d+s$/.test(waitText) ? parseInt(waitText, 10) * 1000 : NaN;
if (!stream || !name || args.length > 2 || !Number.isInteger(count) || count < 1 || !(waitMs >= 1000)) {
  console.error('usage: npm run --silent events:next -- <stream> <consumer> [--count 10] [--wait 5s]');
  process.exit(2);
}

const servers = (process.env.EVENTS_NATS_URL ?? 'nats://127.0.0.1:4222').split(',');
let nc;
try {
  nc = await connect({ servers, timeout: 5000 });
} catch (error) {
  console.error(`events:next: cannot reach NATS at ${servers.join(',')} (EVENTS_NATS_URL): ${error.message}`);
  process.exit(1);
}
try {
  const manager = await jetstreamManager(nc);
  if (!(await manager.streams.info(stream).catch(() => undefined))) {
    throw new Error(`no stream ${stream} on ${servers.join(',')}: the service creates it when it starts with EVENTS_NATS_URL`);
  }
  const existing = await manager.consumers.info(stream, name).catch(() => undefined);
  if (!existing) {
    await manager.consumers.add(stream, { durable_name: name, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All });
    console.error(`events:next: created the consumer ${name} on ${stream} (every subject, from the first event)`);
  }
  const consumer = await jetstream(nc).consumers.get(stream, name);
  for (let got = 0; got < count; got++) {
    const message = await consumer.next({ expires: got === 0 ? waitMs : 1000 });
    if (!message) break;
    console.log(`${message.subject} ${message.string()}`);
    message.ack();
  }
} catch (error) {
  console.error(`events:next: ${error.message}`);
  process.exitCode = 1;
} finally {
  await nc.drain();
}
