import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  StorageType,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { maxAgeNanos, maxBytes, type EventsSettings } from './events.config.js';

/** The broker's de-duplication window (Nats-Msg-Id) of the stream the relay creates: resends after a failed batch fall within it. */
export const DUPLICATE_WINDOW_NS = 2 * 60 * 1e9;

/** What the relay wants of its stream, from the settings. */
export interface WantedStream {
  name: string;
  subjects: string[];
  replicas: number;
  maxAgeNs: number;
  maxBytes: number;
  discard: 'old' | 'new';
}

export function wantedStream(events: EventsSettings): WantedStream {
  return {
    name: events.EVENTS_STREAM,
    subjects: [`${events.EVENTS_SUBJECT_PREFIX}.>`],
    replicas: events.EVENTS_STREAM_REPLICAS,
    maxAgeNs: maxAgeNanos(events.EVENTS_STREAM_MAX_AGE),
    maxBytes: maxBytes(events.EVENTS_STREAM_MAX_BYTES),
    discard: events.EVENTS_STREAM_DISCARD,
  };
}

/** The stream's state as the status page shows it: JetStream's own figures and the cluster's view of each copy. */
export interface StreamState {
  replicas: number;
  messages: number;
  bytes: number;
  /** The node that leads the stream; null on a single server, or while the cluster has no leader for it. */
  leader: string | null;
  /** Each copy other than the leader's: whether it is caught up, how far behind, how long since the leader heard from it. */
  followers: Array<{ name: string; current: boolean; offline: boolean; lag: number; active_ms: number }>;
}

export type StreamCheck =
  /** The stream takes the relay's subjects: `created` now, and where it differs from the settings, how. */
  | { usable: true; created: boolean; differences: string[]; state: StreamState }
  /** The relay cannot publish to it, and why, in words an operator acts on. */
  | { usable: false; problem: string };

/**
 * Looks the stream up and creates it as the settings say when it is missing. A definite answer that
 * the relay cannot use it (another stream's subjects overlap, the stream takes other subjects, the
 * broker refuses the settings) is a `problem`; an API that does not answer in time (no meta leader,
 * no quorum) throws, and the relay asks again later.
 */
export async function checkStream(manager: JetStreamManager, wanted: WantedStream): Promise<StreamCheck> {
  let info: StreamInfo;
  let created = false;
  try {
    info = await manager.streams.info(wanted.name);
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    try {
      info = await manager.streams.add({
        name: wanted.name,
        subjects: wanted.subjects,
        num_replicas: wanted.replicas,
        max_age: wanted.maxAgeNs,
        max_bytes: wanted.maxBytes,
        discard: wanted.discard === 'new' ? DiscardPolicy.New : DiscardPolicy.Old,
        storage: StorageType.File,
        duplicate_window: DUPLICATE_WINDOW_NS,
      });
      created = true;
    } catch (refused) {
      if (!(refused instanceof JetStreamApiError)) throw refused;
      return { usable: false, problem: `the JetStream stream ${wanted.name} could not be created: ${refused.message} (error ${refused.code})` };
    }
  }
  const missing = wanted.subjects.filter((subject) => !takes(info.config.subjects ?? [], subject));
  if (missing.length > 0) {
    return {
      usable: false,
      problem: `the JetStream stream ${wanted.name} does not take the subjects ${missing.join(', ')} (its subjects: ${(info.config.subjects ?? []).join(', ') || 'none'}): set EVENTS_STREAM or EVENTS_SUBJECT_PREFIX to a stream of this service's own`,
    };
  }
  return { usable: true, created, differences: created ? [] : differences(info.config, wanted), state: stateOf(info) };
}

/** The stream's figures, for the status page. */
export function stateOf(info: StreamInfo): StreamState {
  return {
    replicas: info.config.num_replicas,
    messages: info.state.messages,
    bytes: info.state.bytes,
    leader: info.cluster?.leader ?? null,
    followers: (info.cluster?.replicas ?? []).map((peer) => ({
      name: peer.name,
      current: peer.current,
      offline: peer.offline ?? false,
      lag: peer.lag ?? 0,
      active_ms: Math.round((peer.active ?? 0) / 1e6),
    })),
  };
}

/** Whether a stream of `subjects` stores `wanted` (a subject filter of the relay's, such as `plantstore.>`). */
function takes(subjects: string[], wanted: string): boolean {
  const want = wanted.split('.');
  return subjects.some((subject) => {
    const have = subject.split('.');
    for (let i = 0; i < have.length; i++) {
      if (have[i] === '>') return true;
      if (i >= want.length || want[i] === '>' || (have[i] !== '*' && have[i] !== want[i])) return false;
    }
    return have.length === want.length;
  });
}

const duration = (ns: number) => (ns === 0 ? 'unlimited' : ns % 86_400e9 === 0 ? `${ns / 86_400e9}d` : ns % 3600e9 === 0 ? `${ns / 3600e9}h` : `${ns / 1e9}s`);
const size = (bytes: number) => (bytes < 0 ? 'unlimited' : `${bytes} bytes`);

/** Each setting an existing stream differs in, as "what it has (what the setting says)". */
export function differences(config: StreamConfig, wanted: WantedStream): string[] {
  const found: string[] = [];
  const differs = (what: string, has: string, setting: string) => found.push(`${what} ${has} (${setting})`);
  if (config.num_replicas !== wanted.replicas) differs('replicas', String(config.num_replicas), `EVENTS_STREAM_REPLICAS=${wanted.replicas}`);
  if (config.max_age !== wanted.maxAgeNs) differs('max age', duration(config.max_age), `EVENTS_STREAM_MAX_AGE: ${duration(wanted.maxAgeNs)}`);
  if (config.max_bytes !== wanted.maxBytes) differs('max bytes', size(config.max_bytes), `EVENTS_STREAM_MAX_BYTES: ${size(wanted.maxBytes)}`);
  if (config.max_bytes >= 0 && String(config.discard) !== wanted.discard) differs('discard', String(config.discard), `EVENTS_STREAM_DISCARD=${wanted.discard}`);
  if (String(config.storage) !== 'file') differs('storage', String(config.storage), 'file');
  if (config.duplicate_window < DUPLICATE_WINDOW_NS)
    differs(
      'duplicate window',
      duration(config.duplicate_window),
      `at least ${duration(DUPLICATE_WINDOW_NS)}: a batch sent again after a failure may be stored twice`,
    );
  return found;
}
