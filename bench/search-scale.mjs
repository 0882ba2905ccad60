// Does a search cost the same with 100,000 stores as with 1,000?
//
//   npm run build && node bench/search-scale.mjs
//
// For 1k, 10k and 100k synthetic stores (spread like the population), imports them into a
// fresh MySQL database with the real CLI (timing the import), starts the built service and
// measures POST /locations/nearest around ZIP 10001 at 5 and 50 miles with one connection
// (latency ≈ server time) and with 32 (throughput).
//
// Then, on the largest size, the search with `open_at` against the plain one, in one run
// (OPEN_AT_ROUNDS rounds, default 3, the cases alternating and their order turning from round to
// round): the plain search, `open_at` a Wednesday noon (Eastern), `open_at` + `open_only` then,
// and `open_only` at 3 AM, when every store around is closed (the tree walk passes over every
// store in range: the worst case), at 5 and 50 miles. The synthetic stores keep three weekly
// schedules (one in three stores each); all three are open at noon, none at 3 AM.
// OPEN_AT_ROUNDS=0 leaves this part out.
//
// And, on the largest size too, the search's scopes against the plain 5-mile search, in one run
// the same way (SCOPE_ROUNDS rounds, default 3; 0 leaves them out): the same search in
// kilometres, a region search of New York (the customer's own state), of the state with the most
// stores and of its biggest city (from ZIP 10001: the walk of the region's own tree), and a `nearest_if_none` search from a device position
// at sea whose nearest store is about 400 miles away (the walk of the tree without a radius).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ROOT, cli, fmt, freshDatabase, load, startProcess } from './lib.mjs';

const SIZES = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const DURATION = Number(process.env.DURATION ?? 5);
const OPEN_AT_ROUNDS = Number(process.env.OPEN_AT_ROUNDS ?? 3);
const SCOPE_ROUNDS = Number(process.env.SCOPE_ROUNDS ?? 3);
const NOON = '2026-11-25T12:00:00-05:00';
const NIGHT = '2026-11-25T03:00:00-05:00';
const OPEN_AT_CASES = [
  { name: 'plain, 5 mi', miles: 5 },
  { name: 'open_at noon, 5 mi', miles: 5, open_at: NOON },
  { name: 'open_at + open_only noon, 5 mi', miles: 5, open_at: NOON, open_only: true },
  { name: 'open_at + open_only 3 AM, 5 mi', miles: 5, open_at: NIGHT, open_only: true },
  { name: 'plain, 50 mi', miles: 50 },
  { name: 'open_at noon, 50 mi', miles: 50, open_at: NOON },
  { name: 'open_at + open_only noon, 50 mi', miles: 50, open_at: NOON, open_only: true },
  { name: 'open_at + open_only 3 AM, 50 mi', miles: 50, open_at: NIGHT, open_only: true },
];
const { haversineMiles } = await import(`${ROOT}dist/shared/great-circle.js`);
const rows = [];
let openAt;
let scopes;
for (const size of SIZES) {
  const file = `/tmp/plant-store-bench-${size}-${process.pid}.csv`;
  execFileSync(process.execPath, [`${ROOT}scripts/make-synthetic-stores.mjs`, String(size), file], { stdio: 'ignore' });
  const DATABASE_URL = await freshDatabase(`scale_${size}`);
  // The abuse limits are off (as in npm run bench): the runs measure each search, not the limiter's 429s.
  const env = { DATABASE_URL, NODE_ENV: 'production', TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0' };
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
    rows.push({
      size,
      miles,
      found: probe.locations.length,
      mean_1: single.meanMs,
      p99_1: single.p99,
      rps_32: many.rps,
      p99_32: many.p99,
      errors: single.errors + many.errors + single.non2xx + many.non2xx,
      importSeconds,
      rss: service.rssMb(),
    });
  }
  if (size === Math.max(...SIZES) && OPEN_AT_ROUNDS > 0) openAt = { size, cases: await openAtSearches(service.url, headers), inRange: storesInRange(file) };
  if (size === Math.max(...SIZES) && SCOPE_ROUNDS > 0) scopes = { size, ...(await scopeSearches(service.url, headers, file)) };
  await service.stop();
}
console.log('\nstores  miles  results  mean ms (1 conn)  p99 ms (1 conn)  req/s (32 conn)  p99 ms (32 conn)  errors  import s  RSS MB');
for (const r of rows) {
  console.log(
    `${String(r.size).padStart(6)}  ${String(r.miles).padStart(5)}  ${String(r.found).padStart(7)}  ${fmt(r.mean_1, 3).padStart(16)}  ${fmt(r.p99_1, 2).padStart(15)}  ${fmt(r.rps_32).padStart(15)}  ${fmt(r.p99_32, 2).padStart(16)}  ${String(r.errors).padStart(6)}  ${fmt(r.importSeconds, 1).padStart(8)}  ${fmt(r.rss).padStart(6)}`,
  );
}

