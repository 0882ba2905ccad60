// Preloaded into a service by bench/rss.mjs (`node --import ./bench/memory-probe.mjs dist/main.js`):
// on SIGUSR2 it writes where the process's memory is to MEMORY_PROBE_DIR/<pid>.json, as it is and
// again after a full garbage collection (what the heap holds live), so that the benchmark can say
// how much of the resident set is V8's heap, what lives outside it, and what is neither.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const MiB = 1024 * 1024;

// The main thread's garbage-collection pauses by kind since SIGWINCH (sent before the load), V8's
// helper threads (which mark concurrently) not included: what a heap setting costs in pauses.
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'markCompact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
};
let pauses = {};
process.on('SIGWINCH', () => (pauses = {}));
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind] ?? 'other';
    pauses[kind] ??= { count: 0, ms: 0 };
    pauses[kind].count++;
    pauses[kind].ms += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

function snapshot() {
  const usage = process.memoryUsage();
  const heap = getHeapStatistics();
  return {
    rss: usage.rss / MiB,
    heapTotal: usage.heapTotal / MiB,
    heapUsed: usage.heapUsed / MiB,
    external: usage.external / MiB,
    arrayBuffers: usage.arrayBuffers / MiB,
    mallocedMemory: heap.malloced_memory / MiB,
    peakMallocedMemory: heap.peak_malloced_memory / MiB,
    spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size / MiB, used: s.space_used_size / MiB }])),
  };
}

process.on('SIGUSR2', () => {
  const before = { ...snapshot(), pauses: structuredClone(pauses) };
  gc();
  const afterGc = snapshot();
  writeFileSync(join(process.env.MEMORY_PROBE_DIR ?? '/tmp', `${process.pid}.json`), JSON.stringify({ before, afterGc }));
});
