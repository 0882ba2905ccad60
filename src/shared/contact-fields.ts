/**
 * A store's contact fields (`phone`, `website`, `email`): their checks and the one form each is
 * kept in, shared by the CSV import, the admin API and the console (which links them only when
 * they pass the same checks). Each takes its text trimmed; empty is "none" and never reaches here.
 *
 * The phone is written by hand rather than with libphonenumber-js: the chain's stores are in the
 * US and its territories, all of them on the North American Numbering Plan, whose whole rule is
 * the few lines below, where the library's smallest build adds about 150 KB (its metadata of every
 * country) to the console's bundle for numbers the service refuses anyway. A store abroad would
 * be the time to take the library.
 */

/** The longest website kept (characters). */
export const WEBSITE_MAX = 200;
/** The longest address kept (characters): RFC 5321's path limit less its angle brackets. */
export const EMAIL_MAX = 254;
/** The column of a phone: E.164 has at most 15 digits after its `+`; a NANP number is 12 characters. */
export const PHONE_MAX = 16;

/**
 * A US number as people write it: an optional country code 1 (`+1`, `1`), then the area code
 * (bare or in parentheses), the exchange and the line, each group separated by at most one space,
 * dot or dash. Letters (`1-800-FLOWERS`), extensions and other country codes are refused.
 */
const NANP = /^(?:\+?1[ .-]?)?(?:\((\d{3})\)|(\d{3}))[ .-]?(\d{3})[ .-]?(\d{4})$/;

/** A phone number in E.164 (`+19135550142`), or why it is not a US one. */
export function parsePhone(text: string): { phone: string } | { reason: string } {
  const match = text.length <= 32 ? NANP.exec(text) : null;
  if (!match) return { reason: `"${text}" is not a US phone number like (913) 555-0142 or +1 913 555 0142` };
  const area = match[1] ?? match[2];
  const [, , , exchange, line] = match;
  if (area[0] < '2') return { reason: `"${text}" has no US area code: ${area} does not start with 2 to 9` };
  if (exchange[0] < '2') return { reason: `"${text}" is not a US phone number: its exchange ${exchange} does not start with 2 to 9` };
  return { phone: `+1${area}${exchange}${line}` };
}

/** A host name: labels of letters, digits and inner hyphens, the last one (the top-level domain) letters only. */
const LABEL = String.raw`[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?`;
const HOST = String.raw`(?:${LABEL}\.)+(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})`;
/**
 * `https://`, a host name (no user name or password before it, which would show one host and take
 * the browser to another; no IP address), an optional port, then a path, query and fragment of
 * the characters a URL holds as they are (RFC 3986), a `%` always followed by two hex digits.
 */
const WEBSITE = new RegExp(String.raw`^https://${HOST}(?::\d{1,5})?(?:[/?#](?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)?$`, 'iu');

/**
 * Why `text` is not a store's website, or null. It is kept as given (trimmed), not as WHATWG URL
 * would write it (`HTTPS://Example.com` stays so, not `https://example.com/`): what the operator
 * typed is what they see again, and an export imports back unchanged.
 */
export function websiteProblem(text: string): string | null {
  if ([...text].length > WEBSITE_MAX) return `is longer than ${WEBSITE_MAX} characters`;
  if (!/^https:\/\//i.test(text)) return `"${text}" is not an https address like https://example.com (http and other schemes are refused)`;
  if (!WEBSITE.test(text)) return `"${text}" is not a web address: https:// followed by a host name like example.com, then a path if any`;
  return null;
}

/** A dot-atom local part (RFC 5322's atext, no quoted strings), at most 64 characters, then a host name as a website's. */
const EMAIL = new RegExp(String.raw`^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~-]+)*@${HOST}$`, 'u');

/**
 * Why `text` is not a plausible address, or null: the rule of class-validator's `isEmail` in its
 * defaults, less what a store's address never needs (quoted local parts, non-ASCII local parts,
 * IP literals); src/stores/store-csv.spec.ts holds the two to agree on the addresses this takes.
 * Kept as given (trimmed): the local part's case may matter to the mail server.
 */
export function emailProblem(text: string): string | null {
  if ([...text].length > EMAIL_MAX) return `is longer than ${EMAIL_MAX} characters`;
  return EMAIL.test(text) ? null : `"${text}" is not an email address like shop@example.com`;
}
