// npm run bench:compare -- <commit>: the working tree against another commit, on the same data,
// the same database and the same minutes of a noisy machine.
//
// Builds <commit> in a temporary git worktree (its node_modules linked to this checkout's when
// the two package-lock.json are equal, else `npm ci` there), builds the working tree, seeds one
// MySQL database (BENCH_DATABASE_URL, as npm run bench: `<name>_compare`) with STORES synthetic
// stores (default 100,000) and 10,000 plants. Each of ROUNDS rounds (default 2) starts a new
// process of each build on it as in production (NODE_ENV=production, one log line per request
// into a file, metrics off, abuse limits off, GEOCODER=census against bench/fake-geocoder.mjs),
// warms it up, and runs each scenario on each build for DURATION seconds (default 5), 32
// connections, the builds alternating and their order turning from round to round; the table gives the working
// tree's req/s over the commit's, round by round and on average, with p99 and errors, and each
// build's CPU time per request (from /proc, less moved by the machine's other work than req/s;
// its ratio is the commit's over the working tree's, so above 1 is faster too). RSS is
// read after each build's last run. Scenarios (COMPARE_SCENARIOS, comma list of name prefixes):
// `GET /plants`, the search at 5 and 50 mi (ZIP only), `address cached` (four street addresses
// looked up once before the runs, so that every search of the runs is a geocoder cache hit, see
// bench/geocoder.mjs), `open_at` (5 mi, a Wednesday noon), `services` (5 mi, `services:
// ["curbside_pickup"]`, a filter that keeps 3 stores in 8), and `device` and `device services` (5 mi
// from a random position in Manhattan each request, plain and filtered: no kept answer serves
// them, so they measure the search itself; the two rows of the working tree compare the filter
// with the plain search). The stores get services from a cycle of 8 lists (SERVICE_CYCLE), put by
// the working tree's command line after the seed. A scenario a build does not answer
// 200 (a commit before the feature), or answers from another position (the Customer-Position
// header), is named in the notes and not compared. The default run takes 4 to 7 minutes once
// both builds are installed; DURATION=10 ROUNDS=3 for a closer figure, STORES=10000 for a quick
// look, COMPARE_NODE_MODULES=<dir> to reuse a node_modules installed for that commit. A second
// process of the commit's build runs in the same alternation as a control (its ratio to the first
// is the run's own spread between identical builds); COMPARE_CONTROL=0 leaves it out.
// COMPARE_NODE=<path to node> runs the commit's build (and its npm ci) on that Node instead of this
// one: two runtimes in the same alternation (the last build on Node 20 against this one on Node 24:
// COMPARE_NODE=/usr/bin/node npm run bench:compare -- <commit>).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT, checkoutCommit, cli, cpuSeconds, fmt, freshDatabase, imageEnvironment, load, seedStoresAndPlants, startProcess } from './lib.mjs';
import { benchScenarios } from './scenarios.mjs';

const commitArg = process.argv[2];
if (!commitArg) {
  console.error('usage: npm run bench:compare -- <commit>');
  process.exit(2);
}
const DURATION = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
/** Seconds of each scenario on each new process before its runs: the JIT's first minutes are not the service's steady state. */
const WARM_UP = 2;
const STORES = Number(process.env.STORES ?? 100_000);
const TEAMS = 10;
const PLANTS_PER_TEAM = 1000;
// Each build runs with the Node flags its own image runs it with (its Dockerfile's NODE_OPTIONS), so
// that a change of flags is measured with the code it came with; COMPARE_NODE_ARGS gives both builds
// the same flags instead ('' none).
const NODE_ARGS = process.env.COMPARE_NODE_ARGS?.split(' ').filter(Boolean);
const nodeArgsOf = (root) => NODE_ARGS ?? (imageEnvironment(root).NODE_OPTIONS ?? '').split(' ').filter(Boolean);
const SCENARIOS = process.env.COMPARE_SCENARIOS?.split(',').map((s) => s.trim());
// A second process of the commit's build, in the same alternation: its ratio to the first is what
// the machine alone makes of two identical builds in this run, the spread to read the others against.
const CONTROL = process.env.COMPARE_CONTROL !== '0';
const OTHER_NODE = process.env.COMPARE_NODE ?? process.execPath;
const nodeVersion = (execPath) => execFileSync(execPath, ['--version'], { encoding: 'utf8' }).trim();
// npm and the scripts it runs in the commit's worktree find that Node first on PATH.
const otherEnv = { ...process.env, PATH: `${dirname(OTHER_NODE)}:${process.env.PATH}` };
const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--verify', `${commitArg}^{commit}`);
const short = commit.slice(0, 7);