if (openAt) {
  const plainOf = (c) => openAt.cases.find((p) => p.miles === c.miles && !p.open_at);
  console.log(
    `\n${openAt.size} stores, around ZIP 10001 (limit 25); ${OPEN_AT_ROUNDS} rounds of ${DURATION} s per case, the cases alternating (mean req/s and p50 of the rounds, worst p99; "× plain": the mean of the rounds' ratios to the plain search at the same distance, run in the same round)\n`,
  );
  console.log(
    `Stores in range (the most an \`open_only\` walk passes over): ${Object.entries(openAt.inRange)
      .map(([miles, n]) => `${fmt(n)} within ${miles} mi`)
      .join(', ')}.\n`,
  );
  console.log('| search | results | open | req/s (32 conn) | by round | p50 ms | p99 ms | mean ms (1 conn) | × plain | × plain by round | errors |');
  console.log('|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|');
  for (const c of openAt.cases) {
    const plain = plainOf(c);
    const ratios = c.many.map((r, i) => r.rps / plain.many[i].rps);
    const mean = (list, f) => list.reduce((n, r) => n + f(r), 0) / list.length;
    console.log(
      `| ${c.name} | ${c.found} | ${c.open ?? '-'} | ${fmt(mean(c.many, (r) => r.rps))} | ${c.many.map((r) => fmt(r.rps)).join(', ')} | ${fmt(mean(c.many, (r) => r.p50))} | ${Math.max(...c.many.map((r) => r.p99))} | ${fmt(
        mean(c.single, (r) => r.meanMs),
        3,
      )} | ${fmt(
        mean(ratios, (r) => r),
        2,
      )} | ${ratios.map((r) => fmt(r, 2)).join(', ')} | ${c.errors} |`,
    );
  }
}

if (scopes) {
  console.log(
    `\n${scopes.size} stores; ${SCOPE_ROUNDS} rounds of ${DURATION} s per case, the cases alternating (mean req/s and p50 of the rounds, worst p99; "× plain": the mean of the rounds' ratios to the plain 5-mile search run in the same round)\n`,
  );
  console.log(
    `Region: ${scopes.region.state} (${fmt(scopes.region.stores)} stores), its city ${scopes.region.city} (${fmt(scopes.region.cityStores)} stores); nearest_if_none from ${scopes.far.lat}, ${scopes.far.lng}: the nearest store ${fmt(scopes.far.miles, 1)} miles away.\n`,
  );
  console.log('| search | scope | results | req/s (32 conn) | by round | p50 ms | p99 ms | mean ms (1 conn) | × plain | × plain by round | errors |');
  console.log('|---|---|---:|---:|---|---:|---:|---:|---:|---|---:|');
  const plain = scopes.cases[0];
  for (const c of scopes.cases) {
    const ratios = c.many.map((r, i) => r.rps / plain.many[i].rps);
    const mean = (list, f) => list.reduce((n, r) => n + f(r), 0) / list.length;
    console.log(
      `| ${c.name} | ${c.scope} | ${c.found} | ${fmt(mean(c.many, (r) => r.rps))} | ${c.many.map((r) => fmt(r.rps)).join(', ')} | ${fmt(mean(c.many, (r) => r.p50))} | ${Math.max(...c.many.map((r) => r.p99))} | ${fmt(
        mean(c.single, (r) => r.meanMs),
        3,
      )} | ${fmt(
        mean(ratios, (r) => r),
        2,
      )} | ${ratios.map((r) => fmt(r, 2)).join(', ')} | ${c.errors} |`,
    );
  }
}

/**
 * The scope cases against one service, alternating like openAtSearches: the plain 5-mile search
 * first (the reference), then the same in kilometres, the region of the state with the most stores
 * and of its biggest city, and nearest_if_none from a point about 400 miles from the nearest store.
 */
