import {
  closureProblems,
  closureText,
  dayNumber,
  parseClosure,
  parseSpecialDays,
  specialDaysProblems,
  specialDaysText,
  SPECIAL_DAYS_MAX,
} from './special-days.js';

describe('special days and closures', () => {
  it('takes calendar dates from 2000 to 2199 only', () => {
    expect(dayNumber('1970-01-02')).toBeUndefined();
    expect(dayNumber('2026-12-24')).toBe(Date.UTC(2026, 11, 24) / 86_400_000);
    expect(dayNumber('2028-02-29')).toBeDefined();
    for (const bad of ['2027-02-29', '2026-13-01', '2026-12-32', '2026-1-5', '0226-12-24', '2200-01-01', ' 2026-12-24']) expect(dayNumber(bad)).toBeUndefined();
  });

  it('names every problem of a list by its 0-based path', () => {
    expect(
      specialDaysProblems([
        { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' },
        { date: '2026-13-01', hours: '9 to 5' },
        { date: '2026-12-24', hours: 'Closed', note: 'x' },
        'Closed',
      ]),
    ).toEqual([
      { path: '[1].date', reason: '"2026-13-01" is not a calendar date from 2000 to 2199' },
      { path: '[1].hours', reason: '"9 to 5" is not a time range like "9:00 AM - 6:00 PM" (or "Closed")' },
      { path: '[2].note', reason: 'is not a field of a special day' },
      { path: '[2].date', reason: '2026-12-24 is already at [0]' },
      { path: '[3]', reason: 'must be an object {"date", "hours"}' },
    ]);
    expect(specialDaysProblems(Array.from({ length: SPECIAL_DAYS_MAX + 1 }, () => ({})))).toEqual([{ path: '', reason: 'has 401 days, more than 400' }]);
    expect(specialDaysProblems({})).toEqual([{ path: '', reason: 'must be a list of {"date", "hours"}' }]);
  });

  it('checks a closure: dates, the order of the two, and null for until further notice', () => {
    expect(closureProblems(null)).toEqual([]);
    expect(closureProblems({ from: '2027-01-04', until: null })).toEqual([]);
    expect(closureProblems({ from: '2027-01-04', until: '2027-01-04' })).toEqual([]);
    expect(closureProblems({ from: '2027-01-04', until: '2027-01-03' })).toEqual([{ path: '.until', reason: '2027-01-03 is before from (2027-01-04)' }]);
    expect(closureProblems({ from: '2027-01-04' })).toEqual([{ path: '.until', reason: 'is required: a date, or null for until further notice' }]);
    expect(closureProblems({ from: 5, until: null, why: 'x' })).toEqual([
      { path: '.why', reason: 'is not a field of a closure' },
      { path: '.from', reason: 'must be a date YYYY-MM-DD' },
    ]);
    expect(closureProblems('2027-01-04/..')).toEqual([{ path: '', reason: 'must be null or {"from", "until"}' }]);
  });

  it('writes one text form, by date, and reads it back the same', () => {
    const days = [
      { date: '2026-12-25', hours: 'Closed' },
      { date: '2026-12-24', hours: '9:00 AM - 2:00 PM, 3:00 PM - 12:00 AM' },
    ];
    const text = specialDaysText(days);
    expect(text).toBe('2026-12-24=9:00 AM - 2:00 PM, 3:00 PM - 12:00 AM; 2026-12-25=Closed');
    expect(parseSpecialDays(text)).toEqual({ days: [days[1], days[0]] });
    expect(parseSpecialDays(' 2026-12-25 = Closed ;2026-12-24=9:00 AM - 2:00 PM, 3:00 PM - 12:00 AM ')).toEqual({ days: [days[1], days[0]] });
    expect(parseSpecialDays('')).toEqual({ days: [] });
    expect(closureText({ from: '2027-01-04', until: null })).toBe('2027-01-04/..');
    expect(parseClosure('2027-01-04/..')).toEqual({ closure: { from: '2027-01-04', until: null } });
    expect(parseClosure(' 2027-01-04 / 2027-01-31 ')).toEqual({ closure: { from: '2027-01-04', until: '2027-01-31' } });
    expect(parseClosure('')).toEqual({ closure: null });
  });

  it('says which entry of a cell is wrong, counting from 1', () => {
    expect(parseSpecialDays('2026-12-24=Closed; 2026-12-24=Closed')).toEqual({ reason: 'day 2: 2026-12-24 appears twice' });
    expect(parseSpecialDays('2026-12-24=Closed; Christmas')).toEqual({ reason: 'day 2 ("Christmas") is not like 2026-12-24=9:00 AM - 2:00 PM' });
    expect(parseSpecialDays('2026-12-24=9 AM - 2 PM')).toEqual({
      reason: 'day 1 (2026-12-24): "9 AM - 2 PM" is not a time range like "9:00 AM - 6:00 PM" (or "Closed")',
    });
    expect(parseClosure('2027-01-04')).toEqual({ reason: '"2027-01-04" is not like 2027-01-04/2027-01-31, or 2027-01-04/.. until further notice' });
    expect(parseClosure('2027-01-04/2027-01-01')).toEqual({ reason: 'until 2027-01-01 is before from (2027-01-04)' });
    expect(parseClosure('2027-01-04/')).toEqual({ reason: 'until "" is not a date like 2026-12-24 (YYYY-MM-DD)' });
  });
});
