import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/install-test-tools.sh', import.meta.url));

/**
 * Once per run, before any e2e spec: the programs the specs start (nats-server, prometheus,
 * openssl, mariadbd, redis-server) must be there, or the run stops at once naming the script
 * that installs them (never a spec that fails halfway or skips). Then the build: the CLI specs
 * run `node dist/cli.js`, the real command line.
 */
export default function globalSetup() {
  if (globalThis.__PLANT_STORE_BUILT__) return;
  const check = spawnSync('bash', [SCRIPT, '--check'], { encoding: 'utf8' });
  if (check.status !== 0) {
    throw new Error(`The e2e specs need programs this machine lacks:\n${check.stdout}${check.stderr}(scripts/install-test-tools.sh installs them from Debian's packages; README, Quick start)`);
  }
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  globalThis.__PLANT_STORE_BUILT__ = true;
}
