import { HOUR, ZoneOffsets, zoneOffsets } from './zone-offsets.js';

const utc = Date.parse;
const wall = (text: string) => Date.parse(`${text}Z`); // a wall-clock time, counted as if it were UTC

describe('ZoneOffsets', () => {
  const newYork = ZoneOffsets.around('America/New_York', utc('2026-03-01T12:00:00Z'));
  const fallBack = ZoneOffsets.around('America/New_York', utc('2026-10-25T12:00:00Z'));

  it('finds the change to the minute (2026-03-08 07:00 UTC, 2026-11-01 06:00 UTC)', () => {
    expect(newYork.offsetAt(utc('2026-03-08T06:59:00Z'))).toBe(-5 * HOUR);
    expect(newYork.offsetAt(utc('2026-03-08T07:00:00Z'))).toBe(-4 * HOUR);
    expect(fallBack.offsetAt(utc('2026-11-01T05:59:00Z'))).toBe(-4 * HOUR);
    expect(fallBack.offsetAt(utc('2026-11-01T06:00:00Z'))).toBe(-5 * HOUR);
  });

  it('places wall-clock times as Temporal "compatible" does', () => {
    expect(newYork.instantOf(wall('2026-03-08T01:59:00'))).toBe(utc('2026-03-08T06:59:00Z')); // EST
    expect(newYork.instantOf(wall('2026-03-08T02:00:00'))).toBe(utc('2026-03-08T07:00:00Z')); // does not exist: 3:00 EDT
    expect(newYork.instantOf(wall('2026-03-08T02:30:00'))).toBe(utc('2026-03-08T07:30:00Z')); // does not exist: 3:30 EDT
    expect(newYork.instantOf(wall('2026-03-08T03:00:00'))).toBe(utc('2026-03-08T07:00:00Z')); // EDT
    expect(fallBack.instantOf(wall('2026-11-01T00:59:00'))).toBe(utc('2026-11-01T04:59:00Z')); // EDT
    expect(fallBack.instantOf(wall('2026-11-01T01:30:00'))).toBe(utc('2026-11-01T05:30:00Z')); // twice: the first, EDT
    expect(fallBack.instantOf(wall('2026-11-01T02:00:00'))).toBe(utc('2026-11-01T07:00:00Z')); // EST
  });

  it('handles a change at midnight (Havana: 2026-03-08 00:00 does not exist) and a 30-minute one (Lord Howe)', () => {
    const havana = ZoneOffsets.around('America/Havana', utc('2026-03-05T00:00:00Z'));
    expect(havana.instantOf(wall('2026-03-08T00:00:00'))).toBe(utc('2026-03-08T05:00:00Z'));
    expect(havana.format(utc('2026-03-08T05:00:00Z'))).toBe('2026-03-08T01:00:00-04:00');
    const lordHowe = ZoneOffsets.around('Australia/Lord_Howe', utc('2026-04-01T00:00:00Z'));
    expect(lordHowe.instantOf(wall('2026-04-05T01:45:00'))).toBe(utc('2026-04-04T14:45:00Z')); // twice: the first, +11:00
    expect(lordHowe.format(utc('2026-04-04T15:00:00Z'))).toBe('2026-04-05T01:30:00+10:30');
  });

  it('writes RFC 3339 with the offset at that instant', () => {
    expect(newYork.format(utc('2026-03-08T06:59:00Z'))).toBe('2026-03-08T01:59:00-05:00');
    expect(newYork.format(utc('2026-03-08T07:00:00Z'))).toBe('2026-03-08T03:00:00-04:00');
    expect(ZoneOffsets.around('UTC', 0).format(utc('2026-06-17T00:00:00Z'))).toBe('2026-06-17T00:00:00+00:00');
    expect(ZoneOffsets.around('Asia/Kolkata', 0).format(utc('2026-06-17T00:00:00Z'))).toBe('2026-06-17T05:30:00+05:30');
    expect(ZoneOffsets.around('Pacific/Guam', 0).format(utc('2026-03-08T23:30:00Z'))).toBe('2026-03-09T09:30:00+10:00');
  });

  it('keeps one window per zone while it covers the instants asked about, and makes a new one after', () => {
    const first = zoneOffsets('America/Chicago', utc('2026-06-01T00:00:00Z'));
    expect(zoneOffsets('America/Chicago', utc('2026-06-20T00:00:00Z'))).toBe(first);
    const later = zoneOffsets('America/Chicago', utc('2026-07-20T00:00:00Z'));
    expect(later).not.toBe(first);
    expect(later.covers(utc('2026-07-20T00:00:00Z'))).toBe(true);
    expect(zoneOffsets('America/Chicago', utc('2026-06-01T00:00:00Z'))).not.toBe(later); // going back makes another
  });

  it('refuses a zone Intl does not know', () => {
    expect(() => zoneOffsets('Mars/Olympus_Mons', 0)).toThrow(RangeError);
  });
});