// The other build, in a worktree of its own that is removed at the end (also when this fails).
const other = checkoutCommit(commit, { env: otherEnv, modules: process.env.COMPARE_NODE_MODULES });
console.error(`building ${short} and the working tree…`);
execFileSync('npm', ['run', '--silent', 'build'], { cwd: other, env: otherEnv, stdio: ['ignore', 'ignore', 'inherit'] });
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });

console.error(`seeding ${STORES} stores and ${TEAMS * PLANTS_PER_TEAM} plants (with the working tree's command line)…`);
const DATABASE_URL = await freshDatabase('compare');
const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', METRICS_PORT: '0' };
const { tokens, storesFile } = await seedStoresAndPlants(env, { stores: STORES, teams: TEAMS, plantsPerTeam: PLANTS_PER_TEAM });

// The stores' services, for the `services` scenarios: the chain's five, and store i has list i mod 8.
const SERVICE_CYCLE = [
  '',
  'delivery',
  'curbside_pickup|delivery',
  'greenhouse',
  'curbside_pickup|delivery|greenhouse|repotting',
  'workshops',
  'curbside_pickup',
  'delivery|repotting',
];
console.error('giving the stores services…');
for (const slug of ['curbside_pickup', 'delivery', 'greenhouse', 'repotting', 'workshops']) await cli(env, 'services', 'put', slug, '--label', slug);
const [header, ...storeRows] = readFileSync(storesFile, 'utf8').trimEnd().split('\n');
const servicesFile = `${storesFile}.services.csv`;
writeFileSync(servicesFile, [`${header},services`, ...storeRows.map((row, i) => `${row},${SERVICE_CYCLE[i % SERVICE_CYCLE.length]}`)].join('\n') + '\n');
await cli(env, 'locations', 'import', servicesFile);

const fake = await startProcess(`${ROOT}bench/fake-geocoder.mjs`, {});
const logDir = mkdtempSync(join(tmpdir(), 'plant-store-compare-log-'));
// With two runtimes each build's name says which Node runs it.
const [mineName, theirName] =
  OTHER_NODE === process.execPath ? ['working tree', short] : [`working tree (${nodeVersion(process.execPath)})`, `${short} (${nodeVersion(OTHER_NODE)})`];
const builds = [
  { name: mineName, root: ROOT, execPath: process.execPath },
  { name: theirName, root: `${other}/`, execPath: OTHER_NODE },
  ...(CONTROL ? [{ name: `${theirName} again`, root: `${other}/`, execPath: OTHER_NODE }] : []),
];
/** A fresh process of the build (each round starts new ones: see "rounds" below). */
const start = async (build) => {
  const instrumentation = `${build.root}dist/instrumentation.js`;
  build.service = await startProcess(
    `${build.root}dist/main.js`,
    { ...env, GEOCODER: 'census', GEOCODER_URL: fake.url },
    {
      logFile: join(logDir, `${build.name.replace(/[^\w.-]+/g, '-')}.log`),
      execPath: build.execPath,
      nodeArgs: [...nodeArgsOf(build.root), ...(existsSync(instrumentation) ? ['--import', instrumentation] : [])],
    },
  );
};

