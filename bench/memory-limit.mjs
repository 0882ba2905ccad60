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
// Then it reads memory.max_usage_in_bytes (peak, page cache included), memory.failcnt (how often
// the limit was hit and the kernel had to reclaim), memory.oom_control's oom_kill counter and
// memory.stat, and checks that the service is still the same process and answers. Exit code 1
// if it was OOM-killed, exited, or a request failed. NODE_OPTIONS (e.g. --max-old-space-size=…)
// is passed on, to compare heap settings; V8's heap size limit is printed inside and outside the
// cgroup (whether Node sizes its default heap from the machine's memory or from the cgroup's limit).
//
// The database: BENCH_DATABASE_URL (default mysql://root@127.0.0.1:3306/plantstore_bench), whose
// user may create the database <name>_memory (dropped and re-created on every run).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { ROOT, cli, fmt, freePort, freshDatabase, seedStoresAndPlants } from './lib.mjs';
import { benchScenarios, searchDuringImport } from './scenarios.mjs';

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
// or the seeding command line, which run without it.
const SERVICE_NODE_OPTIONS = process.env.NODE_OPTIONS;
delete process.env.NODE_OPTIONS;
const serviceEnv = SERVICE_NODE_OPTIONS === undefined ? {} : { NODE_OPTIONS: SERVICE_NODE_OPTIONS };
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
const started = Date.now();
service = inCgroup([`${ROOT}dist/main.js`], {
  env: { ...process.env, ...serviceEnv, ...env, HOST: '127.0.0.1', PORT: String(port) },
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

// A 100,000-row store list uploaded to the admin API while searches run: the upload is
// spooled to a file and imported in two streamed passes, so it must fit in the same limit.
let duringImport;
if (!exit) {
  const importFile = join(work, 'import.csv');
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), importFile, '43'], { stdio: 'ignore' });
  const adminToken = await cli(env, 'tokens', 'create', '--team', 'ops', '--scope', 'admin');
  console.error('importing a store list through the admin API while searching…');
  duringImport = await searchDuringImport({ url, teamToken: tokens[0], adminToken, csvFile: importFile });
  rows.push({
    name: `POST /locations/nearest 5 mi during an import of ${STORES} rows`,
    rps: duringImport.duringRps,
    p99: NaN,
    failed: duringImport.searchFailures + (duringImport.importStatus === 200 ? 0 : 1),
    peak: readNumber('memory.max_usage_in_bytes') / MiB,
  });
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
  `\n${stores} stores, ${TEAMS * PLANTS_PER_TEAM} plants; memory cgroup limit ${LIMIT_MB} MiB${memsw ? ' (memory + swap alike)' : ''}; NODE_OPTIONS=${SERVICE_NODE_OPTIONS ?? '(unset)'}`,
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
if (duringImport)
  console.log(
    `store import through the admin API: ${fmt(duringImport.rows)} rows in ${fmt(duringImport.importSeconds, 1)} s (${fmt(duringImport.rowsPerSecond)} rows/s, status ${duringImport.importStatus}${duringImport.importError ? `: ${duringImport.importError}` : ''}); searches ${fmt(duringImport.duringRps)} req/s during it against ${fmt(duringImport.idleRps)} idle (${fmt(duringImport.ratio * 100)} %)`,
  );
console.log(`memory.failcnt: ${failcnt}; oom_kill: ${oom.oom_kill ?? 'n/a'}; under_oom: ${oom.under_oom}`);
console.log(`service: ${alive ? `alive, same pid ${pid}` : `GONE (${JSON.stringify(exit)})`}; failed requests: ${failedRequests}; log in ${logFile}`);

const ok = alive && samePid && (oom.oom_kill ?? 0) === 0 && failedRequests === 0;
console.log(ok ? `\nOK: no OOM kill within ${LIMIT_MB} MiB.` : `\nFAILED within ${LIMIT_MB} MiB.`);
await new Promise((resolve) => (exit ? resolve() : (service.once('exit', resolve), service.kill('SIGTERM'))));
process.exitCode = ok ? 0 : 1;
