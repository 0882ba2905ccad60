import { crc32 } from 'node:zlib';
import { displayPrefix, generateToken, hashToken, isWellFormedToken } from './token-format.js';

describe('token format', () => {
  it('generates pst_ tokens of 32 random bytes in base62 with a checksum', () => {
    const token = generateToken();
    expect(token).toMatch(/^pst_[0-9A-Za-z]{49}$/);
    expect(isWellFormedToken(token)).toBe(true);
    expect(generateToken()).not.toBe(token);
  });

  it('refuses a token with one character changed (checksum)', () => {
    const token = generateToken();
    for (const index of [4, 20, 46, 52]) {
      const replacement = token[index] === 'a' ? 'b' : 'a';
      const typo = token.slice(0, index) + replacement + token.slice(index + 1);
      expect(isWellFormedToken(typo)).toBe(false);
    }
  });

  it('still takes the tokens issued before its checksum was worked out without BigInt', () => {
    // Issued by `tokens create` while the checksum was base62(BigInt(crc32(body))).
    expect(isWellFormedToken('pst_wZD1x9FBpDNN1ikqdpX1kkIEZZCWGelsIYXbHduwlUX1f36Rq')).toBe(true);
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const bigintChecksum = (body: string) => {
      let out = '';
      for (let rest = BigInt(crc32(body)); rest > 0n; rest /= 62n) out = alphabet[Number(rest % 62n)] + out;
      return out.padStart(6, '0');
    };
    for (let i = 0; i < 2000; i++) {
      const body = generateToken().slice(4, 47);
      expect(isWellFormedToken(`pst_${body}${bigintChecksum(body)}`)).toBe(true);
    }
  });

  it('refuses other shapes', () => {
    const token = generateToken();
    expect(isWellFormedToken(token.slice(0, -1))).toBe(false);
    expect(isWellFormedToken(`${token}a`)).toBe(false);
    expect(isWellFormedToken(token.replace('pst_', 'pat_'))).toBe(false);
    expect(isWellFormedToken('')).toBe(false);
  });

  it('stores a SHA-256 digest and a short display prefix only', () => {
    const token = generateToken();
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token.slice(4, 20));
    expect(displayPrefix(token)).toBe(token.slice(0, 10));
  });
});
