import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, fmt, freePort, load, startProcess } from './lib.mjs';

/**
 * The address searches of `npm run bench` (the street address through GEOCODER), each against
 * the ZIP-only search on the same stores, on the same minutes: one service process per case,
 * started side by side with the same settings but the geocoder's (metrics on, as in production),
 * and alternated within every round (the order turning from round to round). The cases:
 *
 *   - `ZIP only`: GEOCODER=off, `{ zip: '10001' }`, 5 mi: the reference.
 *   - `address cached`: GEOCODER=census against bench/fake-geocoder.mjs, four fixed addresses
 *     looked up once before the runs: every search of the runs is a cache hit. Goal ≥ 0.9× the reference.
 *   - `address uncached postgis`: PostGIS's TIGER geocoder on a throw-away copy of the synthetic
 *     fixture (scripts/tiger-fixture-db.sh), GEOCODER_CACHE_SIZE=0, cycling through the fixture's
 *     800 New York addresses, so that every search runs one geocode() and no two in flight share one.
 *   - `address uncached HTTP 50 ms`: the fake engine answering a match after 50 ms, GEOCODER_CACHE_SIZE=0,
 *     a new address for every search.
 *   - `address engine down`: GEOCODER_URL a closed port, the breaker opened by a warm-up: every
 *     search falls back to the ZIP code's point without asking. Goal ≥ 0.95× the reference.
 *
 * Before the runs, sample requests check each case's Customer-Position header (and the breaker's
 * gauge); during them, the service's own counters (plant_store_search_positions_total and
 * plant_store_geocoder_requests_total, read before and after every run) say how many searches
 * measured from the address and from the ZIP code, how many engine requests they made and how
 * long those took, and the fallbacks by reason. A run with over 1 % of its searches from the other
 * position (e.g. the breaker opened under the load) is shown but left out of the figures.
 * `wanted(name)` picks cases by name (BENCH_SCENARIOS, a comma list of prefixes: hence no comma
 * in the names); the reference runs whenever another case does.
 * Returns undefined when no case is wanted.
 */
