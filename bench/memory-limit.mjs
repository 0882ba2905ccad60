// npm run bench:memory — does the service stay alive inside a container's memory limit with
// 100,000 stores and the benchmark's load?
//
// Linux cgroup v1 (/sys/fs/cgroup/memory), as root. It creates a child memory cgroup under this
// process's own, sets memory.limit_in_bytes (and memory.memsw.limit_in_bytes, so swap is no way
// out) to MEMORY_LIMIT_MB (default 256), and starts the built service (dist/main.js) through a
// shell that first writes its own pid into the cgroup's cgroup.procs and then execs Node: every
// byte the service ever allocates, its start-up and the load of the 100,000-store search index
// included, is charged to that cgroup. The scenarios of `npm run bench` (GET /plants, nearest
// stores at 5 and 50 miles, POST + DELETE /plants, invalid token) then run for DURATION seconds
// each (default 10) with 32 connections, ROUNDS times (default 2). Its stdout (one log line per
// request) goes through a pipe to this process, outside the cgroup, as a container runtime
// takes a container's stdout.
//
// Then, each while searches run and each with the cgroup's peak reset before it, the whole-catalogue
// operations: the upload of another 100,000-row list where every store changes, a dry run of a
// list that replaces half the catalogue (new codes, the rest pruned), its apply, and the export;
// the database and a search are then checked to hold the last list's stores and no other. A
// preloaded sampler (bench/memory-sampler.mjs) writes the service's own memory counters every
// 100 ms: the table shows them at each phase's highest resident set.
//
// Then it reads memory.max_usage_in_bytes (peak, page cache included), memory.failcnt (how often
// the limit was hit and the kernel had to reclaim), memory.oom_control's oom_kill counter and
// memory.stat, and checks that the service is still the same process and answers. Exit code 1
// if it was OOM-killed, exited, or a request failed. The service runs as the image runs it (its
// NODE_OPTIONS and MALLOC_* settings, `--import ./dist/instrumentation.js`); NODE_OPTIONS or a
// MALLOC_* variable given here replaces the image's, to compare settings; V8's heap size limit is printed inside and outside the
// cgroup (whether Node sizes its default heap from the machine's memory or from the cgroup's limit).
//
// The database: BENCH_DATABASE_URL (default mysql://root@127.0.0.1:3306/plantstore_bench), whose
// user may create the database <name>_memory (dropped and re-created on every run).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { PRODUCTION_HEAP_FLAGS, PRODUCTION_MALLOC_ENV, ROOT, cli, fmt, freePort, freshDatabase, seedStoresAndPlants } from './lib.mjs';
import { benchScenarios, searchDuring, searchDuringImport } from './scenarios.mjs';

const LIMIT_MB = Number(process.env.MEMORY_LIMIT_MB ?? 256);
const DURATION = Number(process.env.DURATION ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const STORES = Number(process.env.STORES ?? 100_000);
const TEAMS = 10;
const PLANTS_PER_TEAM = 1000;
const MiB = 1024 * 1024;

const memoryRoot = '/sys/fs/cgroup/memory';
if (!existsSync(`${memoryRoot}/memory.limit_in_bytes`)) {
  console.error(`no cgroup v1 memory controller at ${memoryRoot}: this measurement needs one (and root)`);
  process.exit(2);
}
// Under this process's own memory cgroup, so that whatever limits it already has still apply.
const own = /^\d+:memory:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
const cgroup = join(memoryRoot, own, `plant-store-memory-${process.pid}`);
const cg = (file) => join(cgroup, file);
const readNumber = (file) => Number(readFileSync(cg(file), 'utf8').trim());
const readKeyed = (file) =>
  Object.fromEntries(
    readFileSync(cg(file), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([k, v]) => [k, Number(v)]),
  );

console.error('building…');
// NODE_OPTIONS is the service's (and its heap probes'): a small heap limit would stop the compiler
// or the seeding command line, which run without it. Unset, the service runs with the image's
// (PRODUCTION_HEAP_FLAGS); NODE_OPTIONS= (empty) runs it with none.
const SERVICE_NODE_OPTIONS = process.env.NODE_OPTIONS ?? PRODUCTION_HEAP_FLAGS;
delete process.env.NODE_OPTIONS;
const serviceEnv = { NODE_OPTIONS: SERVICE_NODE_OPTIONS };
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });

console.error(`seeding ${STORES} stores and ${TEAMS * PLANTS_PER_TEAM} plants…`);
const DATABASE_URL = await freshDatabase('memory');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' };
const work = mkdtempSync(join(tmpdir(), 'plant-store-memory-'));
const { tokens } = await seedStoresAndPlants(env, { stores: STORES, teams: TEAMS, plantsPerTeam: PLANTS_PER_TEAM });
const db = await mysql.createConnection(DATABASE_URL);
const [[{ stores }]] = await db.query('SELECT COUNT(*) AS stores FROM stores');
await db.end();

