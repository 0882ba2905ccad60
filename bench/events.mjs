// Change events under sustained write load, shared by `npm run bench` (MySQL) and
// `npm run bench:sqlite`: POST + DELETE /plants at the service's own maximum rate (32
// connections) against a service with events on, alternating with the same load against one
// with events off, while a JetStream consumer in a worker thread measures the delay from each
// event's CloudEvents `time` to its receipt. The outbox's size is printed every 5 s of the load.
import { Worker } from 'node:worker_threads';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { cpuSeconds, fmt, pidOf, pinCpus } from './lib.mjs';

/**
 * `on` / `off`: { url, pid, writes } where `writes.run(url)` is one autocannon run of `seconds`;
 * `warmup` (optional): { run(url) }, a shorter run of the same writes against each service first,
 * not measured (the first run of a process is its JIT's and its pool's, and the relay's first
 * connection to the broker). The runs of each round alternate which of the two goes first (with
 * `offFirst` for the first round), so that a machine getting faster or slower over a round
 * favours neither. `last` false: this run's stream is kept for a later call (a comparison's
 * rounds); streams of runs that are no longer running are removed either way.
 * `outboxRows()`: the rows waiting now. Returns req/s on and off, the backlog samples and
 * at the end of each round, the delays (ms) of every event received, and the CPU time per write
 * of each process taking part (where the cost of the events goes, on a machine they all share):
 * the service under load, the `servers` found running by name, and this process. `database`
 * (bench/database-probe.mjs, optional): where the database server's time went in each run.
 */
