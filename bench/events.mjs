// Change events under sustained write load, shared by `npm run bench` (MySQL) and
// `npm run bench:sqlite`: POST + DELETE /plants at the service's own maximum rate (32
// connections) against a service with events on, alternating with the same load against one
// with events off, while a JetStream consumer in a worker thread measures the delay from each
// event's CloudEvents `time` to its receipt. The outbox's size is printed every 5 s of the load.
import { Worker } from 'node:worker_threads';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { cpuSeconds, fmt, pidOf, pinCpus } from './lib.mjs';

/**
 * `on` / `off`: { url, pid, writes } where `writes.run(url)` is one autocannon run of `seconds`;
 * `outboxRows()`: the rows waiting now. Returns req/s on and off, the backlog samples and
 * at the end of each round, the delays (ms) of every event received, and the CPU time per write
 * of each process taking part (where the cost of the events goes, on a machine they all share):
 * the service under load, the `servers` found running by name, and this process.
 */
export async function writesWithEvents({ on, off, natsUrl, stream, rounds, outboxRows, label, servers = ['mariadbd', 'nats-server'] }) {
  const shared = servers.map((name) => ({ name, pid: pidOf(name) })).filter((p) => p.pid);
  /** CPU seconds used during `run()` by the service under load, each shared server, and this process (autocannon, the consumer's thread). */
  const measured = async (service, run) => {
    const parts = [{ name: 'service', pid: service.pid }, ...shared];
    const before = parts.map((p) => cpuSeconds(p.pid));
    const self = process.cpuUsage();
    const result = await run();
    const used = Object.fromEntries(parts.map((p, i) => [p.name, cpuSeconds(p.pid) - before[i]]));
    const { user, system } = process.cpuUsage(self);
    used['bench (load + consumer)'] = (user + system) / 1e6;
    return { ...result, cpu: used };
  };
  await removeBenchStreams(natsUrl);
  // Before the consumer's thread starts: a new thread takes its process's CPUs.
  const pinned = pinCpus({ services: [on.pid, off.pid], servers: shared.map((p) => p.pid) });
  if (pinned) console.error(`  BENCH_PIN: ${pinned.description}`);
  const consumer = new Worker(new URL('./events-consumer.mjs', import.meta.url), { workerData: { natsUrl, stream } });
  const ask = (message) => new Promise((resolve) => (consumer.once('message', resolve), consumer.postMessage(message)));
  consumer.once('error', (error) => console.error('the events consumer failed:', error));
  const runs = { on: [], off: [] };
  const backlog = [];
  for (let round = 1; round <= rounds; round++) {
    const samples = [];
    const started = Date.now();
    const sampler = setInterval(() => void outboxRows().then((n) => (samples.push(n), console.error(`  ${label} events on, round ${round}, ${Math.round((Date.now() - started) / 1000)} s: ${n} events in the outbox`))), 5000);
    const result = await measured(on, () => on.writes.run(on.url));
    clearInterval(sampler);
    const atEnd = await outboxRows();
    backlog.push({ samples, atEnd, rps: result.rps });
    runs.on.push(result);
    console.error(`  ${label} round ${round}: events on ${fmt(result.rps)} req/s, ${atEnd} events in the outbox at the end`);
    // The next run starts from an empty outbox (what the backlog at the end says is about this run).
    for (let i = 0; i < 300 && (await outboxRows()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    runs.off.push(await measured(off, () => off.writes.run(off.url)));
    console.error(`  ${label} round ${round}: events off ${fmt(runs.off.at(-1).rps)} req/s`);
  }
  const delays = await ask({ report: true });
  consumer.postMessage({ stop: true });
  pinned?.restore();
  await removeBenchStreams(natsUrl);
  return { runs, backlog, delays, pinned: pinned?.description };
}

/**
 * The streams of benchmark runs (`BENCH<pid>`) on the broker, left by this run or a killed one:
 * each takes `<prefix>.>`, and JetStream refuses a second stream with overlapping subjects.
 */
export async function removeBenchStreams(natsUrl) {
  const nc = await connect({ servers: natsUrl });
  const manager = await jetstreamManager(nc);
  for await (const name of manager.streams.names()) if (/^BENCH\d+$/.test(name)) await manager.streams.delete(name);
  await nc.close();
}

/** The report's lines (markdown), from writesWithEvents' answer. */
export function describeEvents({ runs, backlog, delays, pinned }, { natsUrl, seconds, expect }) {
  const mean = (list) => list.reduce((n, r) => n + r.rps, 0) / list.length;
  const errors = (list) => list.reduce((n, r) => n + r.errors + Object.entries(r.statusCodes).filter(([code]) => !expect.includes(Number(code))).reduce((m, [, v]) => m + v.count, 0), 0);
  const onRps = mean(runs.on);
  const offRps = mean(runs.off);
  const lines = [
    `POST + DELETE /plants for ${seconds} s per run, events on (relay to ${natsUrl}) and off, alternating, ${runs.on.length} rounds; ${pinned ? `BENCH_PIN: ${pinned}` : 'every process on every CPU (BENCH_PIN=1: the service on a CPU of its own)'}:`,
    '',
    '| | req/s (mean) | errors | outbox at the end of each run | outbox at the end / writes per second |',
    '|---|---:|---:|---|---:|',
    `| events on | ${fmt(onRps)} | ${errors(runs.on)} | ${backlog.map((b) => fmt(b.atEnd)).join(', ')} | ${fmt(Math.max(...backlog.map((b) => b.atEnd / b.rps)), 2)} s |`,
    `| events off | ${fmt(offRps)} | ${errors(runs.off)} | - | - |`,
    '',
    `Writes with events / without: ${fmt(onRps / offRps, 2)}. Outbox every 5 s of each run: ${backlog.map((b) => `[${b.samples.join(', ')}]`).join(' ')}.`,
    '',
    ...cpuTable(runs),
    '',
    `Commit to receipt by a JetStream consumer: ${delays.received} events, p50 ${fmt(delays.p50)} ms, p90 ${fmt(delays.p90)} ms, p99 ${fmt(delays.p99)} ms, max ${fmt(delays.max)} ms; ${delays.duplicates} duplicates, ${delays.outOfOrder} deletions before their creation.`,
  ];
  return lines.join('\n');
}

/** CPU time per write (µs) of each process, events on and off, summed over the rounds. */
function cpuTable(runs) {
  const perWrite = (list, name) => (1e6 * list.reduce((n, r) => n + (r.cpu[name] ?? 0), 0)) / list.reduce((n, r) => n + r.total, 0);
  const names = Object.keys(runs.on[0].cpu);
  const total = (list) => names.reduce((n, name) => n + perWrite(list, name), 0);
  return [
    '| CPU per write (µs) | events on | events off | on − off |',
    '|---|---:|---:|---:|',
    ...names.map((name) => `| ${name} | ${fmt(perWrite(runs.on, name))} | ${fmt(perWrite(runs.off, name))} | ${fmt(perWrite(runs.on, name) - perWrite(runs.off, name))} |`),
    `| all | ${fmt(total(runs.on))} | ${fmt(total(runs.off))} | ${fmt(total(runs.on) - total(runs.off))} |`,
  ];
}