const auth = { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' };
const NY = { city: 'New York', state: 'NY', zip: '10001' };
const CACHED = ['235 W 26th St', '120 Main St', '250 Oak Ave', '351 Main St'];
const searchBody = (extra, address = { zip: '10001' }) => JSON.stringify({ customer_address: address, max_distance: 5, ...extra });
const search = (bodies) => ({ requests: bodies.map((body) => ({ method: 'POST', path: '/locations/nearest', headers: auth, body })), probes: bodies });
/** A search from a new random position in Manhattan each request (a device's lat and lng): never a kept answer. */
const device = (extra) => {
  const at = () => ({ zip: '10001', lat: 40.7 + Math.random() * 0.1, lng: -74.02 + Math.random() * 0.09 });
  const body = () => searchBody(extra, at());
  return { requests: [{ method: 'POST', path: '/locations/nearest', headers: auth, setupRequest: (req) => ({ ...req, body: body() }) }], probes: [body()] };
};
const [list, near5, near50] = benchScenarios({ tokens, duration: DURATION });
const [warmList, warm5, warm50] = benchScenarios({ tokens, duration: WARM_UP });
const scenarios = [
  { name: list.name, run: list.run, warm: warmList.run },
  { name: near5.name, run: near5.run, warm: warm5.run, probe: searchBody({}), position: 'zip' },
  { name: near50.name, run: near50.run, warm: warm50.run, probe: searchBody({ max_distance: 50 }), position: 'zip' },
  { name: 'POST /locations/nearest address cached', ...search(CACHED.map((address) => searchBody({}, { address, ...NY }))), position: 'address' },
  { name: 'POST /locations/nearest open_at', ...search([searchBody({ open_at: '2026-11-25T12:00:00-05:00' })]), position: 'zip' },
  { name: 'POST /locations/nearest services', ...search([searchBody({ services: ['curbside_pickup'] })]), position: 'zip' },
  { name: 'POST /locations/nearest device', ...device({}), position: 'device' },
  { name: 'POST /locations/nearest device services', ...device({ services: ['curbside_pickup'] }), position: 'device' },
].filter((s) => !SCENARIOS || SCENARIOS.some((prefix) => s.name.startsWith(prefix) || s.name.replace('POST /locations/nearest ', '').startsWith(prefix)));
for (const s of scenarios) {
  s.run ??= (url) => load({ url, duration: DURATION, requests: s.requests });
  s.warm ??= (url) => load({ url, duration: WARM_UP, requests: s.requests });
}

// After each start, before any load: every search scenario answers 200 from the position it
// claims (this also looks the cached addresses up, so that the runs are cache hits). A build that
// does not is left out of that row.
const notes = [];
const probe = async (build) => {
  for (const s of scenarios.filter((s) => s.probe || s.probes)) {
    for (const body of s.probes ?? [s.probe]) {
      const res = await fetch(`${build.service.url}/locations/nearest`, { method: 'POST', headers: auth, body });
      const text = await res.text();
      const position = res.headers.get('customer-position') ?? (res.status === 200 ? 'zip (no Customer-Position header)' : undefined);
      if (res.status !== 200 || !position?.startsWith(s.position)) {
        s.skipped = true;
        if (!notes.some((n) => n.startsWith(`${s.name}:`)))
          notes.push(
            `${s.name}: not compared, ${build.name} answered ${res.status}${res.status === 200 ? ` from ${position}` : ` ${text.slice(0, 120)}`} (expected 200 from ${s.position}).`,
          );
      }
    }
  }
};

// Rounds: every round starts a new process of each build, warms it up (WARM_UP s of each
// scenario) and runs the scenarios on the builds in turn, their order turning from round to round.
// One process of a build can stay some 10 % faster or slower than another process of the same
// build for its whole life (seen with the control on 2026-11-27: 1.14, 1.06, 1.12 on the list in
// the three rounds of one run), so a process per build for the whole run would put that luck in
// the ratio; fresh processes spread it over the rounds.
const rows = scenarios.map((s) => ({ scenario: s, runs: Object.fromEntries(builds.map((b) => [b.name, []])) }));
for (let round = 0; round < ROUNDS; round++) {
  // Started in the order they run in, which turns too: the first-started process ran slower in
  // every round of a run in which all rounds started the builds in one order.
  for (let i = 0; i < builds.length; i++) {
    const build = builds[(i + round) % builds.length];
    await build.service?.stop();
    await start(build);
    await probe(build);
    for (const s of scenarios.filter((s) => !s.skipped)) await s.warm(build.service.url);
  }
  for (const { scenario: s, runs } of rows.filter((row) => !row.scenario.skipped)) {
    for (let i = 0; i < builds.length; i++) {
      const build = builds[(i + round) % builds.length];
      console.error(`running ${s.name} on ${build.name} (round ${round + 1})…`);
      const cpuBefore = cpuSeconds(build.service.pid);
      const r = await s.run(build.service.url);
      r.cpuUs = ((cpuSeconds(build.service.pid) - cpuBefore) / r.total) * 1e6;
      const bad =
        r.errors +
        Object.entries(r.statusCodes)
          .filter(([code]) => code !== '200')
          .reduce((n, [, v]) => n + v.count, 0);
      runs[build.name].push({ ...r, bad });
      build.rss = build.service.rssMb();
    }
  }
}
for (const build of builds) await build.service.stop();
await fake.stop();
const measured = rows.filter((row) => !row.scenario.skipped);

const [mine, theirs, control] = builds.map((b) => b.name);
const mean = (runs, f) => runs.reduce((n, r) => n + f(r), 0) / runs.length;
console.log(
  `\n${STORES} stores, ${TEAMS * PLANTS_PER_TEAM} plants; 32 connections, ${ROUNDS} × ${DURATION} s per scenario and build, alternating; load average before the runs ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}.\n`,
);
const controlHeader = control ? ` ${control} / ${theirs} (control) | by round |` : '';
console.log(
  `| scenario | ${mine} req/s | ${theirs} req/s | ratio | ratio by round | CPU µs / request (${mine} / ${theirs}) | CPU ratio | p99 ms (${mine} / ${theirs}) | errors (${mine} / ${theirs}) |${controlHeader}`,
);
console.log(`|---|---:|---:|---:|---|---|---:|---|---|${control ? '---:|---|' : ''}`);
const ratioCells = (a, b) => `**${fmt(mean(a, (r) => r.rps) / mean(b, (r) => r.rps), 2)}** | ${a.map((r, i) => fmt(r.rps / b[i].rps, 2)).join(', ')}`;
for (const {
  scenario: { name },
  runs,
} of measured) {
  const a = runs[mine];
  const b = runs[theirs];
  const c = control ? ` ${ratioCells(runs[control], b)} |` : '';
  console.log(
    `| ${name} | ${fmt(mean(a, (r) => r.rps))} | ${fmt(mean(b, (r) => r.rps))} | ${ratioCells(a, b)} | ${fmt(mean(a, (r) => r.cpuUs))} / ${fmt(mean(b, (r) => r.cpuUs))} | ${fmt(mean(b, (r) => r.cpuUs) / mean(a, (r) => r.cpuUs), 2)} | ${Math.max(...a.map((r) => r.p99))} / ${Math.max(...b.map((r) => r.p99))} | ${mean(a, (r) => r.bad) * a.length} / ${mean(b, (r) => r.bad) * b.length} |${c}`,
  );
}
if (control)
  console.log(
    `\nThe control column is a second process of ${theirs}'s build against the first: what this run's machine makes of two identical builds. A ratio of the working tree within the control's distance from 1 is not a difference.`,
  );
console.log(`\nRSS after the runs: ${builds.map((b) => `${b.name} ${fmt(b.rss)} MB`).join(', ')}. Logs in ${logDir}.`);
for (const note of notes) console.log(`- ${note}`);
