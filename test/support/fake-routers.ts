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

/** What the stand-in does with the next requests. */
export type RouterBehaviour = 'ok' | 'slow' | 'status:429' | 'status:503' | 'malformed' | 'not-json';

/**
 * A local stand-in for the OSRM and Valhalla HTTP servers, answering in each one's documented
 * format: OSRM's table service (`GET /table/v1/driving/{lng,lat;…}?sources=0&annotations=…`:
 * `code`, `durations` and `distances` rows, `sources` and `destinations` with the `distance` each
 * point was moved to reach a road) and Valhalla's matrix (`POST /sources_to_targets`:
 * `sources_to_targets` rows of `{from_index, to_index, time, distance}`, kilometres; a location
 * with no road within its `search_cutoff` refuses the request with 400 and error code 171, as
 * Valhalla does). Its roads: the straight line times DETOUR at ROAD_KMH (three times across the
 * river), none near a point whose latitude ends in OFF_ROAD, and no route to one ending in NO_ROUTE. Counts the requests and
 * keeps them, so that a test can see what was sent.
 */
export class FakeRouters {
  behaviour: RouterBehaviour = 'ok';
  readonly requests: Array<{ engine: 'osrm' | 'valhalla'; url: string; body?: unknown }> = [];
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

  /** The stand-in's own answer from `a` to `b`, for a test to compare with: seconds and metres, or null. */
  static leg(a: Point, b: Point): { seconds: number; metres: number } | null {
    if (ends(b.lat, NO_ROUTE) || ends(a.lat, NO_ROUTE)) return null;
    const metres = haversineMiles(a, b) * 1609.344 * (ends(b.lat, ACROSS_RIVER) ? 3 : DETOUR);
    return { seconds: metres / (ROAD_KMH / 3.6), metres };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const engine = url.pathname.startsWith('/table/v1/driving/') ? 'osrm' : url.pathname === '/sources_to_targets' ? 'valhalla' : undefined;
    let text = '';
    for await (const chunk of req) text += String(chunk);
    if (!engine) return send(res, 404, { error: 'no such service' });
    const body: unknown = text ? JSON.parse(text) : undefined;
    this.requests.push({ engine, url: req.url ?? '', body });
    if (this.behaviour === 'slow') await new Promise((resolve) => setTimeout(resolve, 3000));
    if (this.behaviour.startsWith('status:')) return send(res, Number(this.behaviour.slice(7)), { error: 'refused' });
    if (this.behaviour === 'not-json') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end('<html>busy</html>');
    }
    if (this.behaviour === 'malformed')
      return send(res, 200, engine === 'osrm' ? { code: 'Ok', durations: [[0]] } : { sources_to_targets: [[{ time: 'soon' }]] });
    return engine === 'osrm' ? this.osrm(url, res) : this.valhalla(body as ValhallaRequest, res);
  }

  private osrm(url: URL, res: ServerResponse): void {
    const points = decodeURIComponent(url.pathname.slice('/table/v1/driving/'.length))
      .split(';')
      .map((pair) => {
        const [lng, lat] = pair.split(',').map(Number);
        return { lat, lng };
      });
    const snap = (p: Point) => ({ location: [p.lng, p.lat], name: 'Road', distance: ends(p.lat, OFF_ROAD) ? 8000 : 3.5 });
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

  private valhalla(request: ValhallaRequest, res: ServerResponse): void {
    const locations = [...request.sources, ...request.targets];
    if (locations.some((l) => ends(l.lat, OFF_ROAD) && (l.search_cutoff ?? 35_000) < 8000))
      return send(res, 400, { error_code: 171, error: 'No suitable edges near location', status_code: 400, status: 'Bad Request' });
    const origin = { lat: request.sources[0].lat, lng: request.sources[0].lon };
    send(res, 200, {
      sources_to_targets: [
        request.targets.map((t, i) => {
          const leg = FakeRouters.leg(origin, { lat: t.lat, lng: t.lon });
          return { from_index: 0, to_index: i, time: leg ? Math.round(leg.seconds) : null, distance: leg ? Math.round(leg.metres) / 1000 : null };
        }),
      ],
      sources: [request.sources],
      targets: [request.targets],
      units: 'kilometers',
    });
  }
}

interface ValhallaRequest {
  sources: Array<{ lat: number; lon: number; search_cutoff?: number }>;
  targets: Array<{ lat: number; lon: number; search_cutoff?: number }>;
  costing: string;
}

const ends = (lat: number, digits: number) => Math.abs(Math.abs(lat % 1) - digits) < 1e-9;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
