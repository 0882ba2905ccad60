// npm run bench:rss — where the service's resident memory is after the load, and what a node flag
// or an environment variable changes in it.
//
// Seeds one MySQL database (BENCH_DATABASE_URL, as npm run bench: `<name>_rss`) with STORES
// synthetic stores (default 100,000) and 10,000 plants (or uses SEEDED_DATABASE_URL, a database
// such a run seeded: a token is made for it), then for each variant of RSS_VARIANTS
// starts the built service fresh (as in production: NODE_ENV=production, one log line per request
// into a file, metrics off, abuse limits off), runs the list and the searches at 5 and 50 mi
// (DURATION seconds each, default 5, 32 connections) and reads, after the load:
//
// - VmRSS and VmHWM (its peak) from /proc/<pid>/status, and the resident set split into anonymous
//   memory and file pages (the node binary, shared libraries) from /proc/<pid>/smaps_rollup;
// - process.memoryUsage() and V8's heap spaces, through bench/memory-probe.mjs (preloaded; on
//   SIGUSR2 it writes them as they are and again after a full collection: what is live), and the
//   garbage collector's pauses during the load by kind;
// - and, per scenario, req/s, p99 and the service's CPU time per request (from /proc: what a
//   flag costs, less moved by the machine's other work than req/s);
//
// ROUNDS times (default 2), each round starting every variant anew, their order turning from
// round to round. A variant is `name=settings`, settings separated by spaces, each a node flag
// (`--max-semi-space-size=4`) or an environment variable (`MALLOC_ARENA_MAX=2`); variants are
// separated by `;`. Default: `no-flag;npm-start=--max-old-space-size=256` (the service without a
// heap limit, as the other benches start it, and with the one npm start and the image give it). The table gives the means of the
// rounds (MB = MiB), the req/s and worst p99 of each scenario, and the machine's load average.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PRODUCTION_HEAP_FLAGS, ROOT, cli, cpuSeconds, fmt, freshDatabase, seedStoresAndPlants, startProcess } from './lib.mjs';
import { benchScenarios } from './scenarios.mjs';

const DURATION = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const STORES = Number(process.env.STORES ?? 100_000);
const TEAMS = 10;
const PLANTS_PER_TEAM = 1000;
const VARIANTS = (process.env.RSS_VARIANTS ?? `no-flag;npm-start=${PRODUCTION_HEAP_FLAGS}`).split(';').map((spec) => {
  const [name, settings = ''] = spec.trim().split(/=(.*)/s);
  const parts = settings.split(/\s+/).filter(Boolean);
  return {
    name,
    nodeArgs: parts.filter((p) => p.startsWith('--')),
    env: Object.fromEntries(parts.filter((p) => !p.startsWith('--')).map((p) => p.split(/=(.*)/s).slice(0, 2))),
  };
});
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const kb = (text, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]) / 1024;

const DATABASE_URL = process.env.SEEDED_DATABASE_URL ?? (await freshDatabase('rss'));
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0' };
let tokens;
if (process.env.SEEDED_DATABASE_URL) tokens = [await cli(env, 'tokens', 'create', '--team', 'team0')];
else {
  console.error(`seeding ${STORES} stores and ${TEAMS * PLANTS_PER_TEAM} plants…`);
  ({ tokens } = await seedStoresAndPlants(env, { stores: STORES, teams: TEAMS, plantsPerTeam: PLANTS_PER_TEAM }));
}
const scenarios = benchScenarios({ tokens, duration: DURATION }).slice(0, 3);
const work = mkdtempSync(join(tmpdir(), 'plant-store-rss-'));
const probe = `${ROOT}bench/memory-probe.mjs`;

async function probed(pid) {
  const file = join(work, `${pid}.json`);
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 200 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 50));
  return JSON.parse(readFileSync(file, 'utf8'));
}

