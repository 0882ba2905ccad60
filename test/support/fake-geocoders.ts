import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type EngineName = 'census' | 'nominatim' | 'pelias';

/** What the fake engine does for one street: answer in the engine's format, or fail as engines do. */
export type Behaviour =
  | { kind: 'match'; lat: number; lng: number; zip?: string; state?: string }
  /** A coarser answer than a street address: Nominatim's street (rank 26), Pelias's street layer; the Census has none. */
  | { kind: 'coarse'; lat: number; lng: number }
  | { kind: 'none' }
  | { kind: 'status'; status: number }
  | { kind: 'delay'; ms: number }
  | { kind: 'malformed' }
  | { kind: 'not-json' };

/**
 * A local stand-in for the three HTTP geocoders, answering in each one's documented response
 * format: the US Census Geocoder (`/geocoder/locations/address`, `result.addressMatches[]` with
 * `coordinates.x/y` and `addressComponents`), Nominatim (`/search`, jsonv2: a list of places with
 * string `lat`/`lon`, `place_rank`, `address` with `postcode` and `ISO3166-2-lvl4`) and Pelias
 * (`/v1/search/structured`, a GeoJSON FeatureCollection with `layer`, `match_type`, `postalcode`,
 * `region_a`). Behaviour by street (the `street` or `address` parameter); `down` fails everything
 * with a 503. Counts the requests per engine, and keeps the query strings so that a test can see
 * what was sent.
 */
export class FakeGeocoders {
  readonly behaviours = new Map<string, Behaviour>();
  readonly calls: Record<EngineName, number> = { census: 0, nominatim: 0, pelias: 0 };
  readonly queries: URLSearchParams[] = [];
  readonly userAgents: string[] = [];
  down = false;
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  reset(): void {
    this.behaviours.clear();
    this.calls.census = this.calls.nominatim = this.calls.pelias = 0;
    this.queries.length = 0;
    this.userAgents.length = 0;
    this.down = false;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const engine: EngineName | undefined =
      url.pathname === '/geocoder/locations/address'
        ? 'census'
        : url.pathname === '/search'
          ? 'nominatim'
          : url.pathname === '/v1/search/structured'
            ? 'pelias'
            : undefined;
    if (!engine) return void res.writeHead(404).end();
    this.calls[engine]++;
    this.queries.push(url.searchParams);
    this.userAgents.push(req.headers['user-agent'] ?? '');
    const street = url.searchParams.get(engine === 'pelias' ? 'address' : 'street') ?? '';
    const behaviour: Behaviour = this.down ? { kind: 'status', status: 503 } : (this.behaviours.get(street) ?? { kind: 'none' });
    switch (behaviour.kind) {
      case 'status':
        // An engine's error page may well repeat the query: the service must never pass it on.
        return void res.writeHead(behaviour.status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error: `cannot geocode ${street}` }));
      case 'delay':
        await new Promise((resolve) => setTimeout(resolve, behaviour.ms));
        return this.json(res, answer(engine, { kind: 'none' }));
      case 'not-json':
        return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body>Service temporarily unavailable</body></html>');
      case 'malformed':
        return this.json(
          res,
          engine === 'nominatim'
            ? { results: 'nope' }
            : engine === 'census'
              ? { result: { addressMatches: [{ coordinates: { x: 'west', y: null } }] } }
              : { type: 'FeatureCollection' },
        );
      default:
        return this.json(res, answer(engine, behaviour));
    }
  }

  private json(res: ServerResponse, body: unknown): void {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  }
}

function answer(engine: EngineName, behaviour: Extract<Behaviour, { kind: 'match' | 'coarse' | 'none' }>): unknown {
  const found = behaviour.kind !== 'none';
  const exact = behaviour.kind === 'match';
  const { lat, lng } = found ? behaviour : { lat: 0, lng: 0 };
  const zip = exact ? behaviour.zip : undefined;
  const state = exact ? behaviour.state : undefined;
  switch (engine) {
    case 'census':
      return {
        result: {
          input: { benchmark: { id: '4', benchmarkName: 'Public_AR_Current', isDefault: true }, address: {} },
          addressMatches:
            found && exact
              ? [
                  {
                    tigerLine: { side: 'L', tigerLineId: '59653655' },
                    coordinates: { x: lng, y: lat },
                    addressComponents: { zip: zip ?? '', state: state ?? '', city: 'TEST' },
                    matchedAddress: 'TEST',
                  },
                ]
              : [],
        },
      };
    case 'nominatim':
      return found
        ? [
            {
              place_id: 1,
              lat: lat.toFixed(7),
              lon: lng.toFixed(7),
              category: exact ? 'building' : 'highway',
              type: exact ? 'yes' : 'residential',
              place_rank: exact ? 30 : 26,
              addresstype: exact ? 'building' : 'road',
              display_name: 'Test',
              address: { postcode: zip, state: 'Test', 'ISO3166-2-lvl4': state ? `US-${state}` : undefined, country_code: 'us' },
            },
          ]
        : [];
    case 'pelias':
      return {
        geocoding: { version: '0.2', query: {} },
        type: 'FeatureCollection',
        features: found
          ? [
              {
                type: 'Feature',
                geometry: { type: 'Point', coordinates: [lng, lat] },
                properties: {
                  layer: exact ? 'address' : 'street',
                  match_type: exact ? 'exact' : 'fallback',
                  accuracy: exact ? 'point' : 'centroid',
                  confidence: exact ? 1 : 0.6,
                  postalcode: zip,
                  region_a: state,
                },
              },
            ]
          : [],
      };
  }
}
