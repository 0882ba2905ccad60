import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? files(join(dir, entry.name)) : [relative(DIST, join(dir, entry.name))]));

/**
 * `npm run build` leaves in dist/ what the sources make and nothing else (scripts/build.mjs): a
 * file whose source was deleted or renamed does not survive it. The global set-up has built
 * already; this spec builds once more over planted leftovers. The engine does not matter, so
 * jest.config.js runs this file in the e2e-sqlite project only.
 */
describe('npm run build', () => {
  it('removes what no source makes any more, and keeps dist/ complete', async () => {
    mkdirSync(join(DIST, 'removed-folder'), { recursive: true });
    writeFileSync(join(DIST, 'removed-folder/gone.service.js'), 'export const stale = true;\n');
    writeFileSync(join(DIST, 'removed-source.js'), 'export const stale = true;\n');
    writeFileSync(join(DIST, 'console/public/old-bundle.js'), '// stale\n');

    await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: ROOT, timeout: 120_000 });

    expect(['removed-folder', 'removed-source.js', 'console/public/old-bundle.js'].filter((path) => existsSync(join(DIST, path)))).toEqual([]);
    const built = files(DIST);
    // Every compiled file has its source in src/ (the console's bundle aside), and the entry points are there.
    const orphans = built.filter((file) => !file.startsWith('console/public/') && !existsSync(join(ROOT, 'src', file.replace(/\.js(\.map)?$/, '.ts'))));
    expect(orphans).toEqual([]);
    expect(built).toEqual(
      expect.arrayContaining(['main.js', 'cli.js', 'instrumentation.js', 'migrate.js', 'console/public/index.html', 'console/public/console.js']),
    );
    expect(readFileSync(join(DIST, 'console/public/index.html'), 'utf8')).toContain('console.js');
  });
});
