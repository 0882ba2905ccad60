import { trustProxy } from './app.setup.js';

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
