import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';
import type { Point } from '../shared/great-circle.js';

/**
 * The IANA time zone of a place, offline: geo-tz's "comprehensive" data (timezone-boundary-builder's
 * polygons with the tz database's own zone for each area: America/St_Thomas, Pacific/Saipan, where
 * geo-tz's default data gives the most populous zone with the same clocks since 1970,
 * America/Puerto_Rico, Pacific/Guam). The boundaries are exact, county lines included;
 * @photostructure/tz-lookup, 700 times smaller and 5 to 10 times faster, gave a zone with other
 * clocks for 196 of the 42,252 ZIP points of
 * assets/zip-points.csv (North Dakota, Idaho, the Florida panhandle, Michigan's Upper Peninsula,
 * American Samoa put in Samoa, a day ahead). Figures: docs/performance.md, "Opening hours and time zones".
 *
 * geo-tz reads the polygons of a point's quadtree cell from its data file on first use and keeps
 * them; its default keeps every cell ever read (38 MB for the whole United States). The cache
 * below keeps the last 64 cells (about 8 MB): a catalogue import of 100,000 stores in any order
 * still looks up more than 100,000 points a second. geo-tz itself (60 ms, 3 MB of index) is
 * loaded on the first lookup, so a process that never asks pays nothing at start.
 */
type GeoTz = typeof import('geo-tz/all');
let geoTz: GeoTz | undefined;

function loaded(): GeoTz {
  if (!geoTz) {
    geoTz = createRequire(import.meta.url)('geo-tz/all') as GeoTz;
    geoTz.setCache({ store: new LRUCache<string, object>({ max: 64 }) });
  }
  return geoTz;
}

/**
 * The IANA zone at a point: America/Denver for El Paso. Where geo-tz names several (disputed
 * areas, none in the United States) the first; at sea a nautical zone such as Etc/GMT+5. Throws
 * on a latitude or longitude out of range.
 */
export function zoneOf({ lat, lng }: Point): string {
  return loaded().find(lat, lng)[0];
}

/**
 * Whether `name` is an IANA zone that this runtime's Intl knows, in the tz database's spelling:
 * America/Denver and the older names it keeps as links (America/Indiana/Indianapolis, US/Eastern),
 * not america/denver nor America/DENVER (which Intl would take, but a catalogue keeps one
 * spelling) nor an offset. Intl names no links, so a wrongly capitalised link whose zone is
 * spelt otherwise (US/EASTERN for America/New_York) still passes.
 */
export function isKnownZone(name: string): boolean {
  if (knownZones.has(name)) return true;
  if (name.length > 64 || !ZONE_NAME.test(name)) return false; // the longest name in the tz database has 32 characters
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return false;
  }
  if (canonical !== name && canonical.toLowerCase() === name.toLowerCase()) return false;
  if (knownZones.size < MAX_KNOWN_ZONES) knownZones.add(name);
  return true;
}

/**
 * The names isKnownZone has accepted: asking Intl costs about 60 µs a name, 12 of the 25 s of a
 * 100,000-row import that gives every zone (docs/performance.md, "Opening hours in the search").
 * The tz database has some 600 names; the cap only bounds what odd spellings could add.
 */
const knownZones = new Set<string>();
const MAX_KNOWN_ZONES = 1000;

/** Names as the tz database writes them: parts starting with a capital (Etc/GMT+5, America/Port-au-Prince, EST5EDT, UTC). */
const ZONE_NAME = /^[A-Z][A-Za-z0-9_+-]*(\/[A-Z][A-Za-z0-9_+-]*)*$/;
