// Preloaded into a server by bench/profile.mjs (`node --import ./bench/cpu-probe.mjs dist/main.js`):
// the first SIGUSR2 starts V8's CPU profiler, the next stops it and writes the profile to
// CPU_PROBE_DIR/<pid>.cpuprofile, so that a profile covers the load alone (node --cpu-prof would
// also take in the start-up and the loading of the store index). With PROBE_KIND=heap it takes
// V8's sampling heap profile instead (<pid>.heapprofile): every sampled allocation, those the
// collector has freed since included, so that it says what the load allocates, not what it keeps.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
const heap = process.env.PROBE_KIND === 'heap';
const [domain, start, stop, suffix] = heap ? ['HeapProfiler', 'startSampling', 'stopSampling', 'heapprofile'] : ['Profiler', 'start', 'stop', 'cpuprofile'];
const startParams = heap ? { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } : undefined;
let running = false;

process.on('SIGUSR2', () => {
  running = !running;
  if (running) {
    void post(`${domain}.enable`).then(() => post(`${domain}.${start}`, startParams));
    return;
  }
  void post(`${domain}.${stop}`).then(({ profile }) =>
    writeFileSync(join(process.env.CPU_PROBE_DIR ?? '/tmp', `${process.pid}.${suffix}`), JSON.stringify(profile)),
  );
});
