import { JetStreamApiError, type JetStreamManager, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { checkStream, differences, DUPLICATE_WINDOW_NS, type WantedStream } from './event-stream.js';
import { maxAgeNanos, maxBytes } from './events.config.js';

const wanted: WantedStream = { name: 'PLANTSTORE', subjects: ['plantstore.>'], replicas: 3, maxAgeNs: 7 * 86_400e9, maxBytes: -1, discard: 'old' };
const config = (overrides: Partial<StreamConfig> = {}) =>
  ({
    name: 'PLANTSTORE',
    subjects: ['plantstore.>'],
    num_replicas: 3,
    max_age: 7 * 86_400e9,
    max_bytes: -1,
    discard: 'old',
    storage: 'file',
    duplicate_window: DUPLICATE_WINDOW_NS,
    ...overrides,
  }) as StreamConfig;
const info = (c: StreamConfig) =>
  ({
    config: c,
    state: { messages: 4, bytes: 900 },
    cluster: { leader: 'n1', replicas: [{ name: 'n2', current: true, offline: false, active: 2_000_000, lag: 0 }] },
  }) as unknown as StreamInfo;
const notFound = () => new JetStreamApiError({ code: 404, err_code: 10059, description: 'stream not found' });

/** A JetStream manager whose stream API answers as given. */
const manager = (streams: { info: () => Promise<StreamInfo>; add?: (c: StreamConfig) => Promise<StreamInfo> }) => ({ streams }) as unknown as JetStreamManager;

describe('the event stream settings', () => {
  it('read EVENTS_STREAM_MAX_AGE and EVENTS_STREAM_MAX_BYTES in JetStream units', () => {
    expect(maxAgeNanos('7d')).toBe(7 * 86_400 * 1e9);
    expect(maxAgeNanos('90m')).toBe(90 * 60 * 1e9);
    expect(maxAgeNanos('0')).toBe(0);
    expect(maxBytes(undefined)).toBe(-1);
    expect(maxBytes('10GiB')).toBe(10 * 2 ** 30);
    expect(maxBytes('4096')).toBe(4096);
  });
});

describe('checkStream', () => {
  it('creates a missing stream as the settings say', async () => {
    const added: StreamConfig[] = [];
    const found = await checkStream(
      manager({
        info: () => Promise.reject(notFound()),
        add: (c) => (added.push(c), Promise.resolve(info(config()))),
      }),
      { ...wanted, maxBytes: 2 ** 20, discard: 'new' },
    );
    expect(added).toEqual([
      expect.objectContaining({
        name: 'PLANTSTORE',
        subjects: ['plantstore.>'],
        num_replicas: 3,
        max_age: 7 * 86_400e9,
        max_bytes: 2 ** 20,
        discard: 'new',
        storage: 'file',
        duplicate_window: DUPLICATE_WINDOW_NS,
      }),
    ]);
    expect(found).toEqual({
      usable: true,
      created: true,
      differences: [],
      state: { replicas: 3, messages: 4, bytes: 900, leader: 'n1', followers: [{ name: 'n2', current: true, offline: false, lag: 0, active_ms: 2 }] },
    });
  });

  it('names the broker refusing the creation (another stream takes overlapping subjects) as a problem', async () => {
    const overlap = new JetStreamApiError({ code: 400, err_code: 10065, description: 'subjects overlap with an existing stream' });
    const found = await checkStream(manager({ info: () => Promise.reject(notFound()), add: () => Promise.reject(overlap) }), wanted);
    expect(found).toEqual({
      usable: false,
      problem: expect.stringMatching(/^the JetStream stream PLANTSTORE could not be created: .*subjects overlap.* \(error 10065\)$/),
    });
  });

  it.each([
    [['plantstore.>'], true],
    [['>'], true],
    [['plantstore.*', 'plantstore.>'], true],
    [['other.>'], false],
    [['plantstore.*'], false],
    [['plantstore.acme.>'], false],
  ])('a stream of subjects %j takes plantstore.>: %s', async (subjects, usable) => {
    const found = await checkStream(manager({ info: () => Promise.resolve(info(config({ subjects }))) }), wanted);
    expect(found.usable).toBe(usable);
    if (!found.usable) expect(found.problem).toContain('does not take the subjects plantstore.>');
  });

  it('throws what is no answer of the API (a cluster without a leader times out): the relay asks again', async () => {
    await expect(checkStream(manager({ info: () => Promise.reject(new Error('TIMEOUT')) }), wanted)).rejects.toThrow('TIMEOUT');
  });
});

describe('differences', () => {
  it('none for a stream as the settings say', () => {
    expect(differences(config(), wanted)).toEqual([]);
  });

  it('names each setting an existing stream differs in', () => {
    expect(
      differences(config({ num_replicas: 1, max_age: 0, max_bytes: 1024, discard: 'new' as never, storage: 'memory' as never, duplicate_window: 1e9 }), wanted),
    ).toEqual([
      'replicas 1 (EVENTS_STREAM_REPLICAS=3)',
      'max age unlimited (EVENTS_STREAM_MAX_AGE: 7d)',
      'max bytes 1024 bytes (EVENTS_STREAM_MAX_BYTES: unlimited)',
      'discard new (EVENTS_STREAM_DISCARD=old)',
      'storage memory (file)',
      'duplicate window 1s (at least 120s: a batch sent again after a failure may be stored twice)',
    ]);
  });
});
