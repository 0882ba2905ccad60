import fc from 'fast-check';
import {
  closureDays,
  datedHours,
  hoursOfDay,
  localDay,
  NEXT_CHANGE_DAYS,
  openingState,
  weeklyHours,
  type DayRules,
  type OpeningState,
  type WeeklyHours,
} from './opening-hours.js';
import type { Closure, SpecialDay } from './special-days.js';
import { WEEKDAYS, type Weekday } from './weekdays.js';

/** A week with `every` on each day, except the days given. */
function week(every: string, days: Partial<Record<Weekday, string>> = {}) {
  return weeklyHours({ ...Object.fromEntries(WEEKDAYS.map((day) => [day, every])), ...days } as Record<Weekday, string>);
}
const state = (open: boolean, nextChange: string | null): OpeningState => ({ open, nextChange });
const at = (instant: string | number) => new Date(instant);

const NINE_TO_SIX = week('9:00 AM - 6:00 PM');

// Every expected value below is worked out by hand. 2026-03-07 is a Saturday, 03-08 a Sunday;
// 2026-06-15 a Monday, 06-17 a Wednesday; 2026-10-31 a Saturday, 11-01 a Sunday.
describe('openingState', () => {
  describe('America/New_York, clocks spring forward on 2026-03-08 (2:00 AM EST becomes 3:00 AM EDT, 07:00 UTC)', () => {
    const zone = 'America/New_York';

    it('gives the opening after the change with the new offset', () => {
      // Saturday 8:00 PM EST; Sunday's 9:00 AM is EDT.
      expect(openingState(NINE_TO_SIX, zone, at('2026-03-08T01:00:00Z'))).toEqual(state(false, '2026-03-08T09:00:00-04:00'));
      expect(openingState(NINE_TO_SIX, zone, at('2026-03-08T13:00:00Z'))).toEqual(state(true, '2026-03-08T18:00:00-04:00'));
    });

    it('moves an opening at a time that does not exist later by the gap (2:30 AM is 3:30 AM EDT)', () => {
      const hours = week('Closed', { sunday: '2:30 AM - 5:00 PM' });
      expect(openingState(hours, zone, at('2026-03-08T06:00:00Z'))).toEqual(state(false, '2026-03-08T03:30:00-04:00')); // 1:00 AM EST
      expect(openingState(hours, zone, at('2026-03-08T07:15:00Z'))).toEqual(state(false, '2026-03-08T03:30:00-04:00')); // 3:15 AM EDT
      expect(openingState(hours, zone, at('2026-03-08T07:30:00Z'))).toEqual(state(true, '2026-03-08T17:00:00-04:00')); // 3:30 AM EDT
    });

    it('keeps a night open across midnight and closes it at 2:30 AM, that is 3:30 AM EDT', () => {
      const hours = week('Closed', { saturday: '8:00 PM - 12:00 AM', sunday: '12:00 AM - 2:30 AM' });
      // Saturday 11:00 PM EST: no change at midnight.
      expect(openingState(hours, zone, at('2026-03-08T04:00:00Z'))).toEqual(state(true, '2026-03-08T03:30:00-04:00'));
    });

    it('does not open a range that the skipped hour turns around (2:30 AM - 3:00 AM)', () => {
      const hours = week('Closed', { sunday: '2:30 AM - 3:00 AM, 9:00 AM - 5:00 PM' });
      expect(openingState(hours, zone, at('2026-03-08T06:00:00Z'))).toEqual(state(false, '2026-03-08T09:00:00-04:00'));
      expect(openingState(hours, zone, at('2026-03-08T07:45:00Z'))).toEqual(state(false, '2026-03-08T09:00:00-04:00'));
    });
  });

  describe('America/New_York, clocks fall back on 2026-11-01 (2:00 AM EDT becomes 1:00 AM EST, 06:00 UTC)', () => {
    const zone = 'America/New_York';

    it('gives the opening after the change with the new offset', () => {
      // Saturday 7:00 PM EDT; Sunday's 9:00 AM is EST.
      expect(openingState(NINE_TO_SIX, zone, at('2026-10-31T23:00:00Z'))).toEqual(state(false, '2026-11-01T09:00:00-05:00'));
    });

    it('closes at the first of two 1:30 AMs', () => {
      const hours = week('Closed', { sunday: '12:00 AM - 1:30 AM' });
      expect(openingState(hours, zone, at('2026-11-01T05:15:00Z'))).toEqual(state(true, '2026-11-01T01:30:00-04:00')); // 1:15 AM EDT
      // 1:15 AM EST, the second time round: closed since 1:30 AM EDT, opens next Sunday.
      expect(openingState(hours, zone, at('2026-11-01T06:15:00Z'))).toEqual(state(false, '2026-11-08T00:00:00-05:00'));
    });

    it('opens at the first of two 1:30 AMs', () => {
      const hours = week('Closed', { sunday: '1:30 AM - 6:00 PM' });
      expect(openingState(hours, zone, at('2026-11-01T05:00:00Z'))).toEqual(state(false, '2026-11-01T01:30:00-04:00')); // 1:00 AM EDT
      expect(openingState(hours, zone, at('2026-11-01T06:00:00Z'))).toEqual(state(true, '2026-11-01T18:00:00-05:00')); // 1:00 AM EST
    });

    it('gives a weekly opening that the extra hour puts just past 7 x 24 hours away', () => {
      const hours = week('Closed', { saturday: '9:00 AM - 9:30 AM' });
      // Closing at 9:30 AM EDT on Saturday; next Saturday's 9:00 AM EST is 7 days and 30 minutes later.
      expect(openingState(hours, zone, at('2026-10-31T13:30:00Z'))).toEqual(state(false, '2026-11-07T09:00:00-05:00'));
    });
  });

  describe('zones without daylight saving', () => {
    it('America/Phoenix stays at -07:00 while New York changes', () => {
      expect(openingState(NINE_TO_SIX, 'America/Phoenix', at('2026-03-08T15:00:00Z'))).toEqual(state(false, '2026-03-08T09:00:00-07:00'));
      expect(openingState(NINE_TO_SIX, 'America/Phoenix', at('2026-06-17T16:00:00Z'))).toEqual(state(true, '2026-06-17T18:00:00-07:00'));
      expect(openingState(NINE_TO_SIX, 'America/Phoenix', at('2026-11-01T16:00:00Z'))).toEqual(state(true, '2026-11-01T18:00:00-07:00'));
    });

    it('Pacific/Honolulu stays at -10:00', () => {
      expect(openingState(NINE_TO_SIX, 'Pacific/Honolulu', at('2026-11-01T19:00:00Z'))).toEqual(state(true, '2026-11-01T18:00:00-10:00'));
      expect(openingState(NINE_TO_SIX, 'Pacific/Honolulu', at('2026-03-09T04:00:00Z'))).toEqual(state(false, '2026-03-09T09:00:00-10:00'));
    });

    it('America/Puerto_Rico stays at -04:00', () => {
      expect(openingState(NINE_TO_SIX, 'America/Puerto_Rico', at('2026-03-08T13:00:00Z'))).toEqual(state(true, '2026-03-08T18:00:00-04:00'));
      expect(openingState(NINE_TO_SIX, 'America/Puerto_Rico', at('2026-11-01T22:00:00Z'))).toEqual(state(false, '2026-11-02T09:00:00-04:00'));
    });

    it('Pacific/Guam is at +10:00, a day ahead of UTC in the morning: the weekday is the local one', () => {
      const hours = week('9:00 AM - 6:00 PM', { monday: '10:00 AM - 2:00 PM' });
      // Sunday 23:30 UTC is Monday 9:30 AM in Guam: Monday's hours apply.
      expect(openingState(hours, 'Pacific/Guam', at('2026-03-08T23:30:00Z'))).toEqual(state(false, '2026-03-09T10:00:00+10:00'));
      expect(openingState(hours, 'Pacific/Guam', at('2026-03-08T07:59:00Z'))).toEqual(state(true, '2026-03-08T18:00:00+10:00'));
    });
  });

  describe('the shapes of a day', () => {
    it('closes at midnight at the end of the day for a range ending at 12:00 AM', () => {
      const hours = week('6:00 PM - 12:00 AM', { sunday: 'Closed' });
      expect(openingState(hours, 'America/New_York', at('2026-06-18T02:00:00Z'))).toEqual(state(true, '2026-06-18T00:00:00-04:00'));
      expect(openingState(hours, 'America/New_York', at('2026-06-18T04:00:00Z'))).toEqual(state(false, '2026-06-18T18:00:00-04:00'));
    });

    it('closes and opens again with two ranges a day', () => {
      const hours = week('9:00 AM - 12:00 PM, 1:00 PM - 5:00 PM');
      const zone = 'America/Denver';
      expect(openingState(hours, zone, at('2026-06-17T17:00:00Z'))).toEqual(state(true, '2026-06-17T12:00:00-06:00')); // 11:00 AM MDT
      expect(openingState(hours, zone, at('2026-06-17T18:00:00Z'))).toEqual(state(false, '2026-06-17T13:00:00-06:00')); // noon, at the closing
      expect(openingState(hours, zone, at('2026-06-17T18:30:00Z'))).toEqual(state(false, '2026-06-17T13:00:00-06:00'));
      expect(openingState(hours, zone, at('2026-06-17T19:00:00Z'))).toEqual(state(true, '2026-06-17T17:00:00-06:00')); // 1:00 PM, at the opening
      expect(openingState(hours, zone, at('2026-06-17T23:00:00Z'))).toEqual(state(false, '2026-06-18T09:00:00-06:00'));
    });

    it('is open exactly at an opening and closed exactly at a closing', () => {
      expect(openingState(NINE_TO_SIX, 'America/Chicago', at('2026-06-17T14:00:00Z'))).toEqual(state(true, '2026-06-17T18:00:00-05:00'));
      expect(openingState(NINE_TO_SIX, 'America/Chicago', at('2026-06-17T23:00:00Z'))).toEqual(state(false, '2026-06-18T09:00:00-05:00'));
      expect(openingState(NINE_TO_SIX, 'America/Chicago', at(Date.parse('2026-06-17T14:00:00Z') - 1))).toEqual(state(false, '2026-06-17T09:00:00-05:00'));
    });

    it('never changes for a store closed every day', () => {
      for (const instant of ['2026-03-08T07:00:00Z', '2026-06-17T12:00:00Z', '2026-11-01T06:00:00Z']) {
        expect(openingState(week('Closed'), 'America/New_York', at(instant))).toEqual(state(false, null));
      }
    });

    it('never changes for a store open 12:00 AM - 12:00 AM every day, daylight-saving days included', () => {
      for (const instant of ['2026-03-08T04:00:00Z', '2026-03-08T07:00:00Z', '2026-06-17T04:00:00Z', '2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z']) {
        expect(openingState(week('12:00 AM - 12:00 AM'), 'America/New_York', at(instant))).toEqual(state(true, null));
      }
    });

    it('joins days open around the clock: no change at the midnights between them', () => {
      const hours = week('Closed', { monday: '12:00 AM - 12:00 AM', tuesday: '12:00 AM - 12:00 AM' });
      expect(openingState(hours, 'America/New_York', at('2026-06-15T16:00:00Z'))).toEqual(state(true, '2026-06-17T00:00:00-04:00'));
      const sundaysOff = week('12:00 AM - 12:00 AM', { sunday: 'Closed' });
      expect(openingState(sundaysOff, 'America/New_York', at('2026-06-20T16:00:00Z'))).toEqual(state(true, '2026-06-21T00:00:00-04:00'));
      expect(openingState(sundaysOff, 'America/New_York', at('2026-06-21T16:00:00Z'))).toEqual(state(false, '2026-06-22T00:00:00-04:00'));
    });

    it('joins a range ending at 12:00 AM and one starting at 12:00 AM the next day', () => {
      const hours = week('Closed', { friday: '6:00 PM - 12:00 AM', saturday: '12:00 AM - 2:00 AM, 6:00 PM - 12:00 AM', sunday: '12:00 AM - 2:00 AM' });
      // Friday 2026-06-19 11:00 PM CDT: open until 2:00 AM Saturday.
      expect(openingState(hours, 'America/Chicago', at('2026-06-20T04:00:00Z'))).toEqual(state(true, '2026-06-20T02:00:00-05:00'));
      // Exactly at Saturday midnight: still open, no change.
      expect(openingState(hours, 'America/Chicago', at('2026-06-20T05:00:00Z'))).toEqual(state(true, '2026-06-20T02:00:00-05:00'));
    });
  });

  it('takes a Date or milliseconds, and refuses an unknown zone or an invalid instant', () => {
    const t = Date.parse('2026-06-17T17:00:00Z');
    expect(openingState(NINE_TO_SIX, 'America/Denver', t)).toEqual(openingState(NINE_TO_SIX, 'America/Denver', new Date(t)));
    expect(() => openingState(NINE_TO_SIX, 'America/Nowhere', t)).toThrow(RangeError);
    expect(() => openingState(NINE_TO_SIX, 'America/Denver', new Date(NaN))).toThrow(RangeError);
  });

  it('refuses hours that the import would refuse', () => {
    expect(() => week('9:00 AM - 6:00 PM', { monday: '6:00 PM - 9:00 AM' })).toThrow('closes before it opens');
  });

  it('agrees with a minute-by-minute walk where the offset does not change', () => {
    // Random weeks in zones and dates with one offset for the 9 days the walk covers (Guam and
    // Phoenix all year, New York in June), checked against stepping through every minute.
    const zones = [
      ['Pacific/Guam', 10 * 60, Date.UTC(2026, 2, 1)],
      ['America/Phoenix', -7 * 60, Date.UTC(2026, 10, 1)],
      ['America/New_York', -4 * 60, Date.UTC(2026, 5, 1)],
    ] as const;
    const clock = (minute: number) =>
      `${((Math.floor(minute / 60) + 11) % 12) + 1}:${String(minute % 60).padStart(2, '0')} ${minute % 1440 < 720 ? 'AM' : 'PM'}`;
    // A day: up to three ranges from sorted distinct minutes of the day (0 - 1440, 1440 written 12:00 AM).
    const day = fc.uniqueArray(fc.integer({ min: 0, max: 48 }), { maxLength: 6 }).map((slots) => {
      const minutes = slots.sort((a, b) => a - b).map((slot) => slot * 30);
      const ranges: [number, number][] = [];
      for (let i = 0; i + 1 < minutes.length; i += 2) ranges.push([minutes[i], minutes[i + 1]]);
      return ranges;
    });
    fc.assert(
      fc.property(
        fc.array(day, { minLength: 7, maxLength: 7 }),
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 14 * 24 * 60 }),
        (days, [zone, offset, base], minute) => {
          const text = days.map((ranges) => (ranges.length === 0 ? 'Closed' : ranges.map(([open, close]) => `${clock(open)} - ${clock(close)}`).join(', ')));
          const hours = weeklyHours(Object.fromEntries(WEEKDAYS.map((weekday, i) => [weekday, text[i]])) as Record<Weekday, string>);
          const openAt = (t: number) => {
            const local = t / 60_000 + offset;
            const weekday = (((Math.floor(local / 1440) + 3) % 7) + 7) % 7;
            const m = ((local % 1440) + 1440) % 1440;
            return days[weekday].some(([open, close]) => open <= m && m < close);
          };
          const t = base + minute * 60_000;
          const open = openAt(t);
          let next: number | null = null;
          for (let s = t + 60_000; s <= t + 8 * 86_400_000; s += 60_000) {
            if (openAt(s) !== open) {
              next = s;
              break;
            }
          }
          const sign = offset < 0 ? '-' : '+';
          const expected =
            next === null ? null : `${new Date(next + offset * 60_000).toISOString().slice(0, 19)}${sign}${String(Math.abs(offset) / 60).padStart(2, '0')}:00`;
          expect(openingState(hours, zone, t)).toEqual(state(open, expected));
        },
      ),
      { seed: 44, numRuns: 300 },
    );
  });
});

