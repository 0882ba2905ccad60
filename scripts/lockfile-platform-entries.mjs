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
const PLATFORM =
  /-(android|darwin|freebsd|linux|openharmony|win32)-(arm64|arm|x64|ia32|loong64|ppc64|riscv64|s390x)(?:-(gnu|musl|gnueabihf|musleabihf|eabi|msvc))?$/;

/**
 * The lockfile as npm itself writes it, byte for byte, so that a later `npm install` finds
 * nothing to reorder (`string_decoder` moved on every install, because this script
 * used to sort by code unit, where `_` comes before letters, and npm sorts with
 * `localeCompare(…, 'en')`, where `string-argv` < `string_decoder` < `string-width`). npm's
 * rule (@npmcli/arborist's Shrinkwrap#toString, json-stringify-nice): in every object, values
 * that are not objects (strings, numbers, booleans, arrays) come before objects; within each
 * group `name`, `version`, `lockfileVersion`, `resolved`, `integrity`, `requires`, `packages`,
 * `dependencies` first in that order, then the other keys by `localeCompare(…, 'en')`;
 * two-space indent and a final newline.
 */
const KEY_ORDER = ['name', 'version', 'lockfileVersion', 'resolved', 'integrity', 'requires', 'packages', 'dependencies'];
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
function compareKeys(a, b) {
  const [ia, ib] = [KEY_ORDER.indexOf(a), KEY_ORDER.indexOf(b)];
  if (ia >= 0 && ib < 0) return -1;
  if (ib >= 0 && ia < 0) return 1;
  if (ia >= 0 && ib >= 0) return ia - ib;
  return a.localeCompare(b, 'en');
}
export function npmStringify(value) {
  const sorted = (_key, v) =>
    isObject(v)
      ? Object.fromEntries(Object.entries(v).sort(([ak, av], [bk, bv]) => (isObject(av) === isObject(bv) ? compareKeys(ak, bk) : isObject(av) ? 1 : -1)))
      : v;
  return `${JSON.stringify(value, sorted, 2)}\n`;
}

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
writeFileSync(LOCK, npmStringify(lock));
console.error(`lockfile: ${added} optional platform entr${added === 1 ? 'y' : 'ies'} added`);
