import { registerAs } from '@nestjs/config';
import { IsOptional, Matches } from 'class-validator';
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
}

export const eventsConfig = registerAs('events', () => validateSettings(EventsSettings));
