// npm run cli -- …: the command line, built only when the build is out of date. `npm run build`
// compiles the whole tree (several seconds); a command run against a current build starts at once.
// Current means dist/cli.js is newer than every file under src/ and than the compiler's
// configuration and package.json. The built command line then runs in this same process (it
// reads process.argv, whose shape is the same: node, script, arguments).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const BUILT = join(ROOT, 'dist/cli.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function builtIsCurrent() {
  let built;
  try {
    built = statSync(BUILT).mtimeMs;
  } catch {
    return false;
  }
  const inputs = ['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((file) => statSync(join(ROOT, file)).mtimeMs);
  return Math.max(newestSource(join(ROOT, 'src')), ...inputs) < built;
}

if (!builtIsCurrent()) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
await import(BUILT);
