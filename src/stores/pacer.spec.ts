import { jest } from '@jest/globals';
import { Pacer } from './pacer.js';

describe('Pacer', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** Whether `promise` has settled once the timers due by now have run. */
  async function settled(promise: Promise<void>): Promise<boolean> {
    let done = false;
    void promise.then(() => (done = true));
    await jest.advanceTimersByTimeAsync(0);
    return done;
  }

  it('never pauses at a share of 1 (the command line)', async () => {
    const pacer = new Pacer(1);
    jest.advanceTimersByTime(1000);
    expect(await settled(pacer.pause())).toBe(true);
  });

  it('lets a slice shorter than 20 ms go on', async () => {
    const pacer = new Pacer(0.5);
    jest.advanceTimersByTime(19);
    expect(await settled(pacer.pause())).toBe(true);
  });

  it.each([
    [0.5, 30, 30],
    [0.25, 40, 120],
  ])('at a share of %p, after %p ms of work waits %p ms, then counts the next slice from the end of the wait', async (share, worked, waits) => {
    const pacer = new Pacer(share);
    jest.advanceTimersByTime(worked);
    const pause = pacer.pause();
    let done = false;
    void pause.then(() => (done = true));
    await jest.advanceTimersByTimeAsync(waits - 1);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    // The wait is not work: right after it, the next slice has just begun.
    jest.advanceTimersByTime(19);
    expect(await settled(pacer.pause())).toBe(true);
  });
});
