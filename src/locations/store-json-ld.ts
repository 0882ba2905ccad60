import type { MinuteRange } from '../shared/business-hours.js';
import { dayNumber } from '../shared/special-days.js';
import type { StorePage } from './store-page.js';

/** schema.org's DayOfWeek members, Monday first as a store's week is. */
export const SCHEMA_DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'].map((day) => `https://schema.org/${day}`);

export interface OpeningHoursSpecification {
  '@type': 'OpeningHoursSpecification';
  dayOfWeek: string[];
  opens: string;
  closes: string;
  validFrom?: string;
  validThrough?: string;
}

/** A store's page for search engines and storefronts: schema.org's GardenStore, as Google's LocalBusiness structured data reads it. */
export interface StoreJsonLd {
  '@context': 'https://schema.org';
  '@type': 'GardenStore';
  '@id': string;
  name: string;
  branchCode: string;
  address: {
    '@type': 'PostalAddress';
    streetAddress: string;
    addressLocality: string;
    addressRegion: string;
    postalCode: string;
    addressCountry: 'US';
  };
  geo: { '@type': 'GeoCoordinates'; latitude: number; longitude: number };
  url?: string;
  telephone?: string;
  email?: string;
  openingHoursSpecification: OpeningHoursSpecification[];
  amenityFeature?: Array<{ '@type': 'LocationFeatureSpecification'; name: string; value: true }>;
}

/** Minutes after midnight as schema.org's Time, `HH:MM`. */
const time = (minutes: number) => `${String(Math.floor(minutes / 60) % 24).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

/**
 * A day's ranges as opens/closes pairs. Closed all day is opens and closes `00:00`, as Google's
 * LocalBusiness documentation writes it; a close at midnight is `00:00` (schema.org: a closing
 * before the opening runs into the next day), but a whole day (12:00 AM - 12:00 AM) is 00:00 to
 * 23:59, as Google writes "open 24 hours", since 00:00 to 00:00 would say closed.
 */
function hoursOf(ranges: readonly MinuteRange[]): Array<{ opens: string; closes: string }> {
  if (ranges.length === 0) return [{ opens: '00:00', closes: '00:00' }];
  return ranges.map(([open, close]) => ({ opens: time(open), closes: open === 0 && close === 1440 ? '23:59' : time(close) }));
}

const specifications = (dayOfWeek: string[], ranges: readonly MinuteRange[], valid?: { validFrom: string; validThrough?: string }) =>
  hoursOf(ranges).map(({ opens, closes }): OpeningHoursSpecification => ({ '@type': 'OpeningHoursSpecification', dayOfWeek, opens, closes, ...valid }));

/** The weekday (Monday 0) of a date YYYY-MM-DD. */
const weekdayOf = (date: string) => (((dayNumber(date)! + 3) % 7) + 7) % 7;

/**
 * The JSON-LD of a store's page at `id` (the page's absolute URL, its stable `@id`):
 * openingHoursSpecification has one entry per group of weekdays with the same hours (and per
 * range of them), then one per special day or holiday of the page's days, valid on that date
 * only, then a closure's, every day from its first to its last (open-ended until further
 * notice), closed all day. Each detail only when the store has it.
 */
export function storeJsonLd(page: StorePage, id: string): StoreJsonLd {
  const { location, details } = page;
  const groups = new Map<string, number[]>();
  page.week.forEach((ranges, day) => {
    const key = ranges.join(' ');
    const group = groups.get(key);
    if (group) group.push(day);
    else groups.set(key, [day]);
  });
  const opening = [...groups.values()].flatMap((days) =>
    specifications(
      days.map((day) => SCHEMA_DAYS[day]),
      page.week[days[0]],
    ),
  );
  for (const { date, ranges } of page.days) opening.push(...specifications([SCHEMA_DAYS[weekdayOf(date)]], ranges, { validFrom: date, validThrough: date }));
  if (page.closure) {
    const { from, until } = page.closure;
    opening.push(...specifications(SCHEMA_DAYS, [], until === null ? { validFrom: from } : { validFrom: from, validThrough: until }));
  }
  return {
    '@context': 'https://schema.org',
    '@type': 'GardenStore',
    '@id': id,
    name: location.name,
    branchCode: page.code,
    address: {
      '@type': 'PostalAddress',
      streetAddress: location.address,
      addressLocality: location.city,
      addressRegion: location.state,
      postalCode: location.zip,
      addressCountry: 'US',
    },
    geo: { '@type': 'GeoCoordinates', latitude: Number(location.lat), longitude: Number(location.lng) },
    ...(details.website && { url: details.website }),
    ...(details.phone && { telephone: details.phone }),
    ...(details.email && { email: details.email }),
    openingHoursSpecification: opening,
    ...(details.services && {
      amenityFeature: details.services.map(({ label }) => ({ '@type': 'LocationFeatureSpecification' as const, name: label, value: true as const })),
    }),
  };
}
