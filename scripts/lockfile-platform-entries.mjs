// Adds lockfile entries for optional platform-specific packages that npm left out.
//
// Why: the npm registry mirror this project is built against serves only the Linux builds of
// some native packages (e.g. @unrs/resolver-binding-darwin-arm64 answers 404). `npm install`
// skips such a missing optional dependency silently and writes a lockfile without it, and
// `npm ci` then refuses that lockfile ("Missing: … from lock file"). An entry with the right
// `os`/`cpu` makes `npm ci` skip the package on other platforms, as it does for any lockfile
// written on a machine that could fetch them. Run after `npm install`: npm run lockfile:fix
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const PLATFORM = /-(android|darwin|freebsd|linux|openharmony|win32)-(arm64|arm|x64|ia32|loong64|ppc64|riscv64|s390x)(?:-(gnu|musl|gnueabihf|musleabihf|eabi|msvc))?$/;

let added = 0;
for (const [path, meta] of Object.entries(lock.packages)) {
  for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const base = path ? `${path}/node_modules/${name}` : `node_modules/${name}`;
    if (lock.packages[base] || lock.packages[`node_modules/${name}`]) continue;
    const match = PLATFORM.exec(name);
    if (!match) continue;
    const [, os, cpu, abi] = match;
    const entry = { version: range.replace(/^[\^~=]/, ''), cpu: [cpu], license: meta.license, optional: true, os: [os] };
    if (abi === 'gnu' || abi === 'gnueabihf') entry.libc = ['glibc'];
    if (abi === 'musl' || abi === 'musleabihf') entry.libc = ['musl'];
    lock.packages[`node_modules/${name}`] = entry;
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.error(`lockfile: ${added} optional platform entr${added === 1 ? 'y' : 'ies'} added`);