const loads = [loadAverage()];
const results = Object.fromEntries(VARIANTS.map((v) => [v.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (let i = 0; i < VARIANTS.length; i++) {
    const variant = VARIANTS[(i + round) % VARIANTS.length];
    console.error(`round ${round + 1}: ${variant.name}…`);
    const service = await startProcess(
      `${ROOT}dist/main.js`,
      { ...env, ...variant.env, MEMORY_PROBE_DIR: work },
      { logFile: join(work, `${variant.name}.log`), nodeArgs: [...variant.nodeArgs, '--import', probe, '--import', `${ROOT}dist/instrumentation.js`] },
    );
    const status = () => readFileSync(`/proc/${service.pid}/status`, 'utf8');
    const idleRss = kb(status(), 'VmRSS');
    const runs = [];
    process.kill(service.pid, 'SIGWINCH');
    for (const s of scenarios) {
      const cpuBefore = cpuSeconds(service.pid);
      const run = await s.run(service.url);
      runs.push({ ...run, cpuUs: ((cpuSeconds(service.pid) - cpuBefore) / run.total) * 1e6 });
    }
    const after = status();
    const rollup = readFileSync(`/proc/${service.pid}/smaps_rollup`, 'utf8');
    const memory = await probed(service.pid);
    const afterGcRss = kb(status(), 'VmRSS');
    await service.stop();
    results[variant.name].push({
      idleRss,
      rss: kb(after, 'VmRSS'),
      hwm: kb(after, 'VmHWM'),
      anonymous: kb(rollup, 'Anonymous'),
      file: kb(rollup, 'Rss') - kb(rollup, 'Anonymous'),
      memory,
      afterGcRss,
      runs,
    });
    loads.push(loadAverage());
  }
}

const mean = (rows, f) => rows.reduce((n, r) => n + f(r), 0) / rows.length;
console.log(
  `\n${STORES} stores, ${TEAMS * PLANTS_PER_TEAM} plants; ${scenarios.map((s) => s.name).join(', ')}: ${DURATION} s each, 32 connections; ${ROUNDS} rounds, each variant started anew, alternating.`,
);
console.log(`Load average (1, 5, 15 min) before and after each run: ${loads.join(' | ')}.\n`);
console.log(
  '| variant | RSS idle | RSS after load | peak (VmHWM) | anonymous | file pages | V8 heap total | heap used | external | of it array buffers | anonymous outside the heap and external | heap used after a full GC | RSS after that GC | ' +
    scenarios.map((s) => `${s.name} req/s (p99 ms), CPU µs / request`).join(' | ') +
    ' | errors |',
);
console.log(`|---|${'---:|'.repeat(12 + scenarios.length)}---:|`);
for (const variant of VARIANTS) {
  const rows = results[variant.name];
  const m = (f) => fmt(mean(rows, f));
  const bad = rows.reduce((n, r) => n + r.runs.reduce((k, run) => k + run.errors + run.non2xx, 0), 0);
  console.log(
    `| ${variant.name} | ${m((r) => r.idleRss)} | ${m((r) => r.rss)} (${rows.map((r) => fmt(r.rss)).join(', ')}) | ${m((r) => r.hwm)} | ${m((r) => r.anonymous)} | ${m((r) => r.file)} | ${m((r) => r.memory.before.heapTotal)} | ${m((r) => r.memory.before.heapUsed)} | ${m((r) => r.memory.before.external)} | ${m((r) => r.memory.before.arrayBuffers)} | ${m((r) => r.anonymous - r.memory.before.heapTotal - r.memory.before.external)} | ${m((r) => r.memory.afterGc.heapUsed)} | ${m((r) => r.afterGcRss)} | ` +
      scenarios.map((_, i) => `${m((r) => r.runs[i].rps)} (${Math.max(...rows.map((r) => r.runs[i].p99))}), ${m((r) => r.runs[i].cpuUs)}`).join(' | ') +
      ` | ${bad} |`,
  );
}
console.log("\nGarbage collection during the load, main thread's pauses (count, ms per 1,000 requests; means of the rounds):");
for (const variant of VARIANTS) {
  const rows = results[variant.name];
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r.memory.before.pauses)))];
  const requests = (r) => r.runs.reduce((n, run) => n + run.total, 0) / 1000;
  console.log(
    `- ${variant.name}: ${kinds
      .map(
        (k) =>
          `${k} ${fmt(mean(rows, (r) => r.memory.before.pauses[k]?.count ?? 0))} (${fmt(
            mean(rows, (r) => (r.memory.before.pauses[k]?.ms ?? 0) / requests(r)),
            1,
          )} ms)`,
      )
      .join(', ')}`,
  );
}
console.log('\nV8 heap spaces after the load, size / used MB (mean of the rounds):');
for (const variant of VARIANTS) {
  const rows = results[variant.name];
  const spaces = Object.keys(rows[0].memory.before.spaces);
  console.log(
    `- ${variant.name}: ${spaces.map((s) => `${s} ${fmt(mean(rows, (r) => r.memory.before.spaces[s].size))} / ${fmt(mean(rows, (r) => r.memory.before.spaces[s].used))}`).join(', ')}`,
  );
}
console.log(`\nLogs and probes in ${work}.`);