mkdirSync(cgroup);
let service;
const cleanup = () => {
  service?.kill('SIGKILL');
  // The cgroup can only be removed once empty; the killed process leaves it within moments.
  for (let i = 0; i < 50 && existsSync(cgroup); i++) {
    try {
      rmdirSync(cgroup);
    } catch {
      execFileSync('sleep', ['0.1']);
    }
  }
};
process.once('exit', cleanup);
process.once('SIGINT', () => process.exit(130));
writeFileSync(cg('memory.limit_in_bytes'), String(LIMIT_MB * MiB));
const memsw = existsSync(cg('memory.memsw.limit_in_bytes'));
if (memsw) writeFileSync(cg('memory.memsw.limit_in_bytes'), String(LIMIT_MB * MiB));

/** Runs `node <args>` inside the cgroup (the shell joins it, then becomes Node). */
const inCgroup = (args, options) => spawn('/bin/sh', ['-c', `echo $$ > '${cg('cgroup.procs')}' && exec "$@"`, 'sh', process.execPath, ...args], options);
const heapLimit = (child) =>
  new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(Number(out) / MiB) : reject(new Error(`heap probe exited ${code}`))));
  });
const probe = ['-e', 'console.log(require("node:v8").getHeapStatistics().heap_size_limit)'];
const probeOptions = { env: { ...process.env, ...serviceEnv }, stdio: ['ignore', 'pipe', 'inherit'] };
const heapInside = await heapLimit(inCgroup(probe, probeOptions));
const heapOutside = await heapLimit(spawn(process.execPath, probe, probeOptions));

