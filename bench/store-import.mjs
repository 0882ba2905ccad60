// npm run bench:import: how long `locations import` of STORES synthetic stores (default 100,000,
// scripts/make-synthetic-stores.mjs) takes through the real command line, a new process per
// import on a new database (start-up, migrations, both passes over the file, the write), when the
// import derives every store's time zone from its coordinates (the file has no time_zone column)
// and when the file gives the zones in a sixteenth column (nothing derived); on the embedded SQLite
// default and on MySQL (BENCH_DATABASE_URL, as npm run bench; it creates `<name>_import_<case>`).
// Also `zoneOf` alone over the same points, in file order, in this process (cold: geo-tz loaded
// on the way; then again), which is how the sixteen-column file is written.
//
// ROUNDS (default 3; 0: none) rounds; in each, every case on every engine once, the order turning from
// round to round; the medians are printed. Each round also times `tokens list` on a new database:
// the start-up and migrations that every import includes. ENGINES (default `sqlite,mysql`).
// BENCH_VARIANTS (comma list): `<name>=<path of another build's dist/cli.js>` imports the
// fifteen-column file with that build too, in the same rounds, and the sixteen-column one if that
// build takes it (e.g. the build before the time zones, which does not: check it out with
// `git worktree add`, npm ci, npm run build). Numbers only.
//
// Then, in SERVER_ROUNDS rounds (default 2; 0: none) the builds' order turning, the import through a running server (dist/main.js of this build and of
// each variant), one engine and build after the other, each on a new database, while four
// clients create plants one after the other (POST /plants): the upload of the file to an empty
// catalogue (100,000 adds), a dry run of the file with one store renamed, and the apply of that
// dry run with its ETag. For each: its seconds, the plant creates' count, p50/p99/max and 5xx,
// and how long the apply held its write transaction (plant_store_store_catalog_write_seconds, a
// build that has it). Four seconds of plant creates alone first give the quiet figures.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { ROOT, fmt, freePort, freshDatabase, startProcess } from './lib.mjs';

const STORES = Number(process.env.STORES ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ENGINES = (process.env.ENGINES ?? 'sqlite,mysql').split(',').map((e) => e.trim());
for (const e of ENGINES) if (!['sqlite', 'mysql'].includes(e)) throw new Error(`ENGINES: unknown engine ${e}`);
const SERVER_ROUNDS = Number(process.env.SERVER_ROUNDS ?? 2);
const SERVER = SERVER_ROUNDS > 0;
const VARIANTS = (process.env.BENCH_VARIANTS ?? '')
  .split(',')
  .filter(Boolean)
  .map((v) => v.trim());
for (const v of VARIANTS) if (!/^[\w-]+=.+\.js$/.test(v)) throw new Error(`BENCH_VARIANTS: unknown variant ${v}`);

console.error('building…');
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
const { zoneOf } = await import(`${ROOT}dist/geo/time-zones.js`);

const dir = mkdtempSync(join(tmpdir(), 'plant-store-bench-import-'));
const derivedFile = join(dir, 'stores.csv');
const zonedFile = join(dir, 'stores-with-zones.csv');
execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(STORES), derivedFile], { stdio: 'ignore' });

// The sixteen-column file: the same rows, each with the zone zoneOf gives (what the import would derive).
const text = readFileSync(derivedFile, 'utf8');
const lines = text.split('\n').filter(Boolean);
const points = parse(text, { from_line: 2 }).map((record) => ({ lat: Number(record[6]), lng: Number(record[7]) }));
let started = performance.now();
const zones = points.map((point) => zoneOf(point));
const zoneOfCold = performance.now() - started;
started = performance.now();
for (const point of points) zoneOf(point);
const zoneOfWarm = performance.now() - started;
writeFileSync(zonedFile, [`${lines[0]},time_zone`, ...lines.slice(1).map((line, i) => `${line},${zones[i]}`)].join('\n') + '\n');

const cases = [
  { name: 'this build, zones derived (15 columns)', cli: `${ROOT}dist/cli.js`, args: ['locations', 'import', derivedFile] },
  { name: 'this build, zones in the file (16 columns)', cli: `${ROOT}dist/cli.js`, args: ['locations', 'import', zonedFile] },
  ...VARIANTS.flatMap((v) => {
    const [name, cli] = v.split('=');
    if (!readsZones(cli)) return [{ name: `${name} (15 columns, no time zones)`, cli, args: ['locations', 'import', derivedFile] }];
    return [
      { name: `${name}, zones derived (15 columns)`, cli, args: ['locations', 'import', derivedFile] },
      { name: `${name}, zones in the file (16 columns)`, cli, args: ['locations', 'import', zonedFile] },
    ];
  }),
  { name: 'start-up + migrations only (`tokens list`, this build)', cli: `${ROOT}dist/cli.js`, args: ['tokens', 'list'] },
];

