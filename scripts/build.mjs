// npm run build: dist/ as the sources make it, and nothing else. tsc (tsconfig.build.json) and the
// console's bundle (scripts/build-console.mjs) write into a fresh directory beside dist/
// (.dist-next-<pid>, same depth, so paths relative to a built file hold), which then replaces
// dist/ file by file: every new file is renamed over the old one (atomic on one file system), then
// every file and folder the new build does not have is removed (a deleted or renamed source leaves
// no stale .js behind). dist/ itself never disappears and no file in it is ever half written, so a
// service already running from dist/ (an `npm start` beside `npm test`, whose global set-up builds)
// keeps serving: its modules are loaded, and the console's static files it serves from
// dist/console/public are the old ones, then the new ones. A failed compile leaves dist/ as it was.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const PREFIX = '.dist-next-';

/** Every path under `dir`, relative to it, folders before what they hold. */
function tree(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? [{ path: relative(base, path), dir: true }, ...tree(path, base)] : [{ path: relative(base, path), dir: false }];
  });
}

/** Puts the build in `next` in place of `dist`, as described above; `next` is gone afterwards. */
export function replaceDist(next, dist) {
  mkdirSync(dist, { recursive: true });
  const built = tree(next);
  const keep = new Set(built.map((entry) => entry.path));
  for (const entry of built) {
    const target = join(dist, entry.path);
    const old = existsSync(target) ? lstatSync(target) : undefined;
    if (entry.dir) {
      if (old && !old.isDirectory()) rmSync(target, { force: true });
      mkdirSync(target, { recursive: true });
    } else {
      if (old?.isDirectory()) rmSync(target, { recursive: true, force: true });
      renameSync(join(next, entry.path), target);
    }
  }
  // Deepest first, so that a folder is looked at after what it held.
  for (const entry of tree(dist).reverse()) {
    if (!keep.has(entry.path)) rmSync(join(dist, entry.path), { recursive: true, force: true });
  }
  rmSync(next, { recursive: true, force: true });
}

/** Leftovers of builds that were killed: their process is gone. */
function removeAbandoned() {
  for (const name of readdirSync(ROOT)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length));
    let alive;
    try {
      alive = process.kill(pid, 0);
    } catch (error) {
      alive = error.code === 'EPERM';
    }
    if (!alive) rmSync(join(ROOT, name), { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  removeAbandoned();
  const next = join(ROOT, `${PREFIX}${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', next], { cwd: ROOT, stdio: 'inherit' });
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-console.mjs'), next], { cwd: ROOT, stdio: 'inherit' });
    replaceDist(next, DIST);
  } catch (error) {
    rmSync(next, { recursive: true, force: true });
    // tsc and esbuild have printed their errors; a child's own exit status is passed on.
    if (typeof error.status !== 'number') console.error(error);
    process.exitCode = typeof error.status === 'number' ? error.status : 1;
  }
}
