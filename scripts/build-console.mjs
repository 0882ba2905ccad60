// The operator's console: src/console/web bundled by esbuild into
// dist/console/public (console.js, console.css, index.html), part of `npm run build`, which passes
// the directory it builds into instead of dist/ (scripts/build.mjs). One
// minified ES module with Preact, htm, d3-geo and the us-atlas outlines inside: the page loads
// nothing from anywhere but the service itself.
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const web = fileURLToPath(new URL('../src/console/web/', import.meta.url));
const out = join(resolve(process.argv[2] ?? fileURLToPath(new URL('../dist/', import.meta.url))), 'console/public/');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: [
    { in: `${web}main.ts`, out: 'console' },
    { in: `${web}console.css`, out: 'console' },
  ],
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  sourcemap: true,
  legalComments: 'linked',
  tsconfig: `${web}tsconfig.json`,
  logLevel: 'warning',
});
await copyFile(`${web}index.html`, `${out}index.html`);
