import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/install-test-tools.sh', import.meta.url));
const DOCUMENT = new URL('../../scripts/openapi-document.mjs', import.meta.url).href;

/**
 * Once per run, before any e2e spec: the programs the specs start (nats-server, prometheus,
 * openssl, mariadbd, redis-server) must be there, or the run stops at once naming the script
 * that installs them (never a spec that fails halfway or skips). Then the build: the CLI specs
 * run `node dist/cli.js`, the real command line. Then the OpenAPI document the built service
 * publishes, written once to a temporary file (PLANT_STORE_OPENAPI_FILE, inherited by the workers)
 * for test/support/openapi.ts, made in a process of its own: a second AppModule in a spec's
 * process, even in preview mode, would register the TypeORM data source name once more (and
 * never unregister it), which @nestjs/typeorm warns about.
 */
export default function globalSetup() {
  if (globalThis.__PLANT_STORE_BUILT__) return;
  const check = spawnSync('bash', [SCRIPT, '--check'], { encoding: 'utf8' });
  if (check.status !== 0) {
    throw new Error(`The e2e specs need programs this machine lacks:\n${check.stdout}${check.stderr}(scripts/install-test-tools.sh installs them from Debian's packages; README, Quick start)`);
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-openapi-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'openapi.json');
  const write = `import { writeFileSync } from 'node:fs'; import { openApiDocument } from ${JSON.stringify(DOCUMENT)}; writeFileSync(${JSON.stringify(file)}, JSON.stringify(await openApiDocument()));`;
  execFileSync(process.execPath, ['--input-type=module', '-e', write], { stdio: 'inherit' });
  process.env.PLANT_STORE_OPENAPI_FILE = file;
  globalThis.__PLANT_STORE_BUILT__ = true;
}