async function scopeSearches(url, headers, file) {
  const stores = readFileSync(file, 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(','))
    .map((f) => ({ city: f[3], state: f[4], zip: f[5], lat: Number(f[6]), lng: Number(f[7]) }));
  const count = (key) => stores.reduce((counts, s) => counts.set(key(s), (counts.get(key(s)) ?? 0) + 1), new Map());
  const [state, stateStores] = [...count((s) => s.state)].sort((a, b) => b[1] - a[1])[0];
  const [city, cityStores] = [...count((s) => (s.state === state ? s.city : ''))].filter(([c]) => c).sort((a, b) => b[1] - a[1])[0];
  // A ZIP code in that city (its stores' most common): a customer searching their own state.
  const [inside] = [...count((s) => (s.state === state && s.city === city ? s.zip : ''))].filter(([z]) => z).sort((a, b) => b[1] - a[1])[0];
  const far = farPoint(stores, 400);
  const zip = { customer_address: { zip: '10001' } };
  const cases = [
    { name: 'plain, 5 mi', body: { ...zip, max_distance: 5 } },
    { name: 'distance_unit km, 8.04672 km', body: { ...zip, max_distance: 8.04672, distance_unit: 'km' } },
    { name: 'region NY from ZIP 10001, in it', body: { ...zip, region: { state: 'NY' } } },
    { name: `region ${state} from ZIP 10001`, body: { ...zip, region: { state } } },
    { name: `region ${state} from ZIP ${inside}, in it`, body: { customer_address: { zip: inside }, region: { state } } },
    { name: `region ${state}, ${city} from ZIP 10001`, body: { ...zip, region: { state, city } } },
    { name: 'nearest_if_none, nearest 400 mi', body: { customer_address: { zip: '10001', lat: far.lat, lng: far.lng }, nearest_if_none: true } },
  ].map((c) => ({ ...c, body: JSON.stringify(c.body), single: [], many: [], errors: 0 }));
  for (const c of cases) {
    const res = await fetch(`${url}/locations/nearest`, { method: 'POST', headers, body: c.body });
    if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${await res.text()}`);
    c.scope = res.headers.get('search-scope');
    c.found = (await res.json()).locations.length;
  }
  await alternate('scopes', SCOPE_ROUNDS, cases, url, headers);
  return { cases, region: { state, stores: stateStores, city, cityStores }, far };
}

/** A point at sea off California (latitude 30, going west) whose nearest store is at least `miles` away. */
function farPoint(stores, miles) {
  for (let lng = -118; lng > -140; lng -= 0.05) {
    const point = { lat: 30, lng: Number(lng.toFixed(2)) };
    const nearest = stores.reduce((min, s) => Math.min(min, haversineMiles(point, s)), Infinity);
    if (nearest >= miles) return { ...point, miles: nearest };
  }
  throw new Error(`no point ${miles} miles from every store`);
}

/** How many stores of the CSV lie within each distance of OPEN_AT_CASES from ZIP 10001's point (the service's own ZIP point and haversine). */
function storesInRange(file) {
  const [lat, lng] = /^10001,([^,]+),([^,]+),/m
    .exec(readFileSync(`${ROOT}assets/zip-points.csv`, 'utf8'))
    .slice(1)
    .map(Number);
  const counts = Object.fromEntries([...new Set(OPEN_AT_CASES.map((c) => c.miles))].map((miles) => [miles, 0]));
  for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
    if (!line) continue;
    const fields = line.split(',');
    const miles = haversineMiles({ lat, lng }, { lat: Number(fields[6]), lng: Number(fields[7]) });
    for (const limit of Object.keys(counts)) if (miles <= Number(limit)) counts[limit]++;
  }
  return counts;
}

/**
 * The cases of OPEN_AT_CASES against one service: each checked once (200, how many locations,
 * how many open), then OPEN_AT_ROUNDS rounds, each case once per round with one connection and
 * with 32, the order turning from round to round.
 */
async function openAtSearches(url, headers) {
  const cases = OPEN_AT_CASES.map((c) => ({
    ...c,
    // JSON.stringify leaves out the fields a case has not got (undefined).
    body: JSON.stringify({ customer_address: { zip: '10001' }, max_distance: c.miles, open_at: c.open_at, open_only: c.open_only }),
    single: [],
    many: [],
    errors: 0,
  }));
  for (const c of cases) {
    const res = await fetch(`${url}/locations/nearest`, { method: 'POST', headers, body: c.body });
    if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${await res.text()}`);
    const { locations } = await res.json();
    c.found = locations.length;
    if (c.open_at) c.open = locations.filter((l) => l.open).length;
  }
  await alternate('open_at', OPEN_AT_ROUNDS, cases, url, headers);
  return cases;
}

/**
 * `rounds` rounds of every case, with one connection and with 32, the order turning from round to
 * round so that no case always runs first; each case keeps its rounds' results and its errors.
 */
async function alternate(label, rounds, cases, url, headers) {
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + round) % cases.length];
      console.error(`${label}, round ${round + 1}: ${c.name}…`);
      const options = { url, duration: DURATION, method: 'POST', path: '/locations/nearest', body: c.body, headers };
      const single = await load({ ...options, connections: 1 });
      const many = await load({ ...options, connections: 32 });
      c.single.push(single);
      c.many.push(many);
      c.errors += single.errors + many.errors + single.non2xx + many.non2xx;
    }
  }
}
