// Preloaded into the service by bench/memory-limit.mjs (`--import`): every 100 ms it appends
// where the process's memory is to MEMORY_SAMPLE_FILE, one JSON line: the resident set, V8's
// heap (used and reserved, and its old and young spaces), memory V8 does not own but counts
// (`external`: the search snapshot's buffers, the database driver's; `arrayBuffers` of it), so
// that the benchmark can say, at the cgroup's peak of each phase, what held the memory.
import { appendFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';

const file = process.env.MEMORY_SAMPLE_FILE;
if (file) {
  setInterval(() => {
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s]));
    const sample = {
      t: Date.now(),
      rss,
      heapTotal,
      heapUsed,
      external,
      arrayBuffers,
      oldUsed: spaces.old_space?.space_used_size ?? 0,
      oldSize: spaces.old_space?.space_size ?? 0,
      youngSize: spaces.new_space?.space_size ?? 0,
      largeUsed: spaces.large_object_space?.space_used_size ?? 0,
    };
    appendFileSync(file, `${JSON.stringify(sample)}\n`);
  }, 100).unref();
}
