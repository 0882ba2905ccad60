// A JetStream consumer of the change events, in a worker thread of its own (so that the load
// generator's event loop never delays a receipt): for every event received, the delay from its
// CloudEvents `time` (set in the writing transaction) to the receipt. Asked by a message
// `{ report: true }`, it answers the count and the percentiles so far.
import { parentPort, workerData } from 'node:worker_threads';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

const { natsUrl, stream } = workerData;
const nc = await connect({ servers: natsUrl });
const js = jetstream(nc);
const delays = [];
const ids = new Set();
let duplicates = 0;
/** A plant's deletion received before its creation (each bench plant is created once, then deleted). */
let outOfOrder = 0;
const created = new Set();

parentPort.on('message', (message) => {
  if (message.report) {
    const sorted = delays.toSorted((a, b) => a - b);
    const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN);
    parentPort.postMessage({ received: delays.length, duplicates, outOfOrder, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? NaN });
  }
  if (message.stop) void nc.close().then(() => process.exit(0));
});

// The relay creates the stream when it first connects: an ordered consumer of the messages stored
// from now on once it exists (a comparison's stream holds those of its earlier rounds too).
let last;
for (;;) {
  try {
    last = (await (await jetstream(nc).jetstreamManager()).streams.info(stream)).state.last_seq;
    break;
  } catch {
    await new Promise((r) => setTimeout(r, 100));
  }
}
const consumer = await js.consumers.get(stream, { deliver_policy: 'by_start_sequence', opt_start_seq: last + 1 });
parentPort.postMessage({ ready: true });
// Pulls of 1,000 (a new one when 250 have arrived) instead of the client's 100 (every 25): the
// consumer is the bench's instrument, and its pulls cost the broker and this machine's shared cores.
for await (const message of await consumer.consume({ max_messages: 1000 })) {
  const received = Date.now();
  const event = message.json();
  if (ids.has(event.id)) {
    duplicates++;
    continue;
  }
  ids.add(event.id);
  delays.push(received - Date.parse(event.time));
  const plant = `${event.data.team}/${event.data.id}`;
  if (event.type.endsWith('.created')) created.add(plant);
  else if (event.type.endsWith('.deleted') && !created.delete(plant)) outOfOrder++;
}
