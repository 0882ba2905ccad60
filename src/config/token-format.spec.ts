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
