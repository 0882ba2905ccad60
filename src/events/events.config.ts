import { registerAs } from '@nestjs/config';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { IntegerSetting, validateSettings } from '../config/environment.js';

/** Change events: where they are published, and how many may wait. */
export class EventsSettings {
  /**
   * NATS server(s) with JetStream that change events are published to (`nats://host:4222`, a comma
   * list for a cluster; credentials in the URL). Unset: no events, no outbox rows. Or
   * `EVENTS_NATS_URL_FILE`. See [Change events](events.md).
   */
  @IsOptional()
  @Matches(/^(nats|tls):\/\/\S+$/, { message: 'EVENTS_NATS_URL must look like nats://host:4222 (a comma list for several servers)' })
  EVENTS_NATS_URL?: string;

  /** The JetStream stream of the events, created if missing with the subjects `<EVENTS_SUBJECT_PREFIX>.>`. */
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'EVENTS_STREAM must be 1 to 64 letters, digits, _ or -' })
  EVENTS_STREAM = 'PLANTSTORE';

  /** First token of every event subject: `plantstore.<team>.plant.created`, `plantstore.stores.changed`. */
  @Matches(/^[a-z0-9_-]{1,32}$/, { message: 'EVENTS_SUBJECT_PREFIX must be 1 to 32 lowercase letters, digits, _ or -' })
  EVENTS_SUBJECT_PREFIX = 'plantstore';

  /**
   * Most events waiting in the outbox (the broker unreachable): at this many, writes that would add
   * one are refused with 503 rather than dropping events.
   */
  @IntegerSetting(100, 100_000_000)
  EVENTS_OUTBOX_MAX_ROWS = 100_000;

  /** How often the relay looks for events to publish (it also starts at once after a write of this instance). */
  @IntegerSetting(50, 60_000)
  EVENTS_RELAY_INTERVAL_MS = 1000;

  /**
   * Copies of the stream the relay creates (JetStream's `num_replicas`): 1 for a single server, 3 for
   * a cluster of three, so that losing a node loses neither events nor the stream. An existing stream
   * is used as it is (a warning names each setting it differs in). See [Change events](events.md).
   */
  @IntegerSetting(1, 5)
  EVENTS_STREAM_REPLICAS = 1;

  /** How long the stream the relay creates keeps an event (`max_age`): a number and s, m, h or d; `0` keeps them for ever. */
  @Matches(/^(0|[1-9]\d{0,5}[smhd])$/, { message: 'EVENTS_STREAM_MAX_AGE must be 0 or a number with s, m, h or d, e.g. 7d' })
  EVENTS_STREAM_MAX_AGE = '7d';

  /** Most bytes the stream the relay creates holds (`max_bytes`): a number with KiB, MiB, GiB or TiB; unset: no bound but the age. */
  @IsOptional()
  @Matches(/^[1-9]\d{0,9}(KiB|MiB|GiB|TiB)?$/, {
    message: 'EVENTS_STREAM_MAX_BYTES must be a number of bytes, optionally with KiB, MiB, GiB or TiB, e.g. 10GiB',
  })
  EVENTS_STREAM_MAX_BYTES?: string;

  /**
   * What the stream the relay creates does when EVENTS_STREAM_MAX_BYTES is reached: `old` drops its
   * oldest events (a consumer that far behind misses them), `new` refuses new ones (they wait in the
   * outbox, and writes get 503 at EVENTS_OUTBOX_MAX_ROWS, until room is made).
   */
  @IsIn(['old', 'new'], { message: 'EVENTS_STREAM_DISCARD must be old or new' })
  EVENTS_STREAM_DISCARD: 'old' | 'new' = 'old';
}

const NS = { s: 1e9, m: 60e9, h: 3600e9, d: 86_400e9 } as const;
const BYTES = { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40 } as const;

/** EVENTS_STREAM_MAX_AGE in nanoseconds, JetStream's unit; 0: no limit. */
export function maxAgeNanos(value: string): number {
  const unit = value.at(-1) as keyof typeof NS;
  return value === '0' ? 0 : Number(value.slice(0, -1)) * NS[unit];
}

/** EVENTS_STREAM_MAX_BYTES in bytes; -1 (JetStream's "no limit") when unset. */
export function maxBytes(value: string | undefined): number {
  if (!value) return -1;
  const [, digits, unit] = /^(\d+)(KiB|MiB|GiB|TiB)?$/.exec(value)!;
  return Number(digits) * (unit ? BYTES[unit as keyof typeof BYTES] : 1);
}

export const eventsConfig = registerAs('events', () => validateSettings(EventsSettings));
