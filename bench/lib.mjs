// Shared pieces of the benchmarks: databases, the CLI, service processes, autocannon.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import mysql from 'mysql2/promise';
import { plantRows } from './plants.mjs';

export const ROOT = new URL('..', import.meta.url).pathname;
export const MYSQL_URL = process.env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/plantstore_bench';
/**
 * The environment the image gives the service: the runtime stage's ENV in the Dockerfile of the
 * checkout at `root` (its last ENV instruction, continuation lines joined, `KEY=value` or
 * `KEY="value"` pairs).
 */
export function imageEnvironment(root = ROOT) {
  const instructions = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ').split('\n');
  const env = instructions.filter((line) => line.startsWith('ENV ')).at(-1) ?? '';
  return Object.fromEntries([...env.matchAll(/(\w+)=("[^"]*"|\S+)/g)].map(([, key, value]) => [key, value.replace(/^"(.*)"$/, '$1')]));
}
/** The heap flags production runs the service with (the image's NODE_OPTIONS, package.json's start scripts). */
const IMAGE_ENV = imageEnvironment();
export const PRODUCTION_HEAP_FLAGS = IMAGE_ENV.NODE_OPTIONS;
/** How the image tunes glibc's allocator (MALLOC_*: see the Dockerfile), for benchmarks that run the service as the image does. */
export const PRODUCTION_MALLOC_ENV = Object.fromEntries(Object.entries(IMAGE_ENV).filter(([key]) => key.startsWith('MALLOC_')));
/** The one token the floors of bench/floor-servers.mjs accept (they read team0's plants). */
export const FLOOR_TOKEN = 'pst_floor';

/** A fresh, empty MySQL database `<base>_<suffix>`; returns its URL. */
export async function freshDatabase(suffix) {
  const base = new URL(MYSQL_URL);
  const name = `${base.pathname.slice(1)}_${suffix}`;
  const admin = await mysql.createConnection({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username),
    password: decodeURIComponent(base.password),
  });
  await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function cli(env, ...args) {
  const { stdout } = await promisify(execFile)(process.execPath, [`${ROOT}dist/cli.js`, ...args], { env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  return stdout.trim();
}

/**
 * The benchmarks' data on the database of `env.DATABASE_URL`: `stores` synthetic stores spread like
 * the population (scripts/make-synthetic-stores.mjs), imported through the built command line,
 * a token for each of `teams` teams (team0, team1, …) and `plantsPerTeam` plants each. Returns the
 * tokens, the stores file and how long the import took.
 */
export async function seedStoresAndPlants(env, { stores, teams, plantsPerTeam }) {
  const storesFile = join(mkdtempSync(join(tmpdir(), 'plant-store-bench-')), 'stores.csv');
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(stores), storesFile], { stdio: 'ignore' });
  const importStarted = Date.now();
  await cli(env, 'locations', 'import', storesFile);
  const importSeconds = (Date.now() - importStarted) / 1000;
  const tokens = [];
  for (let i = 0; i < teams; i++) tokens.push(await cli(env, 'tokens', 'create', '--team', `team${i}`));
  const db = await mysql.createConnection(env.DATABASE_URL);
  for (let i = 0; i < teams; i++) await db.query('INSERT INTO plants (team, id, name, tag) VALUES ?', [plantRows(i, plantsPerTeam)]);
  await db.end();
  return { tokens, storesFile, importSeconds };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node <script>` and waits until `readyPath` answers 200; returns the time it took.
 * With `logFile`, the process logs at its default level (one line per request, as in
 * production) into that file; without, only warnings reach the terminal. Metrics are off
 * (METRICS_PORT=0) unless `env` sets a port: several servers run side by side.
 * `nodeArgs` go before the script (`--import ./dist/instrumentation.js`); `execPath` is the Node
 * that runs it (default: the one running the benchmark).
 */
export async function startProcess(script, env, { readyPath = '/health/ready', logFile, nodeArgs = [], execPath = process.execPath } = {}) {
  const port = await freePort();
  const started = process.hrtime.bigint();
  const stdout = logFile ? openSync(logFile, 'a') : 'inherit';
  const child = spawn(execPath, [...nodeArgs, script], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: '0', ...(logFile ? {} : { LOG_LEVEL: 'warn' }), ...env },
    stdio: ['ignore', stdout, 'inherit'],
  });
  // A crashed benchmark must not leave servers behind.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    if (
      await fetch(url + readyPath).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    url,
    readyMs,
    pid: child.pid,
    /** Resident set size of the process, from /proc (kB → MB). */
    rssMb: () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024,
    stop: () =>
      new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
    /** Sends `signal`; resolves with the exit code (or the signal that ended it) and the ms from the signal to the exit. */
    signal: (signal) =>
      new Promise((resolve) => {
        const sent = performance.now();
        if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode ?? child.signalCode, ms: 0 });
        child.once('exit', (code, killedBy) => resolve({ code: code ?? killedBy, ms: performance.now() - sent }));
        child.kill(signal);
      }),
  };
}

/** One autocannon run; `requests` rotates through several request bodies/paths. */
export async function load({ url, connections = 32, duration = 10, requests, method, path, body, headers }) {
  // autocannon takes the path from the URL (a top-level `path` option is ignored).
  const options = { url: path ? url + path : url, connections, duration, method, body, headers, requests };
  // autocannon takes an explicit `undefined` (e.g. method) as a value: leave such keys out.
  const result = await autocannon(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)));
  return {
    // autocannon's latency has 1 ms resolution; with one connection, 1000 / rps is the exact mean.
    meanMs: connections === 1 ? 1000 / result.requests.average : result.latency.mean,
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    statusCodes: result.statusCodeStats,
  };
}

/** CPU time (user + system, seconds) a process has used so far, from /proc/<pid>/stat; 0 once it is gone. */
export function cpuSeconds(pid) {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th, in clock ticks (100 a second on Linux).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The pid of a running program by its executable's name (mariadbd, nats-server), or undefined. */
export function pidOf(name) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/**
 * BENCH_PIN=1 (Linux, 2 or more CPUs): each service under load runs alone on CPU 0, and this
 * process (load generator, consumer) and the servers it shares the machine with (mariadbd,
 * nats-server) on the others, as when the service has a core of its own and the database and
 * the broker run elsewhere; the service's own CPU is then the limit, i.e. its own maximum rate.
 * Every thread of a process is moved (`taskset -a`); what the servers and this process had is put
 * back at the end (`restore`, also on exit). Without BENCH_PIN they all share every CPU, and the rate is the
 * machine's. Returns undefined when not pinning.
 */
export function pinCpus({ services, servers }) {
  if (process.env.BENCH_PIN !== '1') return undefined;
  const cpus = availableParallelism();
  if (cpus < 2) throw new Error('BENCH_PIN=1 needs 2 or more CPUs');
  const rest = cpus === 2 ? '1' : `1-${cpus - 1}`;
  const affinity = (pid) => /list: (.+)$/.exec(execFileSync('taskset', ['-p', '-c', String(pid)], { encoding: 'utf8' }).trim())[1];
  const set = (pid, list) => execFileSync('taskset', ['-a', '-p', '-c', list, String(pid)], { stdio: 'ignore' });
  // This process too: a second call (a comparison's next build) must find every CPU again.
  const before = [...servers, process.pid].map((pid) => [pid, affinity(pid)]);
  for (const pid of servers) set(pid, rest);
  set(process.pid, rest);
  for (const pid of services) set(pid, '0');
  const restore = () => {
    for (const [pid, list] of before) {
      try {
        set(pid, list);
      } catch {
        // gone meanwhile
      }
    }
    process.removeListener('exit', restore);
  };
  process.once('exit', restore);
  return { restore, description: `each service alone on CPU 0; load generator, consumer and ${servers.length ? 'servers' : 'the rest'} on CPUs ${rest}` };
}

export const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/**
 * `commit` checked out in a temporary git worktree, removed when this process exits, with
 * node_modules: `modules` (a directory installed from that commit's lockfile elsewhere) or this
 * checkout's when the two package-lock.json are equal, else `npm ci` there under `env` (its PATH
 * names the Node to install for). Returns the worktree's path (no trailing slash); not built.
 */
export function checkoutCommit(commit, { env = process.env, modules } = {}) {
  const dir = mkdtempSync(join(tmpdir(), `plant-store-${commit.slice(0, 7)}-`));
  const remove = () => {
    try {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
    } catch {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', remove);
  console.error(`checking out ${commit.slice(0, 7)} in ${dir}…`);
  execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  const sameLockfile = readFileSync(join(ROOT, 'package-lock.json'), 'utf8') === readFileSync(join(dir, 'package-lock.json'), 'utf8');
  const installed = modules ?? (sameLockfile ? join(ROOT, 'node_modules') : undefined);
  if (installed) symlinkSync(installed, join(dir, 'node_modules'), 'dir');
  else {
    console.error(`package-lock.json differs: npm ci in ${dir}…`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return dir;
}
