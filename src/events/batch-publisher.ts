import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

export interface OutgoingEvent {
  subject: string;
  payload: string;
  /** The broker's de-duplication key (`Nats-Msg-Id`): the CloudEvents id. */
  id: string;
}

export interface BatchOutcome {
  /** How many events, from the first, the stream stored (or had already: a duplicate within its window). */
  acked: number;
  /** Why the first of the others was not acknowledged. */
  error?: string;
  /** That first one got no answer at all (the timeout, or the connection lost): the server, not the stream, failed. */
  silent?: boolean;
}

/** Not yet answered; otherwise '' (stored) or why not. */
type Answer = string | undefined;

interface Batch {
  /** The sequence number of its first event. */
  first: number;
  answers: Answer[];
  waiting: number;
  done: () => void;
  /** Ended by the connection's loss rather than by answers. */
  lost?: boolean;
}

/**
 * Publishes batches of events to JetStream on one connection, every event of a batch in flight at
 * once, with one subscription (`<inbox>.*`) taking all their acknowledgements, as the Go client's
 * PublishAsync does. A JetStream publish is a core NATS publish with a reply subject, which the
 * stream answers with a PubAck (`{"stream":…,"seq":…}`) or an error (`{"error":{…}}`), or the
 * server with a 503 status when no stream takes the subject. The client's `js.publish` makes each
 * one a request of its own (a promise, a timer, an entry in a map, and on every success an Error
 * with its stack for the request it then cancels): under write load that was the larger part of
 * what relaying an event cost the process (docs/performance.md, "Change events at the write rate").
 *
 * One batch at a time; an answer to an earlier batch (one that timed out) is recognised by its
 * sequence number and ignored. The connection's loss fails the batch at once.
 */
export class BatchPublisher {
  private readonly inbox = createInbox();
  private readonly subscription: Subscription;
  /** Sequence number of the next event published on this connection (the last token of its reply subject). */
  private next = 0;
  private batch?: Batch;
  /** How a PubAck of the stream starts (`{"stream":"<name>"`), made once. */
  private readonly ack: string;

  /** `stream`: the stream the events are for; an acknowledgement from another (whose subjects overlap) is a refusal. */
  constructor(
    private readonly connection: NatsConnection,
    private readonly timeoutMs: number,
    private readonly stream: string,
  ) {
    this.ack = `{"stream":${JSON.stringify(stream)}`;
    this.subscription = connection.subscribe(`${this.inbox}.*`, { callback: (error, msg) => this.answer(error, msg) });
    void connection.closed().then(() => this.failAll('the connection to the broker closed'));
  }

  /** `timeoutMs`: for this batch, instead of the publisher's. */
  async publish(events: OutgoingEvent[], timeoutMs = this.timeoutMs): Promise<BatchOutcome> {
    if (this.batch) throw new Error('BatchPublisher: one batch at a time');
    const answers: Answer[] = new Array<Answer>(events.length).fill(undefined);
    const first = this.next;
    this.next += events.length;
    let timer: NodeJS.Timeout | undefined;
    const batch: Batch = { first, answers, waiting: events.length, done: () => undefined };
    const settled = new Promise<void>((resolve) => {
      batch.done = resolve;
      timer = setTimeout(resolve, timeoutMs);
    });
    this.batch = batch;
    try {
      if (this.connection.isClosed()) this.failAll('the connection to the broker closed');
      for (let i = 0; i < events.length; i++) {
        const { subject, payload, id } = events[i];
        const h = headers();
        h.set('Nats-Msg-Id', id);
        this.connection.publish(subject, payload, { reply: `${this.inbox}.${first + i}`, headers: h });
      }
      if (batch.waiting > 0) await settled;
    } catch (error) {
      // publish() throws on a closed connection or a payload over the server's limit: the rest of the batch is not sent.
      const reason = error instanceof Error ? error.message : String(error);
      for (let i = 0; i < answers.length; i++) answers[i] ??= reason;
    } finally {
      clearTimeout(timer);
      this.batch = undefined;
    }
    let acked = 0;
    while (acked < answers.length && answers[acked] === '') acked++;
    if (acked === answers.length) return { acked };
    const silent = answers[acked] === undefined || batch.lost === true;
    return { acked, error: answers[acked] ?? `no acknowledgement from the broker within ${timeoutMs} ms`, silent };
  }

  /** Stops taking acknowledgements (the connection is being closed anyway). */
  close(): void {
    this.subscription.unsubscribe();
  }

  private answer(error: Error | null, msg: Msg): void {
    const batch = this.batch;
    if (!batch) return;
    if (error) return this.failAll(error.message);
    const index = Number(msg.subject.slice(this.inbox.length + 1)) - batch.first;
    if (!(index >= 0 && index < batch.answers.length) || batch.answers[index] !== undefined) return;
    batch.answers[index] = refusal(msg, this.stream, this.ack);
    if (--batch.waiting === 0) batch.done();
  }

  private failAll(reason: string): void {
    const batch = this.batch;
    if (!batch) return;
    for (let i = 0; i < batch.answers.length; i++) batch.answers[i] ??= reason;
    batch.lost = true;
    batch.waiting = 0;
    batch.done();
  }
}

/** '' for a PubAck of `stream` (starting `ack`); otherwise what the broker said instead. */
function refusal(msg: Msg, stream: string, ack: string): string {
  if (msg.headers?.hasError) {
    // 503 with no body: no stream takes the subject (or JetStream is not enabled).
    return msg.headers.code === 503 ? 'no JetStream stream takes the subject (503 no responders)' : `${msg.headers.code} ${msg.headers.description}`;
  }
  const text = msg.string();
  // A PubAck is `{"stream":"…","seq":…}` (with `"duplicate":true` for one the stream had); anything else is a refusal.
  if (text.startsWith(ack)) return '';
  try {
    const answer = JSON.parse(text) as { error?: { description?: string; err_code?: number }; stream?: string };
    if (answer.error) return `JetStream refused the event: ${answer.error.description ?? 'no description'} (${answer.error.err_code ?? '?'})`;
    if (answer.stream === stream) return '';
    if (typeof answer.stream === 'string') return `the event was stored by the stream ${answer.stream}, not ${stream}: their subjects overlap`;
  } catch {
    // not JSON: below
  }
  return `an answer that is no JetStream acknowledgement: ${text.slice(0, 100)}`;
}
