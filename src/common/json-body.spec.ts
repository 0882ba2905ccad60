import { isPlain, nestingDepth, parsePlainJson } from './json-body.js';

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

describe('isPlain', () => {
  const plain = (headers: Record<string, string | undefined>) => isPlain({ headers }, 100);
  const json = { 'content-type': 'application/json', 'content-length': '20' };

  it.each([
    json,
    { ...json, 'content-type': 'application/json; charset=utf-8' },
    { ...json, 'content-type': 'Application/JSON;charset="UTF-8"' },
    { ...json, 'content-encoding': 'identity' },
    { ...json, 'content-length': '100' },
  ])('reads %j directly', (headers) => {
    expect(plain(headers)).toBe(true);
  });

  it.each([
    { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    { ...json, 'content-length': '101' },
    { ...json, 'content-length': 'x' },
    { ...json, 'content-encoding': 'gzip' },
    { ...json, 'content-type': 'application/json; charset=utf-16' },
    { ...json, 'content-type': 'application/json; charset=utf8' },
    { ...json, 'content-type': 'application/json; charset=utf-8; x=1' },
  ])('leaves %j to body-parser', (headers) => {
    expect(plain(headers)).toBe(false);
  });
});

describe('parsePlainJson', () => {
  const parse = (text: string | Buffer) => {
    const parsed = parsePlainJson(Buffer.isBuffer(text) ? text : Buffer.from(text));
    return 'error' in parsed ? { status: parsed.error.getStatus(), message: parsed.error.message } : parsed;
  };

  it('parses an object or an array, after white space or a byte order mark', () => {
    expect(parse('{"a":[1,"é"]}')).toEqual({ body: { a: [1, 'é'] } });
    expect(parse(' \r\n\t[2]')).toEqual({ body: [2] });
    expect(parse('\ufeff{"a":1}')).toEqual({ body: { a: 1 } });
  });

  it('takes an empty body for {}, as body-parser does', () => {
    expect(parse('')).toEqual({ body: {} });
  });

  it('decodes a byte that is not UTF-8 to U+FFFD, as iconv-lite does', () => {
    expect(parse(Buffer.from('{"a":"\xff"}', 'latin1'))).toEqual({ body: { a: '\ufffd' } });
  });

  it.each(['   ', '"a"', '1', 'null', '{"a":1,}', '{"a":'])('refuses %j as not JSON', (text) => {
    expect(parse(text)).toEqual({ status: 400, message: 'request body is not valid JSON' });
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses a %s key at any depth, escaped or not', (key) => {
    expect(parse(`{"a":[{"${key}":1}]}`)).toEqual({ status: 400, message: `property ${key} is not allowed` });
    expect(parse(`{"\\u00${key.charCodeAt(0).toString(16)}${key.slice(1)}":1}`)).toEqual({ status: 400, message: `property ${key} is not allowed` });
  });

  it('refuses a body nested deeper than 32 levels before parsing it', () => {
    expect(parse(`${'['.repeat(33)}`)).toEqual({ status: 400, message: 'request body is nested too deeply (at most 32 levels)' });
    expect(parse(`${'['.repeat(32)}${']'.repeat(32)}`)).toEqual({ body: expect.any(Array) });
  });
});
