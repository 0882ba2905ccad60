import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { haversineMiles, type Point } from '../../src/shared/great-circle.js';

/** How far the stand-in's "roads" take: the straight line times this, at ROAD_KMH. */
export const DETOUR = 1.4;
export const ROAD_KMH = 50;
/**
 * Latitudes by their last digits: …0.555 has no road near it; …0.2777 is on a road that leads
 * nowhere; …0.333 is across a river, three times the straight line by road.
 */
export const OFF_ROAD = 0.555;
export const NO_ROUTE = 0.2777;
export const ACROSS_RIVER = 0.333;
/** A latitude ending in this is on an island: no road joins it to the mainland (Valhalla refuses the matrix, error 170). */
export const ISLAND = 0.4444;

/** What the stand-in does with the next requests. */
export type RouterBehaviour = 'ok' | 'slow' | 'status:429' | 'status:503' | 'malformed' | 'not-json' | 'unknown-error';

/** The stand-in's roads run east-west every ten-thousandth of a degree of latitude (about 11 m). */
const ROAD_EVERY = 1e-4;
/** How far a point whose latitude ends in OFF_ROAD is from its nearest road. */
export const OFF_ROAD_METRES = 8000;

/**
 * A local stand-in for the OSRM and Valhalla HTTP servers, answering in each one's documented
 * format. OSRM's table service (`GET /table/v1/driving/{lng,lat;…}?sources=0&annotations=…`):
 * `code`, `durations` and `distances` rows, `sources` and `destinations` with the `location` each
 * point was moved to on a road and the `distance` it was moved. Valhalla's matrix
 * (`POST /sources_to_targets`): `sources_to_targets` rows of `{from_index, to_index, time, distance}`
 * in kilometres, and, asked `verbose`, `sources` and `targets` with where each point was moved
 * (null for a point with no road within its `search_cutoff`, whose cells are null), as Valhalla 3.7
 * and later answer; as `valhalla: 'fails-on-null'` its verbose answer fails on such a point (500,
 * error 499), as Valhalla 3.7's serializer reads; as `'before-3.7'` it refuses the whole request
 * instead (400, error code 171). It answers `POST /locate` (`edges` null for a point with no road
 * within its cutoff);
 * as `'before-3.4'` it does that too, and its `sources` and `targets` are the points as given, in
 * one more array (`[[{lat, lon}, …]]`).
 * Its roads: every point is moved north or south onto the nearest of its east-west roads, except
 * one whose latitude ends in OFF_ROAD, OFF_ROAD_METRES from any; the way between two moved points is
 * the straight line times DETOUR at ROAD_KMH (three times across the river), and there is no route
 * to one ending in NO_ROUTE, nor between the mainland and one ending in ISLAND (a matrix with both
 * is refused by Valhalla, as one with a connectivity map does: 400, error 170). Its limits on a
 * table are the servers' own checks: OSRM's `osrmMaxTableSize` (`--max-table-size`: sources ×
 * destinations above its square is refused, 400 `TooBig`) and Valhalla's `valhallaMaxPairs`
 * (`max_matrix_location_pairs`: sources × targets above it, 400, error 150). Counts the requests
 * and keeps them, so that a test can see what was sent.
 */
