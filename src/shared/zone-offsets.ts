/**
 * A time zone's UTC offsets over a few weeks, read once from Intl and then used with plain
 * arithmetic: the offset at an instant, the instant of a wall-clock time (daylight saving
 * included) and RFC 3339 text with the zone's offset. Intl is slow per call (microseconds), and
 * the search asks about thousands of stores in a handful of zones, so each zone's offsets are
 * worked out once for a window around the instant asked about and kept.
 *
 * Times here are milliseconds since 1970. A "local" time is a wall-clock time counted as if it
 * were UTC: 2026-03-08 02:30 in New York is Date.UTC(2026, 2, 8, 2, 30), whatever the zone.
 */
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Offsets are sampled this often, so two changes of offset closer than this would be missed (no zone has them). */
const STEP = 6 * HOUR;
/** A window reaches this far back and ahead of the instant it was made for... */
const BEFORE = 2 * DAY;
const AHEAD = 40 * DAY;
/** ...and is used again while the instant asked about has at least this much of it on either side. */
const MARGIN_BEFORE = 2 * DAY;
const MARGIN_AHEAD = 12 * DAY;

const OFFSET = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

export class ZoneOffsets {
  private constructor(
    readonly zone: string,
    readonly from: number,
    readonly to: number,
    /** starts[i] is the first instant at which offsets[i] (ms, local minus UTC) applies; starts[0] is `from`. */
    private readonly starts: number[],
    private readonly offsets: number[],
  ) {}

  /** The offsets of `zone` from about 2 days before `at` to 40 days after it; a RangeError for a zone Intl does not know. */
  static around(zone: string, at: number): ZoneOffsets {
    const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    const offsetAt = (t: number) => parseOffset(format.format(t));
    const from = Math.floor((at - BEFORE) / HOUR) * HOUR;
    const to = from + BEFORE + AHEAD;
    const starts = [from];
    const offsets = [offsetAt(from)];
    for (let previous = from, t = from + STEP; t <= to; previous = t, t += STEP) {
      let offset = offsetAt(t);
      // One or more changes in (previous, t]: find each by halving, to the minute (changes fall on whole minutes).
      while (offset !== offsets[offsets.length - 1]) {
        let low = previous;
        let high = t;
        while (high - low > MINUTE) {
          const middle = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
          if (offsetAt(middle) === offsets[offsets.length - 1]) low = middle;
          else high = middle;
        }
        starts.push(high);
        offsets.push(offsetAt(high));
        previous = high;
        offset = offsetAt(t);
      }
    }
    return new ZoneOffsets(zone, from, to, starts, offsets);
  }

  /** Whether this window serves questions about the instant `at` (and the days after it). */
  covers(at: number): boolean {
    return at - MARGIN_BEFORE >= this.from && at + MARGIN_AHEAD <= this.to;
  }

  /** The zone's offset at `t` in ms (local minus UTC: -5 hours in New York in winter). */
  offsetAt(t: number): number {
    let i = this.starts.length - 1;
    while (i > 0 && t < this.starts[i]) i--;
    return this.offsets[i];
  }

  /**
   * The instant of the wall-clock time `local`, disambiguated as Temporal's "compatible" does (and
   * as most calendars do): a time that occurs twice when clocks fall back is the earlier one
   * (1:30 AM on 2026-11-01 in New York is 1:30 EDT); a time that does not exist because clocks
   * spring forward is moved later by the gap (2:30 AM on 2026-03-08 in New York is 3:30 EDT).
   */
  instantOf(local: number): number {
    const { starts, offsets } = this;
    for (let i = 0; i < offsets.length; i++) {
      // The first (earliest) period whose offset puts `local` inside it. The first and last periods
      // are taken as reaching back and on for ever: outside the window the offset is assumed not to change.
      const t = local - offsets[i];
      if ((i === 0 || t >= starts[i]) && (i === offsets.length - 1 || t < starts[i + 1])) return t;
    }
    // In no period: `local` falls in a gap, the hour skipped when the offset grew at some starts[i].
    // With the offset from before the change it lands that many minutes after the change.
    for (let i = 1; i < offsets.length; i++) {
      if (local >= starts[i] + offsets[i - 1] && local < starts[i] + offsets[i]) return local - offsets[i - 1];
    }
    throw new Error(`no instant found for a wall-clock time in ${this.zone}`); // unreachable: every local time is in a period or a gap
  }

  /**
   * `t` as RFC 3339 with the zone's offset at that instant: 2026-03-08T09:00:00-04:00. Kept per
   * instant: making the text costs about a microsecond, five times all the rest of an opening-hours
   * answer, and the stores of a zone mostly share their next change (9:00 AM, 6:00 PM).
   */
  format(t: number): string {
    let text = this.texts.get(t);
    if (text === undefined) {
      if (this.texts.size >= 4096) this.texts.clear();
      text = this.write(t);
      this.texts.set(t, text);
    }
    return text;
  }

  private readonly texts = new Map<number, string>();

  private write(t: number): string {
    const offset = this.offsetAt(t);
    const local = new Date(t + offset).toISOString(); // 2026-03-08T09:00:00.000Z, in local time
    const minutes = Math.round(Math.abs(offset) / MINUTE);
    return `${local.slice(0, 19)}${offset < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  }
}

/** The window of `zone` around `at`, made once and kept while it covers the instants asked about (one per zone). */
export function zoneOffsets(zone: string, at: number): ZoneOffsets {
  const known = windows.get(zone);
  if (known?.covers(at)) return known;
  const made = ZoneOffsets.around(zone, at);
  windows.set(zone, made);
  return made;
}

/** At most one window per zone name Intl accepted (a few hundred at most): no eviction needed. */
const windows = new Map<string, ZoneOffsets>();

/** "1/1/2026, GMT-05:00" (Intl's longOffset) to -5 hours in ms; "GMT" alone is UTC. */
function parseOffset(text: string): number {
  const match = OFFSET.exec(text);
  if (!match) throw new Error(`unexpected offset text from Intl: ${text}`);
  if (!match[1]) return 0;
  const ms = (Number(match[2]) * 60 + Number(match[3])) * MINUTE + Number(match[4] ?? 0) * 1000;
  return match[1] === '-' ? -ms : ms;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}
