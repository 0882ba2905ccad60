/**
 * A small checker of JSON-LD against the part of schema.org a store page uses: each node's `@type`
 * must be one of these types, each of its properties one that schema.org defines for that type
 * (its own or inherited: GardenStore < Store < LocalBusiness < Organization and Place < Thing), each
 * value of the expected type. Written from schema.org's pages of these types; not a full validator,
 * but a property schema.org does not have, a misspelt type or a day outside DayOfWeek fails.
 */

type Check = (value: unknown, path: string) => string[];

const text: Check = (value, path) => (typeof value === 'string' && value.length > 0 ? [] : [`${path}: expected Text, got ${JSON.stringify(value)}`]);
const url: Check = (value, path) => (typeof value === 'string' && URL.canParse(value) ? [] : [`${path}: expected URL, got ${JSON.stringify(value)}`]);
const number: Check = (value, path) => (typeof value === 'number' && Number.isFinite(value) ? [] : [`${path}: expected Number, got ${JSON.stringify(value)}`]);
const boolean: Check = (value, path) => (typeof value === 'boolean' ? [] : [`${path}: expected Boolean, got ${JSON.stringify(value)}`]);
/** schema.org's Time as opening hours write it: hh:mm[:ss]. */
const time: Check = (value, path) =>
  typeof value === 'string' && /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/.test(value) ? [] : [`${path}: expected Time (hh:mm), got ${JSON.stringify(value)}`];
/** schema.org's Date: ISO 8601 YYYY-MM-DD, a real calendar date. */
const date: Check = (value, path) =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value)
    ? []
    : [`${path}: expected Date, got ${JSON.stringify(value)}`];

/** The members of schema.org's DayOfWeek enumeration (the days and PublicHolidays), as URLs. */
export const DAY_OF_WEEK = new Set(
  ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'PublicHolidays'].map((day) => `https://schema.org/${day}`),
);
const dayOfWeek: Check = (value, path) => (typeof value === 'string' && DAY_OF_WEEK.has(value) ? [] : [`${path}: not a DayOfWeek: ${JSON.stringify(value)}`]);

/** A property that may repeat: one value or an array of them. */
const many =
  (check: Check): Check =>
  (value, path) =>
    Array.isArray(value) ? (value.length === 0 ? [`${path}: empty list`] : value.flatMap((v, i) => check(v, `${path}[${i}]`))) : check(value, path);

const node =
  (...types: string[]): Check =>
  (value, path) =>
    nodeProblems(value, path, types);

/** The properties of each type used, with the expected type of each value (schema.org's "Expected Type"). */
const TYPES: Record<string, Record<string, Check>> = {
  GardenStore: {
    // Thing
    name: text,
    url: url,
    // Organization and Place
    address: node('PostalAddress'),
    telephone: text,
    // Organization
    email: text,
    // Place
    geo: node('GeoCoordinates'),
    branchCode: text,
    openingHoursSpecification: many(node('OpeningHoursSpecification')),
    amenityFeature: many(node('LocationFeatureSpecification')),
  },
  PostalAddress: { streetAddress: text, addressLocality: text, addressRegion: text, postalCode: text, addressCountry: text, name: text },
  GeoCoordinates: { latitude: number, longitude: number },
  OpeningHoursSpecification: { dayOfWeek: many(dayOfWeek), opens: time, closes: time, validFrom: date, validThrough: date },
  // LocationFeatureSpecification < PropertyValue: its value may be a Boolean.
  LocationFeatureSpecification: { name: text, value: boolean },
};

function nodeProblems(value: unknown, path: string, types: string[]): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: expected a node of ${types.join(' or ')}`];
  const { '@type': type, '@context': _context, '@id': id, ...properties } = value as Record<string, unknown>;
  if (typeof type !== 'string' || !types.includes(type)) return [`${path}: @type ${JSON.stringify(type)} is not ${types.join(' or ')}`];
  const problems = id === undefined ? [] : url(id, `${path}.@id`);
  for (const [name, v] of Object.entries(properties)) {
    const check = TYPES[type][name];
    problems.push(...(check ? check(v, `${path}.${name}`) : [`${path}: schema.org's ${type} has no property ${name}`]));
  }
  return problems;
}

/** What is wrong with a JSON-LD document of a GardenStore; empty when nothing is. */
export function schemaOrgProblems(document: unknown): string[] {
  const context = (document as { '@context'?: unknown } | null)?.['@context'];
  const problems = context === 'https://schema.org' ? [] : [`@context must be https://schema.org, got ${JSON.stringify(context)}`];
  return [...problems, ...nodeProblems(document, '$', ['GardenStore'])];
}
