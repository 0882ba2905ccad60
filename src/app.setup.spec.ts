import { packageInfo, trustProxy } from './app.setup.js';

describe('trustProxy', () => {
  it.each([
    [undefined, false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['10.0.0.0/8, 192.168.1.1', '10.0.0.0/8, 192.168.1.1'],
  ])('TRUST_PROXY=%s -> %j', (value, expected) => {
    expect(trustProxy(value)).toEqual(expected);
  });
});

describe('packageInfo', () => {
  it('takes the license and the contact from package.json', () => {
    expect(packageInfo()).toEqual({ license: { name: 'UNLICENSED' }, contact: { name: 'Plant Store Service maintainers' } });
  });

  it.each([
    [
      { author: 'Ana Ruiz <ana@example.com> (https://example.com/ana)' },
      { contact: { name: 'Ana Ruiz', email: 'ana@example.com', url: 'https://example.com/ana' } },
    ],
    [{ author: 'Ana Ruiz' }, { contact: { name: 'Ana Ruiz' } }],
    [
      { author: { name: 'Ops', email: 'ops@example.com' }, homepage: 'https://example.com' },
      { contact: { name: 'Ops', email: 'ops@example.com', url: 'https://example.com' } },
    ],
    [{ license: 'MIT' }, { license: { name: 'MIT' } }],
    [{}, {}],
  ])('%j -> %j', (pkg, expected) => {
    expect(packageInfo(pkg)).toEqual(expected);
  });
});