export class FakeRouters {
  behaviour: RouterBehaviour = 'ok';
  valhalla: 'current' | 'fails-on-null' | 'before-3.7' | 'before-3.4' = 'current';
  /** OSRM's `--max-table-size` (osrm-routed's default is 100). */
  osrmMaxTableSize = 100;
  /** Valhalla's `max_matrix_location_pairs` for `auto` (valhalla_build_config's default). */
  valhallaMaxPairs = 2500;
  /** Answers recorded from a real server, by request path: when set, the stand-in answers these and nothing else (404). */
  replay?: Map<string, { status: number; body: unknown }>;
  readonly requests: Array<{ engine: 'osrm' | 'valhalla'; url: string; body?: unknown }> = [];
  private server?: Server;
  /** The slow answers' timers, cleared at stop so that none holds the process. */
  private readonly waits = new Set<NodeJS.Timeout>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const wait of this.waits) clearTimeout(wait);
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** The stand-in's own answer from `a` to `b`, for a test to compare with: seconds and metres, or null. */
  static leg(a: Point, b: Point): { seconds: number; metres: number } | null {
    if (ends(b.lat, NO_ROUTE) || ends(a.lat, NO_ROUTE) || ends(a.lat, ISLAND) !== ends(b.lat, ISLAND)) return null;
    const metres = haversineMiles(FakeRouters.moved(a), FakeRouters.moved(b)) * 1609.344 * (ends(b.lat, ACROSS_RIVER) ? 3 : DETOUR);
    return { seconds: metres / (ROAD_KMH / 3.6), metres };
  }

  /** Where the stand-in moves a point onto its nearest road. */
  static moved(p: Point): Point {
    if (ends(p.lat, OFF_ROAD)) return { lat: p.lat + OFF_ROAD_METRES / 111_195, lng: p.lng };
    return { lat: Math.round(p.lat / ROAD_EVERY) * ROAD_EVERY, lng: p.lng };
  }

  /** How far, in metres, the stand-in moves a point onto its nearest road. */
  static snapMetres(p: Point): number {
    return haversineMiles(p, FakeRouters.moved(p)) * 1609.344;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const engine = url.pathname.startsWith('/table/v1/driving/')
      ? 'osrm'
      : url.pathname === '/sources_to_targets' || url.pathname === '/locate'
        ? 'valhalla'
        : undefined;
    let text = '';
    for await (const chunk of req) text += String(chunk);
    if (!engine) return send(res, 404, { error: 'no such service' });
    const body: unknown = text ? JSON.parse(text) : undefined;
    this.requests.push({ engine, url: req.url ?? '', body });
    if (this.replay) {
      const recorded = this.replay.get(req.url ?? '');
      return recorded ? send(res, recorded.status, recorded.body) : send(res, 404, { code: 'NotRecorded' });
    }
    if (this.behaviour === 'slow') await new Promise((resolve) => this.waits.add(setTimeout(resolve, 3000)));
    if (this.behaviour.startsWith('status:')) return send(res, Number(this.behaviour.slice(7)), { error: 'refused' });
    if (this.behaviour === 'unknown-error' && url.pathname !== '/locate') return send(res, 500, UNKNOWN);
    if (this.behaviour === 'not-json') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end('<html>busy</html>');
    }
    if (this.behaviour === 'malformed')
      return send(res, 200, engine === 'osrm' ? { code: 'Ok', durations: [[0]] } : { sources_to_targets: [[{ time: 'soon' }]] });
    if (url.pathname === '/locate') return this.locate(body as { locations: ValhallaLocation[] }, res);
    return engine === 'osrm' ? this.osrm(url, res) : this.matrix(body as ValhallaRequest, res);
  }

  private osrm(url: URL, res: ServerResponse): void {
    const points = decodeURIComponent(url.pathname.slice('/table/v1/driving/'.length))
      .split(';')
      .map((pair) => {
        const [lng, lat] = pair.split(',').map(Number);
        return { lat, lng };
      });
    // As src/engine/plugins/table.cpp checks it: no `sources` or `destinations` means all of them.
    const sources = url.searchParams.get('sources')?.split(';').length ?? points.length;
    const destinations = url.searchParams.get('destinations')?.split(';').length ?? points.length;
    if (sources * destinations > this.osrmMaxTableSize ** 2) return send(res, 400, { code: 'TooBig', message: 'Too many table coordinates' });
    const snap = (p: Point) => {
      const at = FakeRouters.moved(p);
      return { location: [round(at.lng, 6), round(at.lat, 6)], name: 'Road', distance: round(FakeRouters.snapMetres(p), 1) };
    };
    const origin = points[0];
    const legs = points.map((p, i) => (i === 0 ? { seconds: 0, metres: 0 } : FakeRouters.leg(origin, p)));
    send(res, 200, {
      code: 'Ok',
      durations: [legs.map((leg) => (leg ? Math.round(leg.seconds * 10) / 10 : null))],
      distances: [legs.map((leg) => (leg ? Math.round(leg.metres * 10) / 10 : null))],
      sources: [snap(origin)],
      destinations: points.map(snap),
    });
  }

  private matrix(request: ValhallaRequest, res: ServerResponse): void {
    const locations = [...request.sources, ...request.targets];
    const found = (l: ValhallaLocation) => FakeRouters.snapMetres({ lat: l.lat, lng: l.lon }) <= (l.search_cutoff ?? 35_000);
    // As src/loki/matrix_action.cc checks them: the pairs first, then (after each point's road) the regions.
    if (request.sources.length * request.targets.length > this.valhallaMaxPairs)
      return send(res, 400, { error_code: 150, error: `Exceeded max locations: ${this.valhallaMaxPairs}`, status_code: 400, status: 'Bad Request' });
    const islands = locations.filter((l) => ends(l.lat, ISLAND)).length;
    if (islands > 0 && islands < locations.length && locations.every(found))
      return send(res, 400, {
        error_code: 170,
        error: 'Locations are in unconnected regions. Go check/edit the map at osm.org',
        status_code: 400,
        status: 'Bad Request',
      });
    if (this.valhalla.startsWith('before-') && !locations.every(found))
      return send(res, 400, { error_code: 171, error: 'No suitable edges near location', status_code: 400, status: 'Bad Request' });
    if (this.valhalla === 'fails-on-null' && request.verbose !== false && !locations.every(found)) return send(res, 500, UNKNOWN);
    const origin = { lat: request.sources[0].lat, lng: request.sources[0].lon };
    const moved = (l: ValhallaLocation) => {
      const at = FakeRouters.moved({ lat: l.lat, lng: l.lon });
      return found(l) ? { lat: round(at.lat, 6), lon: round(at.lng, 6) } : null;
    };
    send(res, 200, {
      sources_to_targets: [
        request.targets.map((t, i) => {
          const leg = found(request.sources[0]) && found(t) ? FakeRouters.leg(origin, { lat: t.lat, lng: t.lon }) : null;
          return { from_index: 0, to_index: i, time: leg ? Math.round(leg.seconds) : null, distance: leg ? Math.round(leg.metres) / 1000 : null };
        }),
      ],
      ...(request.verbose === false
        ? {}
        : this.valhalla === 'before-3.4'
          ? { sources: [request.sources.map(({ lat, lon }) => ({ lat, lon }))], targets: [request.targets.map(({ lat, lon }) => ({ lat, lon }))] }
          : { sources: request.sources.map(moved), targets: request.targets.map(moved) }),
      units: 'kilometers',
    });
  }

  private locate(request: { locations: ValhallaLocation[] }, res: ServerResponse): void {
    send(
      res,
      200,
      request.locations.map((l) => {
        const at = FakeRouters.moved({ lat: l.lat, lng: l.lon });
        const found = FakeRouters.snapMetres({ lat: l.lat, lng: l.lon }) <= (l.search_cutoff ?? 35_000);
        return {
          input_lat: l.lat,
          input_lon: l.lon,
          edges: found ? [{ way_id: 1, correlated_lat: at.lat, correlated_lon: at.lng, side_of_street: 'neither', percent_along: 0.5 }] : null,
          nodes: found ? [] : null,
        };
      }),
    );
  }
}

interface ValhallaLocation {
  lat: number;
  lon: number;
  search_cutoff?: number;
}

interface ValhallaRequest {
  sources: ValhallaLocation[];
  targets: ValhallaLocation[];
  costing: string;
  verbose?: boolean;
}

/** Valhalla's answer to an exception of its own (error 499, HTTP 500). */
const UNKNOWN = { error_code: 499, error: 'Unknown', status_code: 500, status: 'Internal Server Error' };

const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
const ends = (lat: number, digits: number) => Math.abs(Math.abs(lat % 1) - digits) < 1e-9;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
