import { jest } from '@jest/globals';

/**
 * Runs `run` with the clock the app reads (Date) at `at` (ms since the epoch), set by the test
 * instead of waited for: a cache's age, a cool-down or a breaker's pause passes at once. Timers and
 * `performance.now()` stay real, so the HTTP server, the database drivers and the test's requests run
 * as they do; the clock is real again afterwards. For an app in the test's process (createTestApp).
 */
export async function withClockAt<T>(at: number, run: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
    now: at,
  });
  try {
    return await run();
  } finally {
    jest.useRealTimers();
  }
}
