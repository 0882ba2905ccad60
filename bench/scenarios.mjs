import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { load } from './lib.mjs';

/** A store of every seeded list (scripts/make-synthetic-stores.mjs numbers them from SYN-000000). */
export const STORE_PAGE_CODE = 'SYN-000042';

/**
 * The load of `npm run bench`, also what `npm run bench:memory` runs inside its cgroup: each
 * scenario's `run(url)` is one autocannon run of `duration` seconds against the server at `url`,
 * with the teams' `tokens`. `expect`: the statuses of a correct answer (anything else counts as
 * an error); `baseline`: whether the baseline server (bench/baseline.mjs) answers it too.
 */
export function benchScenarios({ tokens, duration, firstId = 1_000_000 }) {
  const auth = (i = 0) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` });
  const json = { 'content-type': 'application/json' };
  const nearest = (miles) => JSON.stringify({ customer_address: { zip: '10001' }, max_distance: miles });
  // Ids far above the seeded plants', so that every create is new.
  let nextId = firstId;
  return [
    { name: 'GET /plants?limit=20', baseline: true, expect: [200], run: (url) => load({ url, duration, path: '/plants?limit=20', headers: auth() }) },
    {
      name: 'POST /locations/nearest 5 mi',
      baseline: true,
      expect: [200],
      run: (url) => load({ url, duration, method: 'POST', path: '/locations/nearest', body: nearest(5), headers: { ...auth(), ...json } }),
    },
    {
      name: 'POST /locations/nearest 50 mi',
      baseline: true,
      expect: [200],
      run: (url) => load({ url, duration, method: 'POST', path: '/locations/nearest', body: nearest(50), headers: { ...auth(), ...json } }),
    },
    // A store's page (GET /locations/{code}), from the same index as the search: it must keep up with the plain search above.
    {
      name: 'GET /locations/{code}',
      baseline: false,
      expect: [200],
      run: (url) => load({ url, duration, path: `/locations/${STORE_PAGE_CODE}`, headers: auth() }),
    },
    {
      name: 'POST + DELETE /plants',
      baseline: false,
      expect: [201, 204],
      run: (url) =>
        load({
          url,
          duration,
          requests: [
            {
              method: 'POST',
              path: '/plants',
              headers: { ...auth(1), ...json },
              setupRequest: (req, ctx) => ((ctx.id = nextId++), { ...req, body: JSON.stringify({ id: ctx.id, name: 'bench plant', tag: 'b' }) }),
            },
            { method: 'DELETE', headers: auth(1), setupRequest: (req, ctx) => ({ ...req, path: `/plants/${ctx.id}` }) },
          ],
        }),
    },
    {
      name: 'invalid token (401)',
      baseline: true,
      expect: [401],
      run: (url) => load({ url, duration, path: '/plants?limit=20', headers: { authorization: `Bearer pst_${'A'.repeat(49)}` } }),
    },
  ];
}

/**
 * Searches while a store list is imported through the admin API: search req/s for
 * `idleSeconds` first, then in one-second runs for as long as the upload of `csvFile` to
 * POST /admin/stores.csv`query` takes (streamed from disk, as curl --data-binary does). Returns
 * both rates, the import's rows/s and status, and the searches that did not answer 200.
 */
export async function searchDuringImport({ url, teamToken, adminToken, csvFile, query = '', idleSeconds = 5 }) {
  const result = await searchDuring({
    url,
    teamToken,
    idleSeconds,
    work: () =>
      fetch(`${url}/admin/stores.csv${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'text/csv' },
        body: Readable.toWeb(createReadStream(csvFile)),
        duplex: 'half',
      }).then(async (res) => ({ status: res.status, body: await res.json() })),
  });
  return {
    ...result,
    importStatus: result.status,
    importError: result.error ?? (result.status === 200 ? undefined : result.body?.message),
    rows: result.body.read,
    importSeconds: result.seconds,
    rowsPerSecond: result.body.read / result.seconds,
  };
}

/**
 * Searches (5 miles around 10001, 16 connections) for `idleSeconds`, then in one-second runs for
 * as long as `work()` takes: what a whole-catalogue operation (an import, its dry run, the
 * export) costs the searches running beside it. `work` gives `{ status, body }`.
 */
export async function searchDuring({ url, teamToken, work, idleSeconds = 5 }) {
  const search = (duration) =>
    load({
      url,
      duration,
      connections: 16,
      method: 'POST',
      path: '/locations/nearest',
      body: JSON.stringify({ customer_address: { zip: '10001' }, max_distance: 5 }),
      headers: { authorization: `Bearer ${teamToken}`, 'content-type': 'application/json' },
    });
  const failed = (r) =>
    r.errors +
    Object.entries(r.statusCodes)
      .filter(([code]) => code !== '200')
      .reduce((n, [, s]) => n + s.count, 0);
  const idle = await search(idleSeconds);
  const started = Date.now();
  let done = false;
  const working = work()
    .then((r) => ({ ...r, seconds: (Date.now() - started) / 1000 }))
    // A service that died under the work (bench:memory's cgroup killing it) is a result to report
    // with the cgroup's counters, not a crash of the bench: status 0.
    .catch((error) => ({ status: 0, body: { read: 0 }, error: error.cause?.message ?? error.message, seconds: (Date.now() - started) / 1000 }))
    .finally(() => (done = true));
  const during = [];
  while (!done) during.push(await search(1));
  const result = await working;
  const mean = during.reduce((n, r) => n + r.rps, 0) / Math.max(during.length, 1);
  return {
    idleRps: idle.rps,
    duringRps: mean,
    ratio: mean / idle.rps,
    searchFailures: failed(idle) + during.reduce((n, r) => n + failed(r), 0),
    status: result.status,
    body: result.body,
    error: result.error,
    seconds: result.seconds,
  };
}
