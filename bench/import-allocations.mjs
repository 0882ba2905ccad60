// npm run bench:import-allocations: what a whole-catalogue import allocates, and where. A heap
// snapshot taken after a collection shows what stays; an import that gets a 256 MiB pod killed does
// so with what it allocates between collections, which only an allocation profile shows.
//
// Seeds `<BENCH_DATABASE_URL's name>_import_allocations` with STORES synthetic stores (default
// 100,000), writes a file of as many where every store changes (scripts/make-synthetic-stores.mjs,
// seed 43), creates the built application's context with the production heap flags (the index
// loads every store), then imports the file through StoreImportService.importFile (the check, the
// plan, the apply and, since more than CHANGE_LOG_MAX_STORES stores change, the index's reload)
// with V8's sampling heap profiler on (the inspector's HeapProfiler.startSampling, every
// SAMPLE_BYTES allocated, default 16 KiB, objects collected since included). The tables give the
// bytes allocated by the innermost function of this service (dist/) on each sample's stack, and by
// the package (or dist/ file) of the function that allocated; beside them, process.memoryUsage()
// every 100 ms: the highest heap used and external memory during the import.
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRODUCTION_HEAP_FLAGS, ROOT, freshDatabase, seedStoresAndPlants } from './lib.mjs';

const STORES = Number(process.env.STORES ?? 100_000);
const SAMPLE_BYTES = Number(process.env.SAMPLE_BYTES ?? 16 * 1024);
const MiB = 1024 * 1024;

if (process.argv[2] === '--child') await child(process.argv[3]);
else await parent();

async function parent() {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  const DATABASE_URL = await freshDatabase('import_allocations');
  console.error(`seeding ${STORES} stores…`);
  await seedStoresAndPlants({ DATABASE_URL }, { stores: STORES, teams: 0, plantsPerTeam: 0 });
  const file = join(mkdtempSync(join(tmpdir(), 'plant-store-import-allocations-')), 'import.csv');
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), file, '43'], { stdio: 'ignore' });
  const env = { ...process.env, DATABASE_URL, NODE_ENV: 'production', METRICS_PORT: '0', LOG_LEVEL: 'error' };
  const child = fork(fileURLToPath(import.meta.url), ['--child', file], { env, execArgv: PRODUCTION_HEAP_FLAGS.split(' ') });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  process.exit(code ?? 1);
}

async function child(file) {
  const dist = `${ROOT}dist`;
  await import('reflect-metadata');
  const { NestFactory } = await import('@nestjs/core');
  const { AppModule } = await import(`${dist}/app.module.js`);
  const { loadSettings } = await import(`${dist}/settings.js`);
  const { StoreImportService } = await import(`${dist}/stores/store-import.service.js`);
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(loadSettings()), { logger: ['error'] });
  await app.init();
  const imports = app.get(StoreImportService);

  let heapUsed = 0;
  let external = 0;
  let rss = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    heapUsed = Math.max(heapUsed, m.heapUsed);
    external = Math.max(external, m.external);
    rss = Math.max(rss, m.rss);
  }, 100);
  const before = process.memoryUsage();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: SAMPLE_BYTES,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const started = performance.now();
  const summary = await imports.importFile(file);
  const seconds = (performance.now() - started) / 1000;
  const { profile } = await session.post('HeapProfiler.stopSampling');
  clearInterval(sampler);

  const byOwn = new Map();
  const byPackage = new Map();
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const place = ({ url, functionName, lineNumber }) => {
    const path = url.replace(/^file:\/\//, '');
    if (path.startsWith(dist)) return `${path.slice(dist.length + 1)}:${lineNumber + 1} ${functionName || '(anonymous)'}`;
    return undefined;
  };
  const packageOf = (url) => {
    const path = url.replace(/^file:\/\//, '');
    if (path.startsWith(dist)) return `dist/${path.slice(dist.length + 1)}`;
    const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (module) return module[1];
    return path.startsWith('node:') ? path : url === '' ? '(V8 or native)' : path;
  };
  let total = 0;
  const walk = (node, own) => {
    const here = place(node.callFrame) ?? own;
    const bytes = node.selfSize;
    if (bytes > 0) {
      total += bytes;
      add(byOwn, here ?? '(no frame of the service)', bytes);
      add(byPackage, packageOf(node.callFrame.url), bytes);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(profile.head, undefined);
  const top = (map, n) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, bytes]) => `| ${key} | ${(bytes / MiB).toFixed(1)} | ${((100 * bytes) / total).toFixed(1)} |`)
      .join('\n');
  console.log(
    `\nImport of ${summary.read} rows (${summary.inserted} added, ${summary.updated} updated, ${summary.unchanged} unchanged) in ${seconds.toFixed(1)} s;` +
      ` ${(total / MiB).toFixed(0)} MiB allocated on V8's heap (sampled every ${SAMPLE_BYTES} bytes).` +
      ` Before: heap used ${(before.heapUsed / MiB).toFixed(0)} MiB, external ${(before.external / MiB).toFixed(0)} MiB, RSS ${(before.rss / MiB).toFixed(0)} MiB;` +
      ` highest during: heap used ${(heapUsed / MiB).toFixed(0)}, external ${(external / MiB).toFixed(0)}, RSS ${(rss / MiB).toFixed(0)} MiB.\n`,
  );
  console.log('| innermost function of the service on the stack | MiB | % |\n|---|---:|---:|');
  console.log(top(byOwn, 25));
  console.log('\n| package (or file) of the allocating function | MiB | % |\n|---|---:|---:|');
  console.log(top(byPackage, 15));
  await app.close();
  process.exit(0);
}