export async function writesWithEvents({
  on,
  off,
  natsUrl,
  stream,
  rounds,
  outboxRows,
  label,
  servers = ['mariadbd', 'nats-server'],
  database,
  warmup,
  offFirst = false,
  last = true,
}) {
  const shared = servers.map((name) => ({ name, pid: pidOf(name) })).filter((p) => p.pid);
  for (const name of servers) if (!shared.some((p) => p.name === name)) console.error(`  no ${name} process found: its CPU time is not in this run's table`);
  /** CPU seconds used during `run()` by the service under load, each shared server, and this process (autocannon, the consumer's thread). */
  const measured = async (service, run) => {
    const parts = [{ name: 'service', pid: service.pid }, ...shared];
    const before = parts.map((p) => cpuSeconds(p.pid));
    const self = process.cpuUsage();
    await database?.start();
    const result = await run();
    const db = await database?.stop();
    const used = Object.fromEntries(parts.map((p, i) => [p.name, cpuSeconds(p.pid) - before[i]]));
    const { user, system } = process.cpuUsage(self);
    used['bench (load + consumer)'] = (user + system) / 1e6;
    return { ...result, cpu: used, db };
  };
  await removeBenchStreams(natsUrl, { keepOwn: true });
  // Before the consumer starts: it takes the events stored from its start on, and a warm-up's deletions would be ones whose creation it never saw.
  if (warmup) {
    console.error(`  ${label}: warming up both services…`);
    await warmup.run(on.url);
    await warmup.run(off.url);
    for (let i = 0; i < 300 && (await outboxRows()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
  }
  // Before the consumer's thread starts: a new thread takes its process's CPUs.
  const pinned = pinCpus({ services: [on.pid, off.pid], servers: shared.map((p) => p.pid) });
  if (pinned) console.error(`  BENCH_PIN: ${pinned.description}`);
  const consumer = new Worker(new URL('./events-consumer.mjs', import.meta.url), { workerData: { natsUrl, stream } });
  const ask = (message) => new Promise((resolve) => (consumer.once('message', resolve), consumer.postMessage(message)));
  consumer.once('error', (error) => console.error('the events consumer failed:', error));
  // It says so once it takes the stream's new messages: the first run's events are all its.
  await new Promise((resolve) => consumer.once('message', resolve));
  const runs = { on: [], off: [] };
  const backlog = [];
  const runOff = async (round) => {
    runs.off.push(await measured(off, () => off.writes.run(off.url)));
    console.error(`  ${label} round ${round}: events off ${fmt(runs.off.at(-1).rps)} req/s`);
  };
  for (let round = 1; round <= rounds; round++) {
    const offNow = (round % 2 === 1) === offFirst;
    if (offNow) await runOff(round);
    const samples = [];
    const started = Date.now();
    const sampler = setInterval(
      () =>
        void outboxRows().then(
          (n) => (
            samples.push(n),
            console.error(`  ${label} events on, round ${round}, ${Math.round((Date.now() - started) / 1000)} s: ${n} events in the outbox`)
          ),
        ),
      5000,
    );
    const result = await measured(on, () => on.writes.run(on.url));
    clearInterval(sampler);
    const atEnd = await outboxRows();
    backlog.push({ samples, atEnd, rps: result.rps });
    runs.on.push(result);
    console.error(`  ${label} round ${round}: events on ${fmt(result.rps)} req/s, ${atEnd} events in the outbox at the end`);
    // The next run starts from an empty outbox (what the backlog at the end says is about this run).
    for (let i = 0; i < 300 && (await outboxRows()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    if (!offNow) await runOff(round);
  }
  // Every 201 and 204 with events on is an event the consumer must have received once.
  const answered = runs.on.reduce((n, r) => n + (r.statusCodes['201']?.count ?? 0) + (r.statusCodes['204']?.count ?? 0), 0);
  // The outbox is empty after each run; the consumer may still be catching up with the broker.
  let delays = await ask({ report: true });
  for (let i = 0; i < 100 && delays.received < answered; i++) {
    await new Promise((r) => setTimeout(r, 100));
    delays = await ask({ report: true });
  }
  delays.lost = Math.max(0, answered - delays.received);
  consumer.postMessage({ stop: true });
  pinned?.restore();
  if (last) await removeBenchStreams(natsUrl, { only: stream });
  return { runs, backlog, delays, pinned: pinned?.description };
}

/**
 * The streams of benchmark runs (`BENCH<pid>`, `BENCH<pid>_<build>`) on the broker, left by this
 * run or a killed one: each takes `<prefix>.>`, and JetStream refuses a second stream with
 * overlapping subjects. `keepOwn`: not this process's; `only`: that one stream.
 */
export async function removeBenchStreams(natsUrl, { keepOwn = false, only } = {}) {
  const nc = await connect({ servers: natsUrl });
  const manager = await jetstreamManager(nc);
  for await (const name of manager.streams.names()) {
    if (!/^BENCH\d+(_\d+)?$/.test(name) || (only && name !== only)) continue;
    // `BENCH<pid>` or `BENCH<pid>_<build>`: a stream of this process is kept while it runs.
    if (keepOwn && name.split('_')[0] === `BENCH${process.pid}`) continue;
    await manager.streams.delete(name);
  }
  await nc.close();
}

/** Answers of writesWithEvents, one per round of a comparison, as one: the delays stay per round (percentiles do not add up). */
export function mergeRounds(results) {
  if (results.length === 1) return results[0];
  return {
    runs: { on: results.flatMap((r) => r.runs.on), off: results.flatMap((r) => r.runs.off) },
    backlog: results.flatMap((r) => r.backlog),
    delays: results.map((r) => r.delays),
    pinned: results[0].pinned,
  };
}

/** The report's lines (markdown), from writesWithEvents' answer. */
export function describeEvents({ runs, backlog, delays, pinned }, { natsUrl, seconds, expect }) {
  const mean = (list) => list.reduce((n, r) => n + r.rps, 0) / list.length;
  const errors = (list) =>
    list.reduce(
      (n, r) =>
        n +
        r.errors +
        Object.entries(r.statusCodes)
          .filter(([code]) => !expect.includes(Number(code)))
          .reduce((m, [, v]) => m + v.count, 0),
      0,
    );
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
    ...databaseTables(runs),
    ...[delays]
      .flat()
      .map(
        (d, i, all) =>
          `Commit to receipt by a JetStream consumer${all.length > 1 ? ` (round ${i + 1})` : ''}: ${d.received} events, p50 ${fmt(d.p50)} ms, p90 ${fmt(d.p90)} ms, p99 ${fmt(d.p99)} ms, max ${fmt(d.max)} ms; ${d.lost} lost (of the 201 and 204 answers), ${d.duplicates} duplicates, ${d.outOfOrder} deletions before their creation.`,
      ),
  ];
  return lines.join('\n');
}

/**
 * The database server's CPU per write by kind of thread, and (with performance_schema on) its
 * time per write by statement shape, events on and off: where a write with events spends more.
 */
function databaseTables(runs) {
  if (!runs.on[0].db) return [];
  const writes = (list) => list.reduce((n, r) => n + r.total, 0);
  const sum = (list, pick) => {
    const totals = new Map();
    for (const run of list) for (const [key, value] of pick(run.db)) totals.set(key, (totals.get(key) ?? 0) + value);
    return totals;
  };
  const row = (name, on, off) => `| ${name} | ${fmt(on)} | ${fmt(off)} | ${fmt(on - off)} |`;
  const threads = { on: sum(runs.on, (db) => Object.entries(db.threads)), off: sum(runs.off, (db) => Object.entries(db.threads)) };
  const kinds = [...new Set([...threads.on.keys(), ...threads.off.keys()])];
  const lines = [
    '| database CPU per write (µs) | events on | events off | on − off |',
    '|---|---:|---:|---:|',
    ...kinds.map((kind) => row(kind, (1e6 * (threads.on.get(kind) ?? 0)) / writes(runs.on), (1e6 * (threads.off.get(kind) ?? 0)) / writes(runs.off))),
    '',
  ];
  if (runs.on[0].db.statements.length === 0) return [...lines, 'Statement times: start the database server with --performance-schema=ON to see them.', ''];
  /** Totals by statement shape of one figure (`pick`) of each digest. */
  const byShape = (pick) => (db) => db.statements.map((s) => [s.digest.replace(/\s+/g, ' ').slice(0, 110), pick(s)]);
  const both = (pick) => ({ on: sum(runs.on, byShape(pick)), off: sum(runs.off, byShape(pick)) });
  const time = both((s) => s.ms * 1000);
  const calls = both((s) => s.calls);
  const shapes = [...new Set([...time.on.keys(), ...time.off.keys()])].sort((a, b) => (time.on.get(b) ?? 0) - (time.on.get(a) ?? 0));
  const perWrite = (map, side, shape) => (map[side].get(shape) ?? 0) / writes(runs[side]);
  return [
    ...lines,
    '| statement (server time per write, µs; calls per write) | events on | events off |',
    '|---|---:|---:|',
    ...shapes.map(
      (shape) =>
        `| \`${shape.replaceAll('|', '\\|')}\` | ${fmt(perWrite(time, 'on', shape))} (${fmt(perWrite(calls, 'on', shape), 3)}) | ${fmt(perWrite(time, 'off', shape))} (${fmt(perWrite(calls, 'off', shape), 3)}) |`,
    ),
    '',
  ];
}

/** CPU time per write (µs) of each process, events on and off, summed over the rounds. */
function cpuTable(runs) {
  const perWrite = (list, name) => (1e6 * list.reduce((n, r) => n + (r.cpu[name] ?? 0), 0)) / list.reduce((n, r) => n + r.total, 0);
  const names = Object.keys(runs.on[0].cpu);
  const total = (list) => names.reduce((n, name) => n + perWrite(list, name), 0);
  return [
    '| CPU per write (µs) | events on | events off | on − off |',
    '|---|---:|---:|---:|',
    ...names.map(
      (name) => `| ${name} | ${fmt(perWrite(runs.on, name))} | ${fmt(perWrite(runs.off, name))} | ${fmt(perWrite(runs.on, name) - perWrite(runs.off, name))} |`,
    ),
    `| all | ${fmt(total(runs.on))} | ${fmt(total(runs.off))} | ${fmt(total(runs.on) - total(runs.off))} |`,
  ];
}

/**
 * The relay's lease holder stopped while writes go on through every instance, as in a deploy:
 * `instances` services with events on (one stream), `writers` loops each creating then deleting
 * one plant after another, spread over the instances a load balancer sends to (a signalled one
 * leaves the rotation at once, as its readiness turns 503; what it was answering finishes).
 * - `mode` 'stop': after `warmup` s, `signal` to the holder named in the lease row; the window
 *   is the `seconds` after the signal.
 * - `mode` 'rolling': main onto itself as the Deployment rolls (maxUnavailable 0, one at a time):
 *   a new instance is started and ready, then an old one gets `signal` and is awaited, until no
 *   old one is left, the holder first (where it is likely to be at the worst moment). The window
 *   is from the first new start to `seconds` after the last exit.
 * SIGTERM is the handover; SIGKILL hands nothing over (the lease expires), as a relay without the
 * handover did after its drain. Counted from the stream afterwards: the write-to-broker delay
 * (the broker's storing time minus the CloudEvents `time`, one machine's clock) of the events
 * written in the window, and over the whole run the writes acknowledged but never published
 * (lost) and the events stored twice or for one write twice (doubled).
 */
export async function writesThroughAStop({
  start,
  holderPid,
  outboxRows,
  token,
  natsUrl,
  stream,
  mode,
  signal,
  writers = 8,
  seconds = 15,
  warmup = 5,
  firstId = 1,
}) {
  await removeBenchStreams(natsUrl);
  const services = [];
  for (let i = 0; i < 2; i++) services.push(await start());
  const routed = new Set(services);
  const acknowledged = new Set();
  const unanswered = new Set();
  let failures = 0;
  let stop = false;
  let nextId = firstId;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const writer = async (n) => {
    while (!stop) {
      const list = [...routed];
      const service = list[n % list.length];
      const id = nextId++;
      for (const kind of ['created', 'deleted']) {
        const status = await fetch(kind === 'created' ? `${service.url}/plants` : `${service.url}/plants/${id}`, {
          method: kind === 'created' ? 'POST' : 'DELETE',
          headers,
          body: kind === 'created' ? JSON.stringify({ id, name: `handover ${id}` }) : undefined,
        }).then(
          async (res) => (await res.arrayBuffer(), res.status),
          () => 0,
        );
        if (status === 0) unanswered.add(`${kind} ${id}`);
        else if (status !== 201 && status !== 204) failures++;
        if (status !== 201 && status !== 204) break;
        acknowledged.add(`${kind} ${id}`);
      }
    }
  };
  const running = Array.from({ length: writers }, (_, n) => writer(n));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  await sleep(warmup * 1000);
  const holder = await holderPid();
  const exits = [];
  const retire = async (service) => {
    routed.delete(service);
    exits.push({ ...(await service.signal(signal)), holder: service.pid === holder });
  };
  const from = Date.now();
  if (mode === 'stop') await retire(services.find((s) => s.pid === holder));
  else {
    for (const service of services.toSorted((a, b) => (b.pid === holder) - (a.pid === holder))) {
      const fresh = await start();
      services.push(fresh);
      routed.add(fresh);
      await retire(service);
    }
  }
  const lastExit = Date.now();
  await sleep(mode === 'stop' ? Math.max(0, seconds * 1000 - (lastExit - from)) : seconds * 1000);
  const to = mode === 'stop' ? from + seconds * 1000 : Date.now();
  // The writes go on past the window: the last ones of a non-holder would otherwise wait for the holder's next interval, with no write of its own to start a round.
  await sleep(2000);
  stop = true;
  await Promise.all(running);
  // Whatever waits is published by a surviving relay (after the lease's expiry, after a SIGKILL): a row leaves the outbox once the broker has it.
  for (let i = 0; i < 600 && (await outboxRows()) > 0; i++) await sleep(100);
  const events = await storedEvents(natsUrl, stream);
  for (const service of services) await service.stop();
  const unique = [...new Map(events.map((e) => [e.event.id, e])).values()];
  const keys = unique.map((e) => `${e.event.type.endsWith('created') ? 'created' : 'deleted'} ${e.event.data.id}`);
  const published = new Set(keys);
  const window = unique.filter((e) => Date.parse(e.event.time) >= from && Date.parse(e.event.time) < to);
  const delays = window.map((e) => e.storedAt - Date.parse(e.event.time)).sort((a, b) => a - b);
  const at = (q) => (delays.length ? delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] : NaN);
  return {
    mode,
    signal,
    windowSeconds: (to - from) / 1000,
    written: window.length,
    p50: at(0.5),
    p99: at(0.99),
    max: delays.at(-1) ?? NaN,
    later1s: delays.filter((d) => d > 1000).length,
    /** Of the events later than 1 s, how many were written in each second of the window (second: count). */
    lateBySecond: window.reduce((counts, e) => {
      if (e.storedAt - Date.parse(e.event.time) <= 1000) return counts;
      const second = Math.floor((Date.parse(e.event.time) - from) / 1000);
      return { ...counts, [second]: (counts[second] ?? 0) + 1 };
    }, {}),
    acknowledged: acknowledged.size,
    lost: [...acknowledged].filter((key) => !published.has(key)).length,
    doubled: events.length - unique.length + (keys.length - published.size),
    unexplained: keys.filter((key) => !acknowledged.has(key) && !unanswered.has(key)).length,
    failures,
    exits,
    nextId,
  };
}

/** Every message of `stream`, with the broker's storing time. */
async function storedEvents(natsUrl, stream) {
  const nc = await connect({ servers: natsUrl });
  try {
    const total = (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
    const events = [];
    if (total === 0) return events;
    const consumer = await jetstream(nc).consumers.get(stream);
    for await (const message of await consumer.consume({ max_messages: 1000 })) {
      events.push({ storedAt: message.time.getTime(), event: message.json() });
      if (events.length === total) break;
    }
    return events;
  } finally {
    await nc.close();
  }
}

/** The report's lines (markdown) of writesThroughAStop's answers, alternating runs. */
export function describeHandover(results, { writers, seconds, load }) {
  const exit = (r) => r.exits.map((e) => `${e.code} in ${fmt(e.ms / 1000, 1)} s${e.holder ? ' (holder)' : ''}`).join(', ');
  return [
    `Writes (create, then delete) through every instance, ${writers} loops, MariaDB; lease holder stopped; write-to-broker delay of the events written ${results[0].mode === 'stop' ? `in the ${seconds} s after the signal` : `from the first new instance's start to ${seconds} s after the last old one's exit`}; load average ${load}:`,
    '',
    `| run | signal | events in the window | p50 ms | p99 ms | max ms | later than 1 s | writes acknowledged | not 2xx | lost | doubled | published, not acknowledged | exit code, time from signal to exit |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...results.map(
      (r, i) =>
        `| ${i + 1} ${r.mode} | ${r.signal} | ${r.written} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.later1s} | ${r.acknowledged} | ${r.failures} | ${r.lost} | ${r.doubled} | ${r.unexplained} | ${exit(r)} |`,
    ),
  ].join('\n');
}