/** A week with days that differ: each value below is worked out by hand from the calendar (2026-12-24 is a Thursday). */
function rules(
  weekly: WeeklyHours,
  { special = [], holidays = [], closure = null }: { special?: SpecialDay[]; holidays?: Array<SpecialDay & { name: string }>; closure?: Closure | null },
): DayRules {
  return { ...weekly, special: datedHours(special), holidays: datedHours(holidays), closure: closureDays(closure) };
}

describe('openingState with special days, holidays and closures', () => {
  const zone = 'America/New_York';
  const eve = { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' };
  const holiday = { date: '2026-12-24', hours: 'Closed', name: 'Christmas Eve' };
  const tenAm = at('2026-12-24T15:00:00Z'); // 10:00 AM EST

  describe('the order of precedence: a closure, the special day, the holiday, the weekday', () => {
    it('takes the weekday when nothing else holds', () => {
      const week = rules(NINE_TO_SIX, {});
      expect(openingState(week, zone, tenAm)).toEqual(state(true, '2026-12-24T18:00:00-05:00'));
      expect(hoursOfDay(week, localDay(zone, +tenAm))).toEqual({ date: '2026-12-24', hours: '9:00 AM - 6:00 PM', kind: 'weekly', holiday: null });
    });

    it('takes the holiday over the weekday, and names it', () => {
      const day = rules(NINE_TO_SIX, { holidays: [holiday] });
      expect(openingState(day, zone, tenAm)).toEqual(state(false, '2026-12-25T09:00:00-05:00'));
      expect(hoursOfDay(day, localDay(zone, +tenAm))).toEqual({ date: '2026-12-24', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Eve' });
    });

    it("takes the store's special day over the holiday", () => {
      const day = rules(NINE_TO_SIX, { special: [eve], holidays: [holiday] });
      expect(openingState(day, zone, tenAm)).toEqual(state(true, '2026-12-24T14:00:00-05:00'));
      expect(hoursOfDay(day, localDay(zone, +tenAm))).toEqual({ date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null });
    });

    it('takes a closure over all of them', () => {
      const day = rules(NINE_TO_SIX, { special: [eve], holidays: [holiday], closure: { from: '2026-12-24', until: '2026-12-24' } });
      expect(openingState(day, zone, tenAm)).toEqual(state(false, '2026-12-25T09:00:00-05:00'));
      expect(hoursOfDay(day, localDay(zone, +tenAm))).toEqual({ date: '2026-12-24', hours: 'Closed', kind: 'temporarily_closed', holiday: null });
    });
  });

  describe('a special day on both daylight-saving days (America/New_York)', () => {
    it('moves a 2:30 AM opening on 2026-03-08 to 3:30 AM EDT', () => {
      const day = rules(NINE_TO_SIX, { special: [{ date: '2026-03-08', hours: '2:30 AM - 4:00 PM' }] });
      expect(openingState(day, zone, at('2026-03-08T06:00:00Z'))).toEqual(state(false, '2026-03-08T03:30:00-04:00')); // 1:00 AM EST
      expect(openingState(day, zone, at('2026-03-08T08:00:00Z'))).toEqual(state(true, '2026-03-08T16:00:00-04:00')); // 4:00 AM EDT
    });

    it('closes a 1:30 AM closing on 2026-11-01 at the first 1:30 AM', () => {
      const day = rules(week('Closed'), { special: [{ date: '2026-11-01', hours: '12:00 AM - 1:30 AM' }] });
      expect(openingState(day, zone, at('2026-11-01T05:15:00Z'))).toEqual(state(true, '2026-11-01T01:30:00-04:00')); // 1:15 AM EDT
      // 1:15 AM EST, the second time round: closed, and the week is closed every day after.
      expect(openingState(day, zone, at('2026-11-01T06:15:00Z'))).toEqual(state(false, null));
    });
  });

  describe('a closure starting and ending at local midnight', () => {
    const allDay = week('12:00 AM - 12:00 AM');
    const july = { from: '2026-07-01', until: '2026-07-03' };

    it.each([
      ['Pacific/Honolulu', '2026-07-01T09:59:00Z', '2026-07-01T10:00:00Z', '-10:00'],
      ['America/Los_Angeles', '2026-07-01T06:59:00Z', '2026-07-01T07:00:00Z', '-07:00'],
    ])('in %s: open until the first midnight, closed until the midnight after the last day', (tz, before, after, offset) => {
      const closed = rules(allDay, { closure: july });
      expect(openingState(closed, tz, at(before))).toEqual(state(true, `2026-07-01T00:00:00${offset}`));
      expect(openingState(closed, tz, at(after))).toEqual(state(false, `2026-07-04T00:00:00${offset}`));
      expect(hoursOfDay(closed, localDay(tz, +at(after))).kind).toBe('temporarily_closed');
      expect(hoursOfDay(closed, localDay(tz, +at(before))).kind).toBe('weekly');
    });

    it('until further notice: the closing is the last change', () => {
      const closed = rules(allDay, { closure: { from: '2026-07-10', until: null } });
      expect(openingState(closed, zone, at('2026-07-09T15:00:00Z'))).toEqual(state(true, '2026-07-10T00:00:00-04:00'));
      expect(openingState(closed, zone, at('2026-07-20T15:00:00Z'))).toEqual(state(false, null));
      const nineToSix = rules(NINE_TO_SIX, { closure: { from: '2026-07-10', until: null } });
      expect(openingState(nineToSix, zone, at('2026-07-09T15:00:00Z'))).toEqual(state(true, '2026-07-09T18:00:00-04:00'));
      expect(openingState(nineToSix, zone, at('2026-07-09T23:00:00Z'))).toEqual(state(false, null));
    });

    it('finds the reopening months ahead, across the change of offset, and not past NEXT_CHANGE_DAYS', () => {
      // Closed 2026-07-01 to 2026-12-01 (a Tuesday): it opens on Wednesday 2026-12-02 at 9:00 AM EST, 154 days on.
      const months = rules(NINE_TO_SIX, { closure: { from: '2026-07-01', until: '2026-12-01' } });
      expect(openingState(months, zone, at('2026-07-05T15:00:00Z'))).toEqual(state(false, '2026-12-02T09:00:00-05:00'));
      const years = rules(NINE_TO_SIX, { closure: { from: '2026-07-01', until: '2028-01-01' } });
      expect(openingState(years, zone, at('2026-07-05T15:00:00Z'))).toEqual(state(false, null));
      expect(NEXT_CHANGE_DAYS).toBe(400);
    });
  });

  describe('12:00 AM closes a special day at midnight at its end', () => {
    it('alone: the change is at midnight', () => {
      const night = rules(week('Closed'), { special: [{ date: '2026-12-31', hours: '8:00 PM - 12:00 AM' }] });
      expect(openingState(night, zone, at('2027-01-01T02:00:00Z'))).toEqual(state(true, '2027-01-01T00:00:00-05:00'));
    });

    it('joined with a next day that opens at 12:00 AM: no change at midnight', () => {
      const night = rules(week('Closed'), {
        special: [
          { date: '2026-12-31', hours: '8:00 PM - 12:00 AM' },
          { date: '2027-01-01', hours: '12:00 AM - 1:00 AM' },
        ],
      });
      expect(openingState(night, zone, at('2027-01-01T02:00:00Z'))).toEqual(state(true, '2027-01-01T01:00:00-05:00'));
    });
  });

  it('opens a store closed every weekday on its special day, and says when it closes', () => {
    const once = rules(week('Closed'), { special: [{ date: '2026-12-06', hours: '9:00 AM - 5:00 PM' }] });
    expect(openingState(once, zone, at('2026-12-01T15:00:00Z'))).toEqual(state(false, '2026-12-06T09:00:00-05:00'));
    expect(openingState(once, zone, at('2026-12-06T15:00:00Z'))).toEqual(state(true, '2026-12-06T17:00:00-05:00'));
    expect(openingState(once, zone, at('2026-12-07T15:00:00Z'))).toEqual(state(false, null));
  });
});
