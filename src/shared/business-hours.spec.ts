import { hoursProblem, hoursRanges } from './business-hours.js';

describe('hoursProblem', () => {
  it.each(['Closed', '9:00 AM - 6:00 PM', '9:00 AM - 12:00 PM, 1:00 PM - 5:00 PM', '12:00 AM - 12:00 AM', '6:30 PM - 12:00 AM'])('accepts %s', (text) =>
    expect(hoursProblem(text)).toBeNull(),
  );

  it.each([
    ['closed', 'not a time range'],
    ['09:00 AM - 6:00 PM', 'not a time range'],
    ['9:00AM - 6:00PM', 'not a time range'],
    ['9:00 AM-6:00 PM', 'not a time range'],
    ['13:00 PM - 6:00 PM', 'not a time range'],
    ['9:00 AM - 6:00 PM,1:00 PM - 5:00 PM', 'not a time range'],
    ['6:00 PM - 9:00 AM', 'closes before it opens'],
    ['9:00 AM - 9:00 AM', 'closes before it opens'],
    ['9:00 AM - 1:00 PM, 12:00 PM - 5:00 PM', 'overlaps'],
    ['', 'not a time range'],
  ])('refuses %j', (text, reason) => expect(hoursProblem(text)).toContain(reason));

  it('answers the same from its kept answers, and after emptying them when full', () => {
    // 3,000 texts (the kept answers hold 1,024): every tenth refused, each checked three times.
    const texts = Array.from({ length: 3000 }, (_, i) => {
      const [hour, minute] = [1 + (i % 11), String(i % 60).padStart(2, '0')];
      return i % 10 === 0 ? `${hour}:${minute} PM - ${hour}:${minute} AM` : `${hour}:${minute} AM - ${hour}:${minute} PM`;
    });
    for (let round = 0; round < 3; round++)
      texts.forEach((text, i) => (i % 10 === 0 ? expect(hoursProblem(text)).toContain('closes before it opens') : expect(hoursProblem(text)).toBeNull()));
    // A text longer than a day's column is answered without being kept, and answered the same again.
    const long = Array.from({ length: 12 }, (_, i) => `${i + 1}:00 AM - ${i + 1}:30 AM`).join(', ');
    expect(long.length).toBeGreaterThan(200);
    expect(hoursProblem(long)).toContain('precedes');
    expect(hoursProblem(long)).toContain('precedes');
  });
});

describe('hoursRanges', () => {
  it.each([
    ['Closed', []],
    ['9:00 AM - 6:00 PM', [[540, 1080]]],
    [
      '9:00 AM - 12:00 PM, 1:00 PM - 5:00 PM',
      [
        [540, 720],
        [780, 1020],
      ],
    ],
    ['12:00 AM - 12:00 AM', [[0, 1440]]],
    ['6:30 PM - 12:00 AM', [[1110, 1440]]],
    ['12:30 AM - 12:59 PM', [[30, 779]]],
  ])('reads %s as minutes after midnight', (text, ranges) => expect(hoursRanges(text)).toEqual(ranges));

  it('throws with the reason hoursProblem gives', () => {
    expect(() => hoursRanges('6:00 PM - 9:00 AM')).toThrow('closes before it opens');
  });
});
