import { getHeapStatistics } from 'node:v8';
import { releaseMemory } from './release-memory.js';

describe('releaseMemory', () => {
  it('collects without putting gc on the global object', () => {
    expect(typeof releaseMemory()).toBe('number');
    expect('gc' in globalThis).toBe(false);
  });

  it('gives back the heap that garbage filled', () => {
    // Unreachable once fill returns.
    const fill = () => Array.from({ length: 300_000 }, (_, n) => ({ n, text: `text ${n}` })).length;
    expect(fill()).toBe(300_000);
    const filled = getHeapStatistics().total_heap_size;
    releaseMemory();
    // 300,000 small objects are some 20 MB of heap; what the collection keeps is the test's own.
    expect(getHeapStatistics().total_heap_size).toBeLessThan(filled - 10 * 1024 * 1024);
  });
});
