import { load } from './lib.mjs';

/**
 * The load of `npm run bench`, also what `npm run bench:memory` runs inside its cgroup: each
 * scenario's `run(url)` is one autocannon run of `duration` seconds against the server at `url`,
 * with the teams' `tokens`. `expect`: the statuses of a correct answer (anything else counts as
 * an error); `baseline`: whether the baseline server (bench/baseline.mjs) answers it too.
 */
export function benchScenarios({ tokens, duration }) {
  const auth = (i = 0) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` });
  const json = { 'content-type': 'application/json' };
  const nearest = (miles) => JSON.stringify({ customer_address: { zip: '10001' }, max_distance: miles });
  // Ids far above the seeded plants', so that every create is new.
  let nextId = 1_000_000;
  return [
    { name: 'GET /plants?limit=20', baseline: true, expect: [200], run: (url) => load({ url, duration, path: '/plants?limit=20', headers: auth() }) },
    { name: 'POST /locations/nearest 5 mi', baseline: true, expect: [200], run: (url) => load({ url, duration, method: 'POST', path: '/locations/nearest', body: nearest(5), headers: { ...auth(), ...json } }) },
    { name: 'POST /locations/nearest 50 mi', baseline: true, expect: [200], run: (url) => load({ url, duration, method: 'POST', path: '/locations/nearest', body: nearest(50), headers: { ...auth(), ...json } }) },
    {
      name: 'POST + DELETE /plants',
      baseline: false,
      expect: [201, 204],
      run: (url) =>
        load({
          url,
          duration,
          requests: [
            { method: 'POST', path: '/plants', headers: { ...auth(1), ...json }, setupRequest: (req, ctx) => ((ctx.id = nextId++), { ...req, body: JSON.stringify({ id: ctx.id, name: 'bench plant', tag: 'b' }) }) },
            { method: 'DELETE', headers: auth(1), setupRequest: (req, ctx) => ({ ...req, path: `/plants/${ctx.id}` }) },
          ],
        }),
    },
    { name: 'invalid token (401)', baseline: true, expect: [401], run: (url) => load({ url, duration, path: '/plants?limit=20', headers: { authorization: `Bearer pst_${'A'.repeat(49)}` } }) },
  ];
}
