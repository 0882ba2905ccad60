import { execFileSync } from 'node:child_process';

/** The CLI specs run `node dist/cli.js`, the real command line: build it once per run. */
export default function globalSetup() {
  if (globalThis.__PLANT_STORE_BUILT__) return;
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  globalThis.__PLANT_STORE_BUILT__ = true;
}
