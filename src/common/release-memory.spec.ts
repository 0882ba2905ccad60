import { getHeapStatistics } from 'node:v8';
import { withExposedGc, withoutExposedGc } from '../../test/support/exposed-gc.js';
import { memoryReleasable, releaseMemory } from './release-memory.js';

describe('releaseMemory', () => {
  it('does nothing where Node was started without --expose-gc', async () => {
    await withoutExposedGc(() => {
      expect(memoryReleasable()).toBe(false);
      expect(releaseMemory()).toBeGreaterThanOrEqual(0);
    });
  });

  it('gives back the heap that garbage filled, with the collector --expose-gc exposes', async () => {
    await withExposedGc(() => {
      expect(memoryReleasable()).toBe(true);
      // Unreachable once fill returns.
      const fill = () => Array.from({ length: 300_000 }, (_, n) => ({ n, text: `text ${n}` })).length;
      expect(fill()).toBe(300_000);
      const filled = getHeapStatistics().total_heap_size;
      releaseMemory();
      // 300,000 small objects are some 20 MB of heap; what the collection keeps is the test's own.
      expect(getHeapStatistics().total_heap_size).toBeLessThan(filled - 10 * 1024 * 1024);
    });
  });
});
