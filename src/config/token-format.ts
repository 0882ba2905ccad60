import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Token format: `pst_` + 43 base62 characters (32 random bytes) + 6 base62 characters of
 * CRC-32 over the random part, like the checksummed tokens of public token schemes. The
 * checksum lets a mistyped or made-up token be refused without a database look-up, and
 * the fixed prefix lets secret scanners recognise a leaked token.
 */
const PREFIX = 'pst_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // ceil(32 / log2(62))
const TOKEN_PATTERN = new RegExp(`^${PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
/** What `tokens list` shows so an operator can tell tokens apart: the prefix and 6 characters. */
export const DISPLAY_PREFIX_LENGTH = PREFIX.length + 6;

function base62(value: bigint, length: number): string {
  let out = '';
  for (let rest = value; rest > 0n; rest /= 62n) out = ALPHABET[Number(rest % 62n)] + out;
  return out.padStart(length, '0');
}

/** The same digits as base62(BigInt(crc), 6), in plain numbers: a CRC-32 is a safe integer, and this runs on every request. */
function checksum(body: string): string {
  let out = '';
  for (let rest = crc32(body); rest > 0; rest = Math.floor(rest / 62)) out = ALPHABET[rest % 62] + out;
  return out.padStart(CHECKSUM_LENGTH, '0');
}

export function generateToken(): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${PREFIX}${body}${checksum(body)}`;
}

/** Shape and checksum only; says nothing about whether the token was ever issued. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return token.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

/** The only form in which a token is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}
