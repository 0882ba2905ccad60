// Does a search cost the same with 100,000 stores as with 1,000?
//
//   npm run build && node bench/search-scale.mjs
//
// For 1k, 10k and 100k synthetic stores (spread like the population), imports them into a
// fresh MySQL database with the real CLI (timing the import), starts the built service and
// measures POST /locations/nearest around ZIP 10001 at 5 and 50 miles with one connection
// (latency ≈ server time) and with 32 (throughput).
import { execFileSync } from 'node:child_process';
import { ROOT, cli, fmt, freshDatabase, load, startProcess } from './lib.mjs';

const SIZES = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const DURATION = Number(process.env.DURATION ?? 5);
const rows = [];
for (const size of SIZES) {
  const file = `/tmp/plant-store-bench-${size}.csv`;
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(size), file], { stdio: 'ignore' });
  const DATABASE_URL = await freshDatabase(`scale_${size}`);
  const env = { DATABASE_URL, NODE_ENV: 'production' };
  const importStart = Date.now();
  await cli(env, 'locations', 'import', file);
  const importSeconds = (Date.now() - importStart) / 1000;
  const token = await cli(env, 'tokens', 'create', '--team', 'bench');
  const service = await startProcess(`${ROOT}dist/main.js`, env);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  for (const miles of [5, 50]) {
    const body = JSON.stringify({ customer_address: { zip: '10001' }, max_distance: miles });
    const probe = await (await fetch(`${service.url}/locations/nearest`, { method: 'POST', headers, body })).json();
    const single = await load({ url: service.url, connections: 1, duration: DURATION, method: 'POST', path: '/locations/nearest', body, headers });
    const many = await load({ url: service.url, connections: 32, duration: DURATION, method: 'POST', path: '/locations/nearest', body, headers });
    rows.push({ size, miles, found: probe.locations.length, mean_1: single.meanMs, p99_1: single.p99, rps_32: many.rps, p99_32: many.p99, errors: single.errors + many.errors + single.non2xx + many.non2xx, importSeconds, rss: service.rssMb() });
  }
  await service.stop();
}
console.log('\nstores  miles  results  mean ms (1 conn)  p99 ms (1 conn)  req/s (32 conn)  p99 ms (32 conn)  errors  import s  RSS MB');
for (const r of rows) {
  console.log(
    `${String(r.size).padStart(6)}  ${String(r.miles).padStart(5)}  ${String(r.found).padStart(7)}  ${fmt(r.mean_1, 3).padStart(16)}  ${fmt(r.p99_1, 2).padStart(15)}  ${fmt(r.rps_32).padStart(15)}  ${fmt(r.p99_32, 2).padStart(16)}  ${String(r.errors).padStart(6)}  ${fmt(r.importSeconds, 1).padStart(8)}  ${fmt(r.rss).padStart(6)}`,
  );
}
