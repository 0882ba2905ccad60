/**
 * The one format of a day's hours (stores CSV and API alike): `Closed`, or one or more
 * ranges `9:00 AM - 6:00 PM` joined by `, `, each opening before it closes, in order and
 * not overlapping. A closing time of `12:00 AM` means midnight at the end of the day.
 */
const RANGE = /^(1[0-2]|[1-9]):([0-5][0-9]) (AM|PM) - (1[0-2]|[1-9]):([0-5][0-9]) (AM|PM)$/;

export const CLOSED = 'Closed';

function minutes(hour: string, minute: string, meridiem: string): number {
  return ((Number(hour) % 12) + (meridiem === 'PM' ? 12 : 0)) * 60 + Number(minute);
}

/** A day's opening range in minutes after midnight: opens at `open`, closes at `close` (1440 for midnight at the end). */
export type MinuteRange = readonly [open: number, close: number];

/**
 * hoursProblem's answers by text. A chain's stores share a few weeks of hours, and an import checks
 * seven days of each row, in each of its passes: a regular expression's match and a list of ranges
 * a day, 3.7 KB of garbage a row (bench:import-allocations), now a look-up. Only texts as short as
 * a day's column allows are kept (a longer one is refused anyway), and the map is emptied when it
 * is full: a file whose every row has hours of its own costs what it did.
 */
const answers = new Map<string, string | null>();
const ANSWERS_MAX = 1024;
const KEPT_TEXT_MAX = 200;

/** Why `text` is not a valid day's hours, or null when it is. */
export function hoursProblem(text: string): string | null {
  const known = answers.get(text);
  if (known !== undefined) return known;
  const ranges = parse(text);
  const problem = typeof ranges === 'string' ? ranges : null;
  if (text.length <= KEPT_TEXT_MAX) {
    if (answers.size === ANSWERS_MAX) answers.clear();
    answers.set(text, problem);
  }
  return problem;
}

/** The ranges of a valid day's hours, in order (none for `Closed`); throws on text that hoursProblem refuses. */
export function hoursRanges(text: string): MinuteRange[] {
  const ranges = parse(text);
  if (typeof ranges === 'string') throw new Error(ranges);
  return ranges;
}

function parse(text: string): MinuteRange[] | string {
  if (text === CLOSED) return [];
  const ranges: MinuteRange[] = [];
  let previousClose = -1;
  for (const range of text.split(', ')) {
    const match = RANGE.exec(range);
    if (!match) return `"${range}" is not a time range like "9:00 AM - 6:00 PM" (or "Closed")`;
    const open = minutes(match[1], match[2], match[3]);
    let close = minutes(match[4], match[5], match[6]);
    if (close === 0) close = 24 * 60;
    if (open >= close) return `"${range}" closes before it opens`;
    if (open < previousClose) return `"${range}" overlaps or precedes the range before it`;
    previousClose = close;
    ranges.push([open, close]);
  }
  return ranges;
}
