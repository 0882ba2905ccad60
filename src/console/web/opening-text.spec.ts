import { changeWords, openingText } from './opening-text.js';

// What a store's card says about now, in the store's own wall clock.
describe('console: whether a store is open, in words', () => {
  const week = (weekdays: string, saturday = weekdays, sunday = saturday) => ({
    monday: weekdays,
    tuesday: weekdays,
    wednesday: weekdays,
    thursday: weekdays,
    friday: weekdays,
    saturday,
    sunday,
  });
  const shop = week('9:00 AM - 6:00 PM', '10:00 AM - 4:00 PM', 'Closed');
  const at = (iso: string) => Date.parse(iso);

  it('says until when a store is open, and from when it opens, in its time zone (daylight saving included)', () => {
    // Wednesday 2026-03-11: Denver has been on MDT (UTC-6) since Sunday.
    expect(openingText(shop, 'America/Denver', at('2026-03-11T15:30:00Z'))).toEqual({ open: true, headline: 'Open now', until: 'closes 6:00 PM' });
    expect(openingText(shop, 'America/Denver', at('2026-03-11T14:30:00Z'))).toEqual({ open: false, headline: 'Closed', until: 'opens 9:00 AM' });
    expect(openingText(shop, 'America/Denver', at('2026-03-12T00:30:00Z'))).toEqual({ open: false, headline: 'Closed', until: 'opens Thu 9:00 AM' });
    // The same wall-clock instant a week earlier, on MST (UTC-7), is 8:30 AM: not yet open.
    expect(openingText(shop, 'America/Denver', at('2026-03-04T15:30:00Z'))).toEqual({ open: false, headline: 'Closed', until: 'opens 9:00 AM' });
    // Saturday 5:00 PM, closed on Sunday: Monday morning next.
    expect(openingText(shop, 'America/Denver', at('2026-03-14T23:00:00Z'))).toEqual({ open: false, headline: 'Closed', until: 'opens Mon 9:00 AM' });
    // The same instant is 1:00 PM in Honolulu: open.
    expect(openingText(shop, 'Pacific/Honolulu', at('2026-03-14T23:00:00Z'))).toEqual({ open: true, headline: 'Open now', until: 'closes 4:00 PM' });
  });

  it('never changing: open around the clock, or closed all week', () => {
    expect(openingText(week('12:00 AM - 12:00 AM'), 'America/New_York', at('2026-07-01T12:00:00Z'))).toEqual({ open: true, headline: 'Open around the clock' });
    expect(openingText(week('Closed'), 'America/New_York', at('2026-07-01T12:00:00Z'))).toEqual({ open: false, headline: 'Closed all week' });
  });

  it("follows the store's special days and closure, and dates a change two weeks on or more", () => {
    // Wednesday 2026-03-11 in Denver (MDT): a special day closes at 2:00 PM instead of 6:00 PM.
    const early = { ...shop, special_hours: [{ date: '2026-03-11', hours: '9:00 AM - 2:00 PM' }] };
    expect(openingText(early, 'America/Denver', at('2026-03-11T15:30:00Z'))).toEqual({ open: true, headline: 'Open now', until: 'closes 2:00 PM' });
    // Closed from that day to Tuesday 2026-03-31: it opens again on Wednesday 2026-04-01, three weeks on.
    const renovating = { ...shop, temporarily_closed: { from: '2026-03-11', until: '2026-03-31' } };
    expect(openingText(renovating, 'America/Denver', at('2026-03-11T15:30:00Z'))).toEqual({
      open: false,
      headline: 'Closed',
      until: 'opens 2026-04-01 9:00 AM',
    });
    const shut = { ...shop, temporarily_closed: { from: '2026-03-01', until: null } };
    expect(openingText(shut, 'America/Denver', at('2026-03-11T15:30:00Z'))).toEqual({ open: false, headline: 'Temporarily closed' });
  });

  it("follows the chain's holidays of the store's state, after its own special days", () => {
    // Wednesday 2026-03-11, 9:30 AM in Denver: a chain holiday closes Colorado's stores at noon.
    const colorado = { ...shop, state: 'CO' };
    const short = [{ date: '2026-03-11', name: 'Founders Day', hours: '9:00 AM - 12:00 PM', states: ['CO', 'UT'] }];
    expect(openingText(colorado, 'America/Denver', at('2026-03-11T15:30:00Z'), short)).toEqual({ open: true, headline: 'Open now', until: 'closes 12:00 PM' });
    // Not for a store of another state, nor for a store whose state the card does not know.
    expect(openingText({ ...shop, state: 'NM' }, 'America/Denver', at('2026-03-11T15:30:00Z'), short)).toEqual({
      open: true,
      headline: 'Open now',
      until: 'closes 6:00 PM',
    });
    expect(openingText(shop, 'America/Denver', at('2026-03-11T15:30:00Z'), short)).toEqual({ open: true, headline: 'Open now', until: 'closes 6:00 PM' });
    // A holiday of every state (null) closes it all day; the store's own special day wins over it.
    const closed = [{ date: '2026-03-11', name: 'Chain day off', hours: 'Closed', states: null }];
    expect(openingText(colorado, 'America/Denver', at('2026-03-11T15:30:00Z'), closed)).toEqual({
      open: false,
      headline: 'Closed',
      until: 'opens Thu 9:00 AM',
    });
    const ownDay = { ...colorado, special_hours: [{ date: '2026-03-11', hours: '9:00 AM - 2:00 PM' }] };
    expect(openingText(ownDay, 'America/Denver', at('2026-03-11T15:30:00Z'), closed)).toEqual({ open: true, headline: 'Open now', until: 'closes 2:00 PM' });
  });

  it('names the day of a change after today, and "next" for today’s weekday a week on', () => {
    // Open late on Friday and past midnight into Saturday: one period, closing on Saturday.
    const late = { ...week('Closed'), friday: '6:00 PM - 12:00 AM', saturday: '12:00 AM - 2:00 AM' };
    expect(openingText(late, 'America/Chicago', at('2026-07-11T04:00:00Z'))).toEqual({ open: true, headline: 'Open now', until: 'closes Sat 2:00 AM' });
    // Open on Wednesdays only, asked on a Wednesday evening.
    const wednesdays = { ...week('Closed'), wednesday: '9:00 AM - 5:00 PM' };
    expect(openingText(wednesdays, 'America/Chicago', at('2026-07-09T00:00:00Z'))).toEqual({
      open: false,
      headline: 'Closed',
      until: 'opens next Wed 9:00 AM',
    });
  });

  it('reads a closing at midnight as the end of today, as the hours write it', () => {
    // 11:00 PM on Wednesday in New York (EDT), open until midnight.
    expect(openingText(week('9:00 AM - 12:00 AM'), 'America/New_York', at('2026-07-02T03:00:00Z'))).toEqual({
      open: true,
      headline: 'Open now',
      until: 'closes 12:00 AM',
    });
    // An opening at midnight is the next day's: its weekday is named.
    expect(changeWords('2026-07-02T00:00:00-04:00', '2026-07-01', false)).toBe('Thu 12:00 AM');
  });

  it('writes times on the 12-hour clock of the hours', () => {
    expect(changeWords('2026-07-01T12:30:00-04:00', '2026-07-01', true)).toBe('12:30 PM');
    expect(changeWords('2026-07-01T00:15:00-04:00', '2026-07-01', false)).toBe('12:15 AM');
    expect(changeWords('2026-07-01T23:45:00-04:00', '2026-06-30', false)).toBe('Wed 11:45 PM');
  });

  it('says nothing when the zone or the hours cannot be read in this browser', () => {
    expect(openingText(shop, 'Mars/Olympus_Mons', at('2026-07-01T12:00:00Z'))).toBeUndefined();
    expect(openingText(week('9 to 5'), 'America/New_York', at('2026-07-01T12:00:00Z'))).toBeUndefined();
  });
});