export async function geocoderSearches({ env, token, duration, rounds, logDir, wanted = () => true, connections = 32 }) {
  const NY = { city: 'New York', state: 'NY', zip: '10001' };
  const body = (address) => JSON.stringify({ customer_address: address ? { address, ...NY } : { zip: '10001' }, max_distance: 5 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const fixed = (addresses) => addresses.map((address) => ({ method: 'POST', path: '/locations/nearest', headers, body: body(address) }));
  // One address after the other, across all connections: the 32 in flight are 32 different ones.
  const cycling = (next) => {
    let i = 0;
    return [{ method: 'POST', path: '/locations/nearest', headers, setupRequest: (req) => ({ ...req, body: body(next(i++)) }) }];
  };
  const range = (from, to, street) => Array.from({ length: to - from + 1 }, (_, i) => `${from + i} ${street}`);
  // The fixture's New York streets (scripts/tiger-fixture.sql): Main St and Oak Ave 100 to 399, W 26th St 100 to 299.
  const fixtureAddresses = [...range(100, 399, 'Main St'), ...range(100, 399, 'Oak Ave'), ...range(100, 299, 'W 26th St')];
  const cachedAddresses = ['235 W 26th St', '120 Main St', '250 Oak Ave', '351 Main St'];
  const closedPort = await freePort();
  // The defaults, stated: a setting in the bench's own environment must not change a case.
  const defaults = {
    GEOCODER_TIMEOUT_MS: '800',
    GEOCODER_CACHE_SIZE: '50000',
    GEOCODER_CACHE_SECONDS: '86400',
    GEOCODER_BREAKER_FAILURES: '5',
    GEOCODER_BREAKER_SECONDS: '30',
    GEOCODER_MAX_ZIP_MILES: '25',
  };

  const cases = [
    {
      key: 'zip',
      name: 'geocoder: ZIP only (reference)',
      geocoder: 'off',
      source: 'zip',
      requests: fixed([undefined]),
      env: { GEOCODER: 'off', GEOCODER_URL: '' },
    },
    {
      key: 'cached',
      name: 'geocoder: address cached',
      geocoder: 'census (local fake), cache on',
      source: 'address',
      goal: 0.9,
      requests: fixed(cachedAddresses),
      env: { GEOCODER: 'census' },
    },
    {
      key: 'postgis',
      name: 'geocoder: address uncached postgis',
      geocoder: 'postgis (TIGER fixture), GEOCODER_CACHE_SIZE=0',
      source: 'address',
      requests: cycling((i) => fixtureAddresses[i % fixtureAddresses.length]),
      env: { GEOCODER: 'postgis', GEOCODER_CACHE_SIZE: '0' },
    },
    {
      key: 'slow',
      name: 'geocoder: address uncached HTTP 50 ms',
      geocoder: 'census (local fake, 50 ms), GEOCODER_CACHE_SIZE=0',
      source: 'address',
      requests: cycling((i) => `${(i % 100_000) + 1} Broadway`),
      env: { GEOCODER: 'census', GEOCODER_CACHE_SIZE: '0' },
    },
    {
      key: 'dead',
      name: 'geocoder: address engine down',
      geocoder: 'census on a closed port, breaker open',
      source: 'zip',
      goal: 0.95,
      requests: fixed(cachedAddresses),
      env: { GEOCODER: 'census', GEOCODER_URL: `http://127.0.0.1:${closedPort}` },
    },
  ];
  let selected = cases.filter((c) => c.key !== 'zip' && wanted(c.name));
  if (selected.length === 0) return undefined;
  selected = [cases[0], ...selected];
  const notes = [];

  const started = [];
  const cleanup = [];
  try {
    if (selected.some((c) => c.key === 'cached' || c.key === 'slow')) {
      const fake = await startProcess(`${ROOT}bench/fake-geocoder.mjs`, {});
      cleanup.push(() => fake.stop());
      cases[1].env.GEOCODER_URL = fake.url;
      cases[3].env.GEOCODER_URL = `${fake.url}/delay/50`;
    }
    if (selected.some((c) => c.key === 'postgis')) {
      try {
        const url = execFileSync(`${ROOT}scripts/tiger-fixture-db.sh`, ['create'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
        cleanup.push(() => execFileSync(`${ROOT}scripts/tiger-fixture-db.sh`, ['drop', url], { stdio: 'ignore' }));
        cases[2].env.GEOCODER_URL = url;
      } catch (error) {
        notes.push(
          `The postgis case did not run: no TIGER fixture database (${error.message.split('\n')[0]}); it needs PostgreSQL with PostGIS's TIGER geocoder (PGHOST, PGPORT, PGUSER; sudo scripts/install-test-tools.sh).`,
        );
        selected = selected.filter((c) => c.key !== 'postgis');
      }
    }

    // The service as in production (the image's start, metrics on), the geocoder's settings apart.
    const instrumentation = `${ROOT}dist/instrumentation.js`;
    const nodeArgs = existsSync(instrumentation) ? ['--import', instrumentation] : [];
    for (const c of selected) {
      const metricsPort = await freePort();
      const service = await startProcess(
        `${ROOT}dist/main.js`,
        { ...env, METRICS_PORT: String(metricsPort), ...defaults, ...c.env },
        { logFile: join(logDir, `geocoder-${c.key}.log`), nodeArgs },
      );
      cleanup.push(() => service.stop());
      started.push({ ...c, service, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, runs: [], counted: { address: 0, zip: 0, engine: 0 } });
    }

    const search = async (service, address) => {
      const started = performance.now();
      const res = await fetch(`${service.url}/locations/nearest`, { method: 'POST', headers, body: body(address) });
      await res.arrayBuffer();
      return { status: res.status, position: res.headers.get('customer-position'), ms: performance.now() - started };
    };
    const expectSample = (c, sample, what) => {
      if (sample.status !== 200 || sample.position !== c.source)
        throw new Error(
          `${c.name}: ${what} answered ${sample.status}, Customer-Position ${sample.position} (expected 200, ${c.source}); the case would not measure what it says`,
        );
    };
    // Sample requests: each case answers from the position it claims to measure, before any load.
    for (const c of started) {
      const { service } = c;
      if (c.key === 'zip') expectSample(c, await search(service), 'a ZIP-only search');
      if (c.key === 'cached') {
        for (const address of cachedAddresses) expectSample(c, await search(service, address), 'the first search of an address');
        const before = await counters(c.metricsUrl);
        for (const address of cachedAddresses) expectSample(c, await search(service, address), 'a repeated address');
        const after = await counters(c.metricsUrl);
        if (sum(after, 'plant_store_geocoder_requests_total') !== sum(before, 'plant_store_geocoder_requests_total'))
          throw new Error(`${c.name}: a repeated address reached the engine: the cache is not in use`);
      }
      if (c.key === 'postgis')
        for (const i of [0, 299, 300, 599, 600, 799])
          expectSample(c, await search(service, fixtureAddresses[i]), `the fixture's address ${fixtureAddresses[i]}`);
      if (c.key === 'slow') {
        for (const street of ['1 Sample Ave', '2 Sample Ave']) {
          const sample = await search(service, street);
          expectSample(c, sample, 'a search through the 50 ms engine');
          if (sample.ms < 50) throw new Error(`${c.name}: answered in ${fmt(sample.ms)} ms, before the engine's 50 ms`);
        }
      }
      if (c.key === 'dead') {
        // The warm-up: GEOCODER_BREAKER_FAILURES (5 by default) failures in a row open the breaker.
        const failures = Number(defaults.GEOCODER_BREAKER_FAILURES);
        for (let i = 0; i <= failures; i++)
          expectSample(c, await search(service, cachedAddresses[i % cachedAddresses.length]), 'a search while the engine is down');
        const open = sum(await counters(c.metricsUrl), 'plant_store_geocoder_breaker_open');
        if (open !== 1) throw new Error(`${c.name}: the breaker is not open after the warm-up (plant_store_geocoder_breaker_open ${open})`);
      }
    }

    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < started.length; i++) {
        const c = started[(i + round) % started.length];
        console.error(`running ${c.name} (round ${round + 1})…`);
        const before = await counters(c.metricsUrl);
        const result = await load({ url: c.service.url, duration, connections, requests: c.requests });
        const after = await counters(c.metricsUrl);
        const delta = (name, label) => sum(after, name, label) - sum(before, name, label);
        const run = {
          ...result,
          round: round + 1,
          address: delta('plant_store_search_positions_total', 'source="address"'),
          zip: delta('plant_store_search_positions_total', 'source="zip"'),
          engine: delta('plant_store_geocoder_requests_total'),
          engineSeconds: delta('plant_store_geocoder_request_duration_seconds_sum'),
          engineTimed: delta('plant_store_geocoder_request_duration_seconds_count'),
          fallbacks: Object.fromEntries(
            reasons(after)
              .map((reason) => [reason, delta('plant_store_geocoder_fallbacks_total', `reason="${reason}"`)])
              .filter(([, n]) => n > 0),
          ),
        };
        // More than 1 % of the searches from the other position: the run measured something else (e.g. the breaker opened).
        run.valid = (c.source === 'address' ? run.zip : run.address) <= 0.01 * (run.address + run.zip);
        c.runs.push(run);
        const fallbacks = Object.entries(run.fallbacks)
          .map(([reason, n]) => `${reason} ${n}`)
          .join(', ');
        console.error(
          `  ${fmt(result.rps)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms; Customer-Position address ${run.address}, zip ${run.zip}${fallbacks ? ` (fallbacks: ${fallbacks})` : ''}${run.valid ? '' : ' — not counted'}`,
        );
      }
    }
  } finally {
    for (const stop of cleanup.reverse()) {
      try {
        await stop();
      } catch (error) {
        console.error(`geocoder bench clean-up: ${error.message}`);
      }
    }
  }

  const results = started.map((c) => {
    // The figures come from the runs that measured what the case says; the counts from all.
    const valid = c.runs.filter((r) => r.valid);
    const mean = (f) => valid.reduce((n, r) => n + f(r), 0) / valid.length;
    const total = (f) => c.runs.reduce((n, r) => n + f(r), 0);
    const non200 = total(
      (r) =>
        r.errors +
        Object.entries(r.statusCodes)
          .filter(([code]) => code !== '200')
          .reduce((m, [, s]) => m + s.count, 0),
    );
    const fallbacks = {};
    for (const r of c.runs) for (const [reason, n] of Object.entries(r.fallbacks)) fallbacks[reason] = (fallbacks[reason] ?? 0) + n;
    return {
      key: c.key,
      name: c.name,
      geocoder: c.geocoder,
      goal: c.goal,
      runs: c.runs,
      rps: mean((r) => r.rps),
      p50: mean((r) => r.p50),
      p99: valid.length ? Math.max(...valid.map((r) => r.p99)) : NaN,
      errors: non200,
      address: total((r) => r.address),
      zip: total((r) => r.zip),
      engine: total((r) => r.engine),
      engineMs: (1000 * total((r) => r.engineSeconds)) / total((r) => r.engineTimed),
      fallbacks,
    };
  });
  return { results, notes, rounds, duration, connections };
}

/** The markdown table of geocoderSearches' results, ratios against the ZIP-only reference. */
export function describeGeocoder({ results, notes, rounds, duration, connections }) {
  const reference = results.find((r) => r.key === 'zip');
  const lines = [
    `Address searches (POST /locations/nearest, 5 mi around ZIP 10001), ${connections} connections, ${rounds} × ${duration} s per case, alternating with the ZIP-only search in every round (mean req/s and p50, worst p99, of the runs that measured what the case says):`,
    '',
    '| case | geocoder | req/s | req/s by round | p50 ms | p99 ms | non-200 | Customer-Position address / zip | engine requests per search | engine ms (mean) | × ZIP only (by round) | goal |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  const excluded = [];
  for (const r of results) {
    const searches = r.address + r.zip;
    const ratio = r.rps / reference.rps;
    const goal = r.goal === undefined ? '-' : `≥ ${r.goal}: ${ratio >= r.goal ? 'met' : 'missed'}`;
    const mark = (run) => (run.valid ? '' : '*');
    const byRound = r.runs.map((run, i) => fmt(run.rps / reference.runs[i].rps, 2) + mark(run)).join(', ');
    lines.push(
      `| ${r.name.replace(/^geocoder: /, '')} | ${r.geocoder} | ${fmt(r.rps)} | ${r.runs.map((run) => fmt(run.rps) + mark(run)).join(', ')} | ${fmt(r.p50)} | ${r.p99} | ${r.errors} | ${fmt(r.address)} / ${fmt(r.zip)} | ${r.key === 'zip' ? '-' : fmt(r.engine / searches, 3)} | ${r.key === 'zip' ? '-' : fmt(r.engineMs, 1)} | ${r.key === 'zip' ? '1' : `${fmt(ratio, 2)} (${byRound})`} | ${goal} |`,
    );
    for (const run of r.runs.filter((x) => !x.valid)) {
      excluded.push(
        `${r.name}, round ${run.round}: address ${run.address}, zip ${run.zip} (fallbacks: ${
          Object.entries(run.fallbacks)
            .map(([reason, n]) => `${reason} ${n}`)
            .join(', ') || 'none'
        })`,
      );
    }
  }
  const fallbacks = results.filter((r) => r.key !== 'zip' && Object.keys(r.fallbacks).length);
  if (fallbacks.length)
    lines.push(
      '',
      `Fallbacks to the ZIP code's point, by reason: ${fallbacks
        .map(
          (r) =>
            `${r.name}: ${Object.entries(r.fallbacks)
              .map(([reason, n]) => `${reason} ${n}`)
              .join(', ')}`,
        )
        .join('; ')}.`,
    );
  if (excluded.length)
    lines.push('', `* Not counted in the figures (over 1 % of the searches answered from the other position than the case's): ${excluded.join('; ')}.`);
  return [...lines, ...notes.map((n) => `\n${n}`)].join('\n');
}

/** The reasons of the fallback counter present in a scrape. */
function reasons(values) {
  const found = new Set();
  for (const key of values.keys()) {
    const m = /^plant_store_geocoder_fallbacks_total\{.*reason="([^"]+)"/.exec(key);
    if (m) found.add(m[1]);
  }
  return [...found];
}

/** The service's Prometheus counters: `name{labels}` → value. */
async function counters(metricsUrl) {
  const text = await (await fetch(metricsUrl)).text();
  const values = new Map();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (m) values.set(m[1] + (m[2] ?? ''), Number(m[3]));
  }
  return values;
}

/** The sum of a metric's series, those whose labels contain `label` when given. */
function sum(values, name, label) {
  let total = 0;
  for (const [key, value] of values) {
    if ((key === name || key.startsWith(`${name}{`)) && (!label || key.includes(label))) total += value;
  }
  return total;
}