const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const logFile = join(work, 'service.log');
// Where the service's memory is, every 100 ms (bench/memory-sampler.mjs), beside the cgroup's own counters (read here).
const sampleFile = join(work, 'samples.jsonl');
const samplerOptions = `--import ${ROOT}bench/memory-sampler.mjs`;
const started = Date.now();
// As the image starts it: the tracing bootstrap first (it loads nothing more without an endpoint).
service = inCgroup(['--import', `${ROOT}dist/instrumentation.js`, `${ROOT}dist/main.js`], {
  env: {
    // The image's allocator settings, unless given here.
    ...PRODUCTION_MALLOC_ENV,
    ...process.env,
    ...env,
    NODE_OPTIONS: [SERVICE_NODE_OPTIONS, samplerOptions].filter(Boolean).join(' '),
    MEMORY_SAMPLE_FILE: sampleFile,
    HOST: '127.0.0.1',
    PORT: String(port),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
service.stdout.pipe(createWriteStream(logFile));
service.stderr.pipe(createWriteStream(join(work, 'service.err')));
let exit;
service.once('exit', (code, signal) => (exit = { code, signal }));
for (;;) {
  if (exit) throw new Error(`the service exited during start-up (${JSON.stringify(exit)}); see ${work}`);
  if (
    await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  await new Promise((r) => setTimeout(r, 50));
}
const readySeconds = (Date.now() - started) / 1000;
const pid = service.pid;
const afterStart = readNumber('memory.max_usage_in_bytes') / MiB;
console.error(`ready after ${fmt(readySeconds, 1)} s, peak so far ${fmt(afterStart)} MiB`);

const scenarios = benchScenarios({ tokens, duration: DURATION });
// CPU time of the service (utime + stime, clock ticks of 10 ms) over the whole load: how many cores it kept busy.
const cpuSeconds = () =>
  readFileSync(`/proc/${service.pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ')
    .slice(11, 13)
    .reduce((sum, t) => sum + Number(t), 0) / 100;
const cpuBefore = cpuSeconds();
const loadStarted = Date.now();
const rows = [];
for (const scenario of scenarios) {
  console.error(`running ${scenario.name}…`);
  for (let round = 0; round < ROUNDS && !exit; round++) {
    const r = await scenario.run(url);
    const expected = scenario.expect;
    const unexpected = Object.entries(r.statusCodes)
      .filter(([code]) => !expected.includes(Number(code)))
      .reduce((n, [, v]) => n + v.count, 0);
    rows.push({ name: scenario.name, rps: r.rps, p99: r.p99, failed: r.errors + unexpected, peak: readNumber('memory.max_usage_in_bytes') / MiB });
  }
}

// The whole-catalogue operations, each while searches run, each a phase of its own (the cgroup's
// peak is reset before it): the upload of another 100,000-row list where every store changes
// (seed 43), a dry run of a list that replaces half the catalogue (every second code new, the
// rest pruned), its apply, and the export. An import is spooled to a file and imported in
// streamed passes, so it must fit in the same limit.
const phases = [];
let catalogueCheck;
if (!exit) {
  const importFile = join(work, 'import.csv');
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), importFile, '43'], { stdio: 'ignore' });
  const changedText = readFileSync(importFile, 'utf8');
  const halfFile = join(work, 'half.csv');
  let renamed = 0;
  writeFileSync(
    halfFile,
    changedText
      .split('\n')
      .map((line, i) => (i > 0 && i % 2 === 0 && line.startsWith('SYN-') ? (renamed++, `NEW-${line.slice(4)}`) : line))
      .join('\n'),
  );
  const adminToken = await cli(env, 'tokens', 'create', '--team', 'ops', '--scope', 'admin');
  const operations = [
    { name: `import of ${STORES} rows, every store changed`, file: importFile, query: '' },
    { name: `dry run of ${STORES} rows replacing half the catalogue`, file: halfFile, query: `?dry_run=true&prune=true` },
    {
      name: `import of ${STORES} rows replacing half the catalogue (${renamed} new, ${renamed} pruned)`,
      file: halfFile,
      query: `?prune=true&expected_removals=${renamed}`,
    },
    { name: `export of ${STORES} stores`, export: true },
  ];
  for (const operation of operations) {
    if (exit) break;
    console.error(`${operation.name}, while searching…`);
    writeFileSync(cg('memory.max_usage_in_bytes'), '0');
    const from = Date.now();
    // The cgroup's peak counts the page cache too (the upload spooled to a file, which the kernel
    // can take back); its anonymous memory, what a kill is about, is read here every 100 ms.
    let anonPeak = 0;
    const anon = setInterval(() => {
      if (!exit) anonPeak = Math.max(anonPeak, readKeyed('memory.stat').total_rss / MiB);
    }, 100);
    const result = operation.export
      ? await searchDuring({
          url,
          teamToken: tokens[0],
          work: async () => {
            const res = await fetch(`${url}/admin/stores.csv`, { headers: { authorization: `Bearer ${adminToken}` } });
            let bytes = 0;
            for await (const chunk of res.body) bytes += chunk.length;
            return { status: res.status, body: { bytes } };
          },
        })
      : await searchDuringImport({ url, teamToken: tokens[0], adminToken, csvFile: operation.file, query: operation.query });
    clearInterval(anon);
    const phase = { ...operation, ...result, from, to: Date.now(), peak: readNumber('memory.max_usage_in_bytes') / MiB, anonPeak };
    phases.push(phase);
    rows.push({
      name: `searches 5 mi during the ${operation.name}`,
      rps: result.duringRps,
      p99: NaN,
      failed: result.searchFailures + (result.status === 200 ? 0 : 1),
      peak: phase.peak,
    });
  }
  // The catalogue after the last import, in the database and in the search: every store of the
  // file and none other, and a search that answers only stores of the file, at their places.
  if (!exit && phases.every((p) => p.status === 200)) {
    const file = parse(readFileSync(halfFile, 'utf8'), { columns: true });
    const db = await mysql.createConnection(DATABASE_URL);
    const [[{ count, fresh }]] = await db.query("SELECT COUNT(*) AS count, SUM(code LIKE 'NEW-%') AS fresh FROM stores");
    await db.end();
    const places = new Set(file.map((r) => `${r.name}|${Number(r.lat).toFixed(6)}|${Number(r.lng).toFixed(6)}`));
    const answer = await fetch(`${url}/locations/nearest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ customer_address: { zip: '10001' }, max_distance: 5, limit: 200 }),
    })
      .then((r) => r.json())
      .then((body) => body.locations);
    const strangers = answer.filter((l) => !places.has(`${l.name}|${l.lat}|${l.lng}`)).length;
    catalogueCheck = { count: Number(count), fresh: Number(fresh), expected: file.length, renamed, answered: answer.length, strangers };
  }
}
const cores = exit ? NaN : (cpuSeconds() - cpuBefore) / ((Date.now() - loadStarted) / 1000);
const alive =
  !exit &&
  (await fetch(`${url}/health/ready`).then(
    (r) => r.ok,
    () => false,
  ));
const samePid = alive && readFileSync(cg('cgroup.procs'), 'utf8').trim().split('\n').map(Number).includes(pid);
const peak = readNumber('memory.max_usage_in_bytes') / MiB;
const failcnt = readNumber('memory.failcnt');
const oom = readKeyed('memory.oom_control');
const stat = readKeyed('memory.stat');
const rssNow = alive ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 : NaN;
const rssPeak = alive ? Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024 : NaN;
const failedRequests = rows.reduce((n, r) => n + r.failed, 0);

