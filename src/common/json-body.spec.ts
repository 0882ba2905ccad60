import { nestingDepth } from './json-body.js';

describe('nestingDepth', () => {
  const depth = (text: string) => nestingDepth(Buffer.from(text), 100);

  it.each([
    ['1', 0],
    ['{}', 1],
    ['{"a":[1,{"b":2}]}', 3],
    ['[[],[[]]]', 3],
    ['{"a":"{[{[{[","b":{}}', 2],
    ['{"a":"\\"[[[[","b":[]}', 2],
    ['{"🌵":["{"]}', 2],
  ])('%s nests %i deep', (text, expected) => {
    expect(depth(text)).toBe(expected);
  });

  it('stops counting past the limit', () => {
    expect(nestingDepth(Buffer.from('['.repeat(10_000)), 32)).toBe(33);
  });
});
