import { BadRequestException } from '@nestjs/common';
import { parseIdempotencyKey, requestFingerprint } from './idempotency.js';

describe('parseIdempotencyKey', () => {
  it('is undefined without the header', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each([['a'], ['8e03978e-40d5-43e8-bc93-6894a57f9324'], ['"quoted" key with spaces ~!'], ['x'.repeat(255)]])('accepts %j as is', (key) => {
    expect(parseIdempotencyKey(key)).toBe(key);
  });

  it.each([[''], ['x'.repeat(256)], ['tab\there'], ['caf\u00e9'], ['\u{1F33F}'], ['nul\u0000'], ['del\u007f'], [['a', 'b']]])('refuses %j with 400', (key) => {
    expect(() => parseIdempotencyKey(key)).toThrow(new BadRequestException('Idempotency-Key must be 1 to 255 printable ASCII characters'));
  });
});

describe('requestFingerprint', () => {
  it('ignores key order and treats null as absent', () => {
    const reference = requestFingerprint({ name: 'Fern', tag: 'green', id: 7 });
    expect(requestFingerprint({ id: 7, tag: 'green', name: 'Fern' })).toBe(reference);
    expect(requestFingerprint({ name: 'Fern' })).toBe(requestFingerprint({ name: 'Fern', tag: null, id: undefined }));
  });

  it('differs for any difference of value', () => {
    const prints = [
      { name: 'Fern' },
      { name: 'fern' },
      { name: 'Fern', tag: '' },
      { name: 'Fern', tag: 'green' },
      { name: 'Fern', id: 1 },
      { name: 'Fern', id: 2 },
      // The fields cannot bleed into each other.
      { name: 'Fern","x', tag: 'y' },
      { name: 'Fern', tag: 'x","y' },
    ].map(requestFingerprint);
    expect(new Set(prints).size).toBe(prints.length);
    expect(prints[0]).toMatch(/^[0-9a-f]{64}$/);
  });
});
