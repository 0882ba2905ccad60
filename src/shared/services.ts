/**
 * A store's services (greenhouse, repotting, …): slugs of the chain's vocabulary (`/admin/services`),
 * held by a store as one text, the slugs sorted and each once, joined by SERVICES_SEPARATOR (the
 * CSV's cell, the `stores.services` column). The admin API and the search take them as lists.
 */

/** A service's slug: what a store's list, the search's filter and the vocabulary's path name it by. */
export const SERVICE_SLUG = /^[a-z][a-z0-9_]{0,39}$/;
export const SERVICE_SLUG_RULE = 'must be a lowercase slug: a letter, then at most 39 letters, digits or underscores';

/** Between two slugs in a store's text: a cell of the CSV holds `curbside_pickup|delivery`. */
export const SERVICES_SEPARATOR = '|';

/** The slugs of a store's text, in order; none for the empty text. */
export const servicesOf = (text: string): string[] => (text === '' ? [] : text.split(SERVICES_SEPARATOR));

/** A store's text for `slugs`: sorted, each once. */
export const servicesText = (slugs: readonly string[]): string => [...new Set(slugs)].sort().join(SERVICES_SEPARATOR);

/**
 * A cell of the CSV (or the admin API's list, joined) checked against the vocabulary (`known`):
 * the store's text, or the first slug that names no service of the chain. Entries are trimmed, and
 * empty ones (a trailing `|`) skipped.
 */
export function parseServices(cell: string, known: ReadonlySet<string>): { text: string } | { unknown: string } {
  // Most stores of a file have none: no list, set or sort for them.
  if (cell === '') return { text: '' };
  const slugs = cell
    .split(SERVICES_SEPARATOR)
    .map((slug) => slug.trim())
    .filter((slug) => slug !== '');
  const unknown = slugs.find((slug) => !known.has(slug));
  return unknown === undefined ? { text: servicesText(slugs) } : { unknown };
}