/** Whether the build at `cli` takes the sixteen-column file (a dry run of its first row on a new SQLite file); builds before the time zones do not. */
function readsZones(cli) {
  const probeDir = mkdtempSync(join(tmpdir(), 'plant-store-bench-import-probe-'));
  const probe = join(probeDir, 'one.csv');
  writeFileSync(probe, readFileSync(zonedFile, 'utf8').split('\n').slice(0, 2).join('\n') + '\n');
  try {
    execFileSync(process.execPath, [cli, 'locations', 'import', '--dry-run', probe], {
      env: { ...process.env, DATA_DIR: probeDir, DATABASE_URL: '', DEMO_SEED: 'false' },
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probeDir, { recursive: true, force: true });
  }
}

/** One command on a new database of `engine`; its wall-clock seconds, process start to exit. */
async function timed(engine, c, tag) {
  let env;
  let dataDir;
  if (engine === 'sqlite') {
    dataDir = mkdtempSync(join(tmpdir(), 'plant-store-bench-import-sqlite-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: '', DEMO_SEED: 'false' };
  } else {
    env = { DATABASE_URL: await freshDatabase(`import_${tag}`) };
  }
  const begin = performance.now();
  await promisify(execFile)(process.execPath, [c.cli, ...c.args], { env: { ...process.env, NODE_ENV: 'production', ...env }, maxBuffer: 1 << 26 });
  const seconds = (performance.now() - begin) / 1000;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  return seconds;
}

const runs = new Map(); // `${engine}\t${case index}` → seconds of each round
for (let round = 0; round < ROUNDS; round++) {
  for (const engine of ENGINES) {
    for (let i = 0; i < cases.length; i++) {
      const index = (i + round) % cases.length;
      const seconds = await timed(engine, cases[index], index);
      const key = `${engine}\t${index}`;
      runs.set(key, [...(runs.get(key) ?? []), seconds]);
      console.error(`round ${round + 1}, ${engine}: ${cases[index].name} ${fmt(seconds, 1)} s`);
    }
  }
}
const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const perSecond = (count, ms) => Math.round((count / ms) * 1000).toLocaleString('en-US');
console.log(
  `\nzoneOf, ${STORES.toLocaleString('en-US')} points in file order: ${fmt(zoneOfCold)} ms first (${perSecond(STORES, zoneOfCold)}/s, geo-tz loaded on the way), ${fmt(zoneOfWarm)} ms again (${perSecond(STORES, zoneOfWarm)}/s).`,
);
if (ROUNDS > 0)
  console.log(
    `\n\`locations import\` of ${STORES.toLocaleString('en-US')} stores on a new database, process start to exit; ${ROUNDS} rounds, the cases alternating (median, and each round in order)\n`,
  );
if (ROUNDS > 0) console.log('| engine | case | median s | rounds, s | median − start-up, s | × this build, zones derived |');
if (ROUNDS > 0) console.log('|---|---|---:|---|---:|---:|');
for (const engine of ROUNDS > 0 ? ENGINES : []) {
  const startUp = median(runs.get(`${engine}\t${cases.length - 1}`));
  const first = median(runs.get(`${engine}\t0`));
  cases.forEach((c, index) => {
    const list = runs.get(`${engine}\t${index}`);
    const last = index === cases.length - 1;
    console.log(
      `| ${engine} | ${c.name} | ${fmt(median(list), 1)} | ${list.map((s) => fmt(s, 1)).join(', ')} | ${last ? '-' : fmt(median(list) - startUp, 1)} | ${last ? '-' : fmt(median(list) / first, 2)} |`,
    );
  });
}

const renamedFile = join(dir, 'stores-renamed.csv');
if (SERVER) {
  // The first store renamed: its name is the second field (no quotes in the synthetic file's first columns).
  writeFileSync(renamedFile, [lines[0], lines[1].replace(/^([^,]*),([^,]*),/, '$1,$2 renamed,'), ...lines.slice(2)].join('\n') + '\n');
  const builds = [{ name: 'this build', cli: `${ROOT}dist/cli.js` }, ...VARIANTS.map((v) => ({ name: v.split('=')[0], cli: v.split('=')[1] }))];
  const rows = [];
  for (let round = 0; round < SERVER_ROUNDS; round++) {
    for (const engine of ENGINES) {
      for (let i = 0; i < builds.length; i++) {
        const build = builds[(i + round) % builds.length];
        const figures = await throughServer(engine, build);
        figures.forEach((f, step) => rows.push({ engine, build: build.name, round: round + 1, order: step, ...f }));
      }
    }
  }
  rows.sort(
    (a, b) =>
      ENGINES.indexOf(a.engine) - ENGINES.indexOf(b.engine) ||
      a.order - b.order ||
      builds.findIndex((x) => x.name === a.build) - builds.findIndex((x) => x.name === b.build) ||
      a.round - b.round,
  );
  console.log(
    `\nThe import through a server (POST /admin/stores.csv, ${STORES.toLocaleString('en-US')} rows) while four clients create plants one after the other\n`,
  );
  console.log(
    `${SERVER_ROUNDS} rounds, the builds alternating; load average at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')}\n`,
  );
  console.log('| engine | step | build | round | s | status | plant creates | p50 ms | p99 ms | max ms | 5xx | write transaction s |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(
      `| ${r.engine} | ${r.step} | ${r.build} | ${r.round} | ${r.seconds === undefined ? '-' : fmt(r.seconds, 1)} | ${r.status ?? '-'} | ${r.creates} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${r.failures} | ${r.writeSeconds === undefined ? '-' : fmt(r.writeSeconds, 3)} |`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });

/** The steps of the import through a server of `build` on a new database of `engine`. */
async function throughServer(engine, build) {
  const main = build.cli.replace(/cli\.js$/, 'main.js');
  let env;
  let dataDir;
  if (engine === 'sqlite') {
    dataDir = mkdtempSync(join(tmpdir(), 'plant-store-bench-import-server-'));
    env = { DATA_DIR: dataDir, DATABASE_URL: '' };
  } else {
    env = { DATABASE_URL: await freshDatabase(`import_server`) };
  }
  const metricsPort = await freePort();
  env = {
    ...env,
    NODE_ENV: 'production',
    DEMO_SEED: 'false',
    TOKEN_RATE_LIMIT_PER_MINUTE: '0',
    AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
    REDIS_URL: '',
    EVENTS_NATS_URL: '',
  };
  const token = async (...args) =>
    (await promisify(execFile)(process.execPath, [build.cli, 'tokens', 'create', ...args], { env: { ...process.env, ...env } })).stdout.trim();
  const server = await startProcess(main, { ...env, METRICS_PORT: String(metricsPort) });
  const admin = await token('--team', 'ops', '--scope', 'admin');
  const shop = await token('--team', 'shop');
  const writeSeconds = async () => {
    const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    // A build without the histogram: undefined; with it, 0 until its first import.
    if (!text.includes('# HELP plant_store_store_catalog_write_seconds ')) return undefined;
    const sum = /^plant_store_store_catalog_write_seconds_sum\{writer="import"\} (\S+)$/m.exec(text);
    return sum ? Number(sum[1]) : 0;
  };
  /** Runs `work` while four clients create plants; the creates' figures, and what `work` gave. */
  const withCreates = async (work) => {
    const latencies = [];
    let failures = 0;
    let done = false;
    const client = async (c) => {
      for (let i = 0; !done; i++) {
        const begin = performance.now();
        const res = await fetch(`${server.url}/plants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${shop}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Fern ${c}-${i}` }),
        }).catch(() => undefined);
        latencies.push(performance.now() - begin);
        if (!res || res.status >= 500) failures++;
        await res?.arrayBuffer();
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    const result = await work().finally(() => (done = true));
    await Promise.all(clients);
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { ...result, creates: latencies.length, p50: at(0.5), p99: at(0.99), max: latencies.at(-1), failures };
  };
  const upload = async (file, query, ifMatch) => {
    const before = await writeSeconds();
    const begin = performance.now();
    const res = await fetch(`${server.url}/admin/stores.csv${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'text/csv', ...(ifMatch ? { 'if-match': ifMatch } : {}) },
      body: readFileSync(file),
    });
    await res.arrayBuffer();
    const seconds = (performance.now() - begin) / 1000;
    const after = await writeSeconds();
    return {
      status: res.status,
      seconds,
      etag: res.headers.get('etag'),
      writeSeconds: before === undefined || after === undefined ? undefined : after - before,
    };
  };
  const figures = [];
  try {
    figures.push({ step: 'plant creates alone (4 s)', ...(await withCreates(() => new Promise((resolve) => setTimeout(() => resolve({}), 4000)))) });
    figures.push({ step: `upload to an empty catalogue (${STORES.toLocaleString('en-US')} adds)`, ...(await withCreates(() => upload(derivedFile, ''))) });
    const dry = await withCreates(() => upload(renamedFile, '?dry_run=true'));
    figures.push({ step: 'dry run, one store renamed', ...dry });
    figures.push({ step: 'its apply (If-Match), one store changed', ...(await withCreates(() => upload(renamedFile, '', dry.etag))) });
    for (const f of figures)
      console.error(
        `${engine}, ${build.name}: ${f.step}: ${f.seconds === undefined ? '' : `${fmt(f.seconds, 1)} s, `}${f.creates} creates, p99 ${fmt(f.p99)} ms, max ${fmt(f.max)} ms, ${f.failures} 5xx`,
      );
  } finally {
    await server.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
}
