// npm run bench:import: how long `locations import` of STORES synthetic stores (default 100,000,
// scripts/make-synthetic-stores.mjs) takes through the real command line, a new process per
// import on a new database (start-up, migrations, both passes over the file, the write), when the
// import derives every store's time zone from its coordinates (the file has no time_zone column)
// and when the file gives the zones in a sixteenth column (nothing derived); on the embedded SQLite
// default and on MySQL (BENCH_DATABASE_URL, as npm run bench; it creates `<name>_import_<case>`).
// Also `zoneOf` alone over the same points, in file order, in this process (cold: geo-tz loaded
// on the way; then again), which is how the sixteen-column file is written.
//
// ROUNDS (default 3) rounds; in each, every case on every engine once, the order turning from
// round to round; the medians are printed. Each round also times `tokens list` on a new database:
// the start-up and migrations that every import includes. ENGINES (default `sqlite,mysql`).
// BENCH_VARIANTS (comma list): `<name>=<path of another build's dist/cli.js>` imports the
// fifteen-column file with that build too, in the same rounds, and the sixteen-column one if that
// build takes it (e.g. the build before the time zones, which does not: check it out with
// `git worktree add`, npm ci, npm run build). Numbers only.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { ROOT, fmt, freshDatabase } from './lib.mjs';

const STORES = Number(process.env.STORES ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const ENGINES = (process.env.ENGINES ?? 'sqlite,mysql').split(',').map((e) => e.trim());
for (const e of ENGINES) if (!['sqlite', 'mysql'].includes(e)) throw new Error(`ENGINES: unknown engine ${e}`);
const VARIANTS = (process.env.BENCH_VARIANTS ?? '').split(',').filter(Boolean).map((v) => v.trim());
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
    execFileSync(process.execPath, [cli, 'locations', 'import', '--dry-run', probe], { env: { ...process.env, DATA_DIR: probeDir, DATABASE_URL: '', DEMO_SEED: 'false' }, stdio: 'ignore' });
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
rmSync(dir, { recursive: true, force: true });

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};
const perSecond = (count, ms) => Math.round((count / ms) * 1000).toLocaleString('en-US');
console.log(
  `\nzoneOf, ${STORES.toLocaleString('en-US')} points in file order: ${fmt(zoneOfCold)} ms first (${perSecond(STORES, zoneOfCold)}/s, geo-tz loaded on the way), ${fmt(zoneOfWarm)} ms again (${perSecond(STORES, zoneOfWarm)}/s).`,
);
console.log(`\n\`locations import\` of ${STORES.toLocaleString('en-US')} stores on a new database, process start to exit; ${ROUNDS} rounds, the cases alternating (median, and each round in order)\n`);
console.log('| engine | case | median s | rounds, s | median − start-up, s | × this build, zones derived |');
console.log('|---|---|---:|---|---:|---:|');
for (const engine of ENGINES) {
  const startUp = median(runs.get(`${engine}\t${cases.length - 1}`));
  const first = median(runs.get(`${engine}\t0`));
  cases.forEach((c, index) => {
    const list = runs.get(`${engine}\t${index}`);
    const last = index === cases.length - 1;
    console.log(`| ${engine} | ${c.name} | ${fmt(median(list), 1)} | ${list.map((s) => fmt(s, 1)).join(', ')} | ${last ? '-' : fmt(median(list) - startUp, 1)} | ${last ? '-' : fmt(median(list) / first, 2)} |`);
  });
}
