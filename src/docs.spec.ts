import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The manual checked in `npm test`, so that it cannot drift from the code or break its own links. */
describe('documentation', () => {
  const run = (script: string, ...args: string[]) => {
    try {
      execFileSync(process.execPath, [`scripts/${script}`, ...args], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8', stdio: 'pipe' });
      return '';
    } catch (error) {
      return (error as { stderr: string }).stderr;
    }
  };

  it('has every relative link and #anchor of README.md and docs/ resolving', () => {
    expect(run('check-links.mjs')).toBe('');
  });

  it('catches a pointer to a README section by name when the README has no such heading', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-docs-'));
    const root = new URL('..', import.meta.url).pathname;
    try {
      const file = join(dir, 'pointers.md');
      writeFileSync(
        file,
        [
          `See the README's "Quick start" and the README's [A first request](${root}README.md#a-first-request) section,`,
          'The README\'s "Memory sizing" says so, and the README\'s Scaling Out section,',
          'and README section "What `npm run test:cluster`',
          'proves", and the README\'s [Performance](development.md#performance) section.',
          "The README's [Quick start](development.md#commands) section moved.",
          '',
          '```sh',
          'echo "the README\'s \\"Nowhere\\" in code is not prose"',
          '```',
        ].join('\n'),
      );
      const lines = run('check-links.mjs', file).trim().split('\n');
      // (Its links to development.md are broken there too, outside docs/: only the pointers matter here.)
      expect(lines.filter((line) => line.includes(': "README'))).toEqual([
        expect.stringMatching(/pointers\.md:2: .*README's "Memory sizing".*no heading "memory sizing"/),
        expect.stringMatching(/pointers\.md:2: .*README's Scaling Out section.*no heading "scaling out"/),
        expect.stringMatching(/pointers\.md:3: .*README section "What `npm run test:cluster` proves".*no heading/),
        expect.stringMatching(/pointers\.md:4: .*README's \[Performance\].*no heading "performance"/),
        expect.stringMatching(/pointers\.md:5: .*README's \[Quick start\].*named as the README's but links to development\.md#commands/),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lists every feature's settings (the *.config.ts classes) in docs/configuration.md (npm run docs:config)", () => {
    expect(run('config-docs.mjs', '--check')).toBe('');
  });

  it('has .env.example list the settings of docs/configuration.md, in the same order, and no other', () => {
    const root = new URL('..', import.meta.url).pathname;
    const manual = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
    const tables = manual.slice(manual.indexOf('<!-- settings tables'), manual.indexOf('<!-- end of the settings tables -->'));
    const settings = [...tables.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map(([, name]) => name);
    const example = readFileSync(join(root, '.env.example'), 'utf8');
    // Up to the variables compose.yaml reads; the OpenTelemetry SDK's own and the secrets' <NAME>_FILE aside.
    const listed = [...example.slice(0, example.indexOf('# --- Read by compose.yaml')).matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)]
      .map(([, name]) => name)
      .filter((name) => !name.startsWith('OTEL_') && !(name.endsWith('_URL_FILE') && !settings.includes(name)));
    expect(settings.length).toBeGreaterThan(50);
    expect(listed).toEqual(settings);
  });
});
