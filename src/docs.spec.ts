import { execFileSync } from 'node:child_process';

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

  it('lists every setting of src/config/environment.ts in docs/configuration.md (npm run docs:config)', () => {
    expect(run('config-docs.mjs', '--check')).toBe('');
  });
});