console.log(
  `\n${stores} stores, ${TEAMS * PLANTS_PER_TEAM} plants; memory cgroup limit ${LIMIT_MB} MiB${memsw ? ' (memory + swap alike)' : ''}; NODE_OPTIONS=${SERVICE_NODE_OPTIONS || '(none)'}; ${Object.keys(
    PRODUCTION_MALLOC_ENV,
  )
    .map((key) => `${key}=${process.env[key] ?? PRODUCTION_MALLOC_ENV[key]}`)
    .join(' ')}`,
);
console.log(
  `V8 heap size limit: ${fmt(heapInside)} MiB inside the cgroup, ${fmt(heapOutside)} MiB outside (the machine has ${fmt(Number(/MemTotal:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))[1]) / 1024)} MiB)`,
);
console.log(`ready after ${fmt(readySeconds, 1)} s (index of ${stores} stores loaded); cgroup peak after start-up: ${fmt(afterStart)} MiB\n`);
console.log('| scenario | req/s | p99 ms | failed | cgroup peak so far MiB |\n|---|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${fmt(r.rps)} | ${r.p99} | ${r.failed} | ${fmt(r.peak)} |`);
console.log(`\nmemory.max_usage_in_bytes: ${fmt(peak)} MiB of ${LIMIT_MB} MiB (page cache included)`);
console.log(
  `at the end: rss ${fmt(stat.total_rss / MiB)} MiB, cache ${fmt(stat.total_cache / MiB)} MiB (memory.stat); process VmRSS ${fmt(rssNow)} MiB, VmHWM (its peak RSS) ${fmt(rssPeak)} MiB`,
);
console.log(`CPU: ${fmt(cores, 2)} cores busy on average under the load (the machine has ${availableParallelism()}, shared with autocannon and the database)`);
if (phases.length > 0) {
  // At each phase's highest sample of the cgroup's usage: what the service's own counters said then.
  const samples = existsSync(sampleFile)
    ? readFileSync(sampleFile, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  const mib = (bytes) => fmt(bytes / MiB);
  console.log(
    '\n| phase | status | seconds | cgroup peak MiB | anonymous peak MiB | at the highest RSS sample: RSS | V8 heap used / reserved | old space used / reserved | young reserved | external (array buffers) | searches, % of idle |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const p of phases) {
    const within = samples.filter((s) => s.t >= p.from && s.t <= p.to);
    const top = within.reduce((a, b) => (b.rss > (a?.rss ?? -1) ? b : a), undefined);
    console.log(
      `| ${p.name} | ${p.status}${p.error ? ` (${p.error})` : ''} | ${fmt(p.seconds, 1)} | ${fmt(p.peak)} | ${fmt(p.anonPeak)} | ${top ? mib(top.rss) : 'n/a'} | ${top ? `${mib(top.heapUsed)} / ${mib(top.heapTotal)}` : 'n/a'} | ${top ? `${mib(top.oldUsed)} / ${mib(top.oldSize)}` : 'n/a'} | ${top ? mib(top.youngSize) : 'n/a'} | ${top ? `${mib(top.external)} (${mib(top.arrayBuffers)})` : 'n/a'} | ${fmt(p.ratio * 100)} |`,
    );
  }
  if (catalogueCheck)
    console.log(
      `\nafter the last import: ${catalogueCheck.count} stores in the database (${catalogueCheck.fresh} new codes; the file has ${catalogueCheck.expected}, ${catalogueCheck.renamed} of them new); a 5-mile search answered ${catalogueCheck.answered} stores, ${catalogueCheck.strangers} of them not in the file`,
    );
}
console.log(`memory.failcnt: ${failcnt}; oom_kill: ${oom.oom_kill ?? 'n/a'}; under_oom: ${oom.under_oom}`);
console.log(`service: ${alive ? `alive, same pid ${pid}` : `GONE (${JSON.stringify(exit)})`}; failed requests: ${failedRequests}; log in ${logFile}`);

const catalogueOk =
  phases.length === 0 ||
  (catalogueCheck !== undefined &&
    catalogueCheck.count === catalogueCheck.expected &&
    catalogueCheck.fresh === catalogueCheck.renamed &&
    catalogueCheck.answered > 0 &&
    catalogueCheck.strangers === 0);
const ok = alive && samePid && (oom.oom_kill ?? 0) === 0 && failedRequests === 0 && catalogueOk;
console.log(ok ? `\nOK: no OOM kill within ${LIMIT_MB} MiB.` : `\nFAILED within ${LIMIT_MB} MiB.`);
await new Promise((resolve) => (exit ? resolve() : (service.once('exit', resolve), service.kill('SIGTERM'))));
process.exitCode = ok ? 0 : 1;
