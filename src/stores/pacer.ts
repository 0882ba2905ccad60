/** How long a whole-catalogue operation works before it pauses for the others (see Pacer). */
const SLICE_MS = 20;

/**
 * Keeps a long import or export to a share of the event loop: after each slice of SLICE_MS of work
 * it waits for (1 - share) / share of the time that slice took, during which other requests run.
 * Wall time, not CPU time: a slice's waits for the database count as work, so it errs towards
 * pausing more (other requests run during those waits too).
 */
export class Pacer {
  private since = performance.now();

  constructor(private readonly share: number) {}

  async pause(): Promise<void> {
    if (this.share >= 1) return;
    const worked = performance.now() - this.since;
    if (worked < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, (worked * (1 - this.share)) / this.share));
    this.since = performance.now();
  }
}
