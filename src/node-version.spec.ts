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

  it('agrees with package.json: engines.node and .nvmrc name the same major', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${REQUIRED_NODE_MAJOR}`);
    expect((await readFile(new URL('../.nvmrc', import.meta.url), 'utf8')).trim()).toBe(String(REQUIRED_NODE_MAJOR));
    expect((await readFile(new URL('../.node-version', import.meta.url), 'utf8')).trim()).toBe(String(REQUIRED_NODE_MAJOR));
  });
});
