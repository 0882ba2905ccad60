// Preloaded into a service by bench/profile.mjs (`node --import ./bench/cpu-probe.mjs dist/main.js`):
// the first SIGUSR2 starts V8's CPU profiler, the next stops it and writes the profile to
// CPU_PROBE_DIR/<pid>.cpuprofile, so that a profile covers the load alone (node --cpu-prof would
// also take in the start-up and the loading of the store index).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
let running = false;

process.on('SIGUSR2', () => {
  running = !running;
  if (running) {
    void post('Profiler.enable').then(() => post('Profiler.start'));
    return;
  }
  void post('Profiler.stop').then(({ profile }) =>
    writeFileSync(join(process.env.CPU_PROBE_DIR ?? '/tmp', `${process.pid}.cpuprofile`), JSON.stringify(profile)),
  );
});
