import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/install-test-tools.sh');
const DOCUMENT = new URL('../../scripts/openapi-document.mjs', import.meta.url).href;
/** What `npm run build` reads: the sources, the compiler settings, the build scripts, the locked dependencies (the console's bundle holds some). */
const BUILD_INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', 'scripts/build-console.mjs', 'package-lock.json'];
/** Outside dist/ (`npm run build` removes from dist/ whatever it did not make): node_modules/.cache is where tools keep such notes. */
const STAMP = join(ROOT, 'node_modules/.cache/plant-store-service/build-stamp.json');

/** Every file under `path` (or `path` itself when a file), absolute; none when it is missing. */
const files = (path) => {
  if (!existsSync(path)) return [];
  if (statSync(path).isFile()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
};

/** A digest of every file under `paths` (relative to the root), names and contents, in a stable order. */
function digest(paths) {
  const hash = createHash('sha256');
  for (const path of paths) {
    for (const file of files(join(ROOT, path)).sort()) hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/**
 * The build the specs run (`node dist/main.js`, `node dist/cli.js`), made only when it could
 * differ from the one there: the digest of the build's inputs and of dist/ itself are kept after
 * each build, and a run whose inputs and dist/ match them uses dist/ as it is (a full build is
 * a minute of the two cores on this kind of machine). A changed source, setting, build script or
 * lock, or a dist/ changed by hand or by anything else, builds again.
 */
function build() {
  const inputs = digest(BUILD_INPUTS);
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    stamp = undefined;
  }
  if (stamp?.inputs === inputs && stamp.dist === digest(['dist'])) return;
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit', cwd: ROOT });
  mkdirSync(join(STAMP, '..'), { recursive: true });
  writeFileSync(STAMP, JSON.stringify({ inputs, dist: digest(['dist']) }));
}

/**
 * Once per run, before any e2e spec: the programs the specs start (nats-server, prometheus,
 * openssl, mariadbd, redis-server) must be there, or the run stops at once naming the script
 * that installs them (never a spec that fails halfway or skips). Then the build (above): the CLI
 * specs run `node dist/cli.js`, the real command line. Then the OpenAPI document the built service
 * publishes, written once to a temporary file (PLANT_STORE_OPENAPI_FILE, inherited by the workers)
 * for test/support/openapi.ts, made in a process of its own: a second AppModule in a spec's
 * process, even in preview mode, would register the TypeORM data source name once more (and
 * never unregister it), which @nestjs/typeorm warns about.
 */
export default function globalSetup() {
  if (globalThis.__PLANT_STORE_BUILT__) return;
  const check = spawnSync('bash', [SCRIPT, '--check'], { encoding: 'utf8' });
  if (check.status !== 0) {
    throw new Error(
      `The e2e specs need programs this machine lacks:\n${check.stdout}${check.stderr}(scripts/install-test-tools.sh installs them from Debian's packages; README, Quick start)`,
    );
  }
  build();
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-openapi-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'openapi.json');
  const write = `import { writeFileSync } from 'node:fs'; import { openApiDocument } from ${JSON.stringify(DOCUMENT)}; writeFileSync(${JSON.stringify(file)}, JSON.stringify(await openApiDocument()));`;
  execFileSync(process.execPath, ['--input-type=module', '-e', write], { stdio: 'inherit' });
  process.env.PLANT_STORE_OPENAPI_FILE = file;
  globalThis.__PLANT_STORE_BUILT__ = true;
}
