// npm run bench:search-index -- <commit>: the search index's own cost (StoreIndex.search, no
// HTTP, no validation) of the working tree against another commit, for a difference of a few
// percent that bench:compare's HTTP runs cannot tell from the machine's noise.
//
// Builds <commit> in a temporary git worktree (as bench:compare does) and the working tree, and
// uses one MySQL database: SEEDED_DATABASE_URL (one that bench:compare or bench:rss seeded), else
// BENCH_DATABASE_URL's `<name>_search_index`, seeded with STORES synthetic stores (default 100,000).
// Three child processes, each with the production heap flags, create their build's application
// context on it (the index loads every store): the working tree, the commit and the commit again
// (the control: what the machine makes of two identical builds). Each searches 5 and 50 miles
// around a random point of Manhattan (a new point every search, so no kept answer serves it: the
// walk of the k-d tree and the writing of the answer's JSON), in slices of SLICE_MS (default 300)
// taken in turn, the order turning every slice, SLICES slices each (default 60). The table gives
// each build's CPU time per search (process.cpuUsage over its slices) and the ratios, commit over
// working tree (above 1: the working tree is faster), over all slices and as the median of the
// slices' own ratios. The commit must have AppModule.forRoot and StoreIndex.search(plan).
import { execFileSync, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PRODUCTION_HEAP_FLAGS, ROOT, checkoutCommit, freshDatabase, seedStoresAndPlants } from './lib.mjs';

const SLICE_MS = Number(process.env.SLICE_MS ?? 300);
const SLICES = Number(process.env.SLICES ?? 60);
const STORES = Number(process.env.STORES ?? 100_000);
const CASES = [5, 50];

if (process.argv[2] === '--child') await child(process.argv[3]);
else await parent(process.argv[2]);

/** One build's index, searching on request: `{ miles, ms }` → `{ searches, cpuUs }`. */
async function child(dir) {
  process.chdir(dir);
  await import(`${dir}/node_modules/reflect-metadata/Reflect.js`);
  const { NestFactory } = await import(`${dir}/node_modules/@nestjs/core/index.js`);
  const { AppModule } = await import(`${dir}/dist/app.module.js`);
  const { loadSettings } = await import(`${dir}/dist/settings.js`);
  const { StoreIndex } = await import(`${dir}/dist/locations/store-index.js`);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(loadSettings()), { logger: ['error'] });
  await app.init();
  const index = app.get(StoreIndex);
  // The same points in every process: a linear congruential sequence from one seed.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const plan = (miles) => ({
    center: { lat: 40.7 + random() * 0.12, lng: -74.02 + random() * 0.08 },
    area: { kind: 'radius', maxDistance: miles },
    unit: 'mi',
    limit: 25,
  });
  const run = (miles, ms) => {
    const since = process.cpuUsage();
    const started = performance.now();
    let searches = 0;
    while (performance.now() - started < ms) {
      if (index.search(plan(miles)).body.length === 0) throw new Error('an empty answer');
      searches++;
    }
    const used = process.cpuUsage(since);
    return { searches, cpuUs: used.user + used.system };
  };
  // The JIT's first seconds are not the steady state.
  for (const miles of CASES) run(miles, 2000);
  process.on('message', ({ miles, ms }) => process.send(run(miles, ms)));
  process.send({ ready: true });
}

async function parent(commitArg) {
  if (!commitArg) {
    console.error('usage: npm run bench:search-index -- <commit>');
    process.exit(2);
  }
  const commit = execFileSync('git', ['rev-parse', '--verify', `${commitArg}^{commit}`], { cwd: ROOT, encoding: 'utf8' }).trim();
  const short = commit.slice(0, 7);
  const other = checkoutCommit(commit);
  console.error(`building ${short} and the working tree…`);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: other, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });

  let DATABASE_URL = process.env.SEEDED_DATABASE_URL;
  if (!DATABASE_URL) {
    DATABASE_URL = await freshDatabase('search_index');
    console.error(`seeding ${STORES} stores…`);
    await seedStoresAndPlants({ DATABASE_URL }, { stores: STORES, teams: 0, plantsPerTeam: 0 });
  }
  const env = { ...process.env, DATABASE_URL, NODE_ENV: 'production', METRICS_PORT: '0', LOG_LEVEL: 'error' };
  const builds = [
    { name: 'working tree', dir: ROOT.replace(/\/$/, '') },
    { name: short, dir: other },
    { name: `${short} again`, dir: other },
  ];
  console.error('loading the three indexes…');
  const script = fileURLToPath(import.meta.url);
  for (const build of builds) {
    build.process = fork(script, ['--child', build.dir], { env, execArgv: PRODUCTION_HEAP_FLAGS.split(' ') });
    await new Promise((resolve, reject) => {
      build.process.once('message', resolve);
      build.process.once('exit', (code) => reject(new Error(`${build.name} exited with ${code}`)));
    });
  }
  const ask = (build, miles) =>
    new Promise((resolve) => {
      build.process.once('message', resolve);
      build.process.send({ miles, ms: SLICE_MS });
    });
  const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
  const rows = [];
  for (const miles of CASES) {
    console.error(`${miles} mi: ${SLICES} slices of ${SLICE_MS} ms each…`);
    const totals = builds.map(() => ({ searches: 0, cpuUs: 0, perSlice: [] }));
    for (let slice = 0; slice < SLICES; slice++) {
      const order = builds.map((_, i) => (i + slice) % builds.length);
      for (const i of order) {
        const { searches, cpuUs } = await ask(builds[i], miles);
        totals[i].searches += searches;
        totals[i].cpuUs += cpuUs;
        totals[i].perSlice.push(cpuUs / searches);
      }
    }
    const perSearch = totals.map((t) => t.cpuUs / t.searches);
    // Build `of` against build `to`: over all slices, and the median of the slices' own ratios.
    const ratios = (of, to) =>
      [perSearch[of] / perSearch[to], median(totals[to].perSlice.map((us, s) => totals[of].perSlice[s] / us))].map((r) => r.toFixed(3));
    const [commit, commitSlices] = ratios(1, 0);
    const [control, controlSlices] = ratios(2, 1);
    rows.push(`| ${miles} mi | ${perSearch.map((us) => us.toFixed(1)).join(' / ')} | **${commit}** | ${commitSlices} | ${control} | ${controlSlices} |`);
  }
  for (const build of builds) build.process.kill();
  console.log(
    `\nStoreIndex.search, ${STORES} stores (or SEEDED_DATABASE_URL's), ${SLICES} slices of ${SLICE_MS} ms per build and case, alternating; CPU µs per search\n`,
  );
  console.log(
    `| search | working tree / ${short} / ${short} again | ${short} / working tree | median of the slices' | control (${short} again / ${short}) | median of the slices' |`,
  );
  console.log('|---|---|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  console.log(`\nAbove 1: the working tree is faster. The control is the spread of two identical builds in this run.`);
  process.exit(0);
}
