// A local stand-in for the HTTP geocoders, for the address searches of `npm run bench`
// (bench/geocoder.mjs): `node bench/fake-geocoder.mjs` listens on HOST:PORT and answers in the
// documented formats of the US Census Geocoder (/geocoder/locations/address), Nominatim (/search,
// jsonv2) and Pelias (/v1/search/structured), as test/support/fake-geocoders.ts does for the tests
// (which this plain .mjs cannot import).
//
// Every street address in a ZIP code of ZIP_POINTS is a match, at a point of its own (a hash of
// the street) within about half a mile of the ZIP code's point; any other ZIP code is "no match".
// What precedes the engine's path in GEOCODER_URL sets the behaviour, so that one process serves
// every case: `/delay/<ms>/…` answers after <ms> milliseconds, `/down/…` answers 503 at once.
// GET /stats: the requests answered so far, by engine; GET /health/ready: 200.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';

/** ZIP codes the fake places addresses in: their packaged points (assets/zip-points), roughly. */
const ZIP_POINTS = { 10001: { lat: 40.7506, lng: -73.9972, state: 'NY' } };
const ENGINES = { '/geocoder/locations/address': 'census', '/search': 'nominatim', '/v1/search/structured': 'pelias' };
const calls = { census: 0, nominatim: 0, pelias: 0 };

/** The point of a street in a ZIP code: up to ±0.007° from the ZIP code's point, always the same for the same street. */
function place(street, zip) {
  const at = ZIP_POINTS[zip];
  if (!at || !street) return undefined;
  const digest = createHash('sha256').update(street.toLowerCase()).digest();
  const offset = (byte) => ((byte - 127.5) / 127.5) * 0.007;
  return { lat: at.lat + offset(digest[0]), lng: at.lng + offset(digest[1]), zip, state: at.state };
}

function answer(engine, match) {
  switch (engine) {
    case 'census':
      return {
        result: {
          input: { benchmark: { id: '4', benchmarkName: 'Public_AR_Current', isDefault: true }, address: {} },
          addressMatches: match
            ? [
                {
                  tigerLine: { side: 'L', tigerLineId: '59653655' },
                  coordinates: { x: match.lng, y: match.lat },
                  addressComponents: { zip: match.zip, state: match.state, city: 'BENCH' },
                  matchedAddress: 'BENCH',
                },
              ]
            : [],
        },
      };
    case 'nominatim':
      return match
        ? [
            {
              place_id: 1,
              lat: match.lat.toFixed(7),
              lon: match.lng.toFixed(7),
              category: 'building',
              type: 'yes',
              place_rank: 30,
              addresstype: 'building',
              display_name: 'Bench',
              address: { postcode: match.zip, state: 'Bench', 'ISO3166-2-lvl4': `US-${match.state}`, country_code: 'us' },
            },
          ]
        : [];
    case 'pelias':
      return {
        geocoding: { version: '0.2', query: {} },
        type: 'FeatureCollection',
        features: match
          ? [
              {
                type: 'Feature',
                geometry: { type: 'Point', coordinates: [match.lng, match.lat] },
                properties: { layer: 'address', match_type: 'exact', accuracy: 'point', confidence: 1, postalcode: match.zip, region_a: match.state },
              },
            ]
          : [],
      };
  }
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://fake');
  if (url.pathname === '/health/ready') return void res.writeHead(200).end('ok');
  if (url.pathname === '/stats') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(calls));
  const [, mode, rest] = /^(\/down|\/delay\/\d+)?(\/.*)$/.exec(url.pathname) ?? [];
  const engine = ENGINES[rest];
  if (!engine) return void res.writeHead(404).end();
  calls[engine]++;
  if (mode === '/down') return void res.writeHead(503, { 'Content-Type': 'application/json' }).end('{"error":"unavailable"}');
  const params = url.searchParams;
  const match = place(params.get(engine === 'pelias' ? 'address' : 'street'), params.get(engine === 'nominatim' || engine === 'pelias' ? 'postalcode' : 'zip'));
  const send = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer(engine, match)));
  if (mode?.startsWith('/delay/')) setTimeout(send, Number(mode.slice('/delay/'.length)));
  else send();
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
