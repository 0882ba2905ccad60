import { MINUTE } from '../shared/zone-offsets.js';

// The search's `open_at` (the request DTO checks it, the service reads it): the one place that
// reads a date-time a caller wrote.

const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * The instant of an RFC 3339 date-time with an offset (`2026-11-25T14:30:00-05:00`, `…Z`,
 * fractions of a second allowed), in milliseconds since 1970; undefined for anything else: no
 * offset, a date alone, a day the month lacks, hour 24, a leap second (JavaScript time has
 * none), an offset of 24 hours or more, and years before 1970 (the tz database's rules start
 * there) or after 9999. Date.parse alone takes all of these and more (`2026-02-30` is 2 March).
 */
export function parseDateTime(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const fraction = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (!m[8]) {
    const [hours, minutes] = [Number(m[10]), Number(m[11])];
    if (hours > 23 || minutes > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes) * MINUTE;
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction) - offset;
}
