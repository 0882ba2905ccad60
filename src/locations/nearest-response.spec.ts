import { haversineMiles, type Point } from '../shared/great-circle.js';
import type { CatalogStore } from '../stores/store-catalog.js';
import type { Weekday } from '../stores/store.entity.js';
import { KM_PER_MILE } from '../shared/great-circle.js';
import {
  answer,
  type IndexView,
  type Moment,
  type RouteStop,
  type Routed,
  type SearchAnswer,
  type SearchPlan,
  type Travel,
  type TravelLeg,
} from './nearest-response.js';
import { buildSnapshot, EMPTY_SNAPSHOT, type Snapshot } from './store-snapshot.js';
import { planOf, type Scope } from '../../test/support/search-plans.js';

/** A search in miles within `maxMiles`: its body. */
const nearestResponse = (source: Snapshot | IndexView, center: Point, maxMiles: number, limit: number, moment?: Moment) =>
  answer(source, planOf(center, maxMiles, limit, moment, { unit: 'mi', nearestIfNone: false })).body;
const scopedResponse = (source: Snapshot | IndexView, center: Point, maxDistance: number, limit: number, moment: Moment | undefined, scope: Scope) =>
  answer(source, planOf(center, maxDistance, limit, moment, scope));

const CENTER: Point = { lat: 40.75065, lng: -73.997293 };

const store = (
  code: string,
  name: string,
  lat: number,
  lng: number,
  hours: Partial<Record<Weekday, string>> = {},
  timeZone = 'America/New_York',
): CatalogStore => ({
  code,
  name,
  address: '1 Test Street',
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat,
  lng,
  monday: 'Closed',
  tuesday: 'Closed',
  wednesday: 'Closed',
  thursday: 'Closed',
  friday: 'Closed',
  saturday: 'Closed',
  sunday: 'Closed',
  ...hours,
  time_zone: timeZone,
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services: '',
});

type Body = { Code: string; locations: Array<{ name: string; distance: number }> };
const parse = (body: Buffer): Body => JSON.parse(body.toString('utf8')) as Body;

/** A point `miles` due north of CENTER. */
const north = (miles: number): Point => ({ lat: CENTER.lat + (miles / 3958.8) * (180 / Math.PI), lng: CENTER.lng });

describe('answer: find, then write', () => {
  it('answers an empty list when nothing is loaded', () => {
    expect(nearestResponse(EMPTY_SNAPSHOT, CENTER, 10, 5).toString()).toBe('{"Code":"Success","locations":[]}');
  });

  it('lists stores nearest first, at most `limit`, with the distance rounded to hundredths', async () => {
    const far = north(3);
    const near = north(1);
    const snapshot = await buildSnapshot(1, [
      [store('F', 'Far', far.lat, far.lng), store('N', 'Near', near.lat, near.lng), store('X', 'Out of range', 40, -100)],
    ]);
    const body = parse(nearestResponse(snapshot, CENTER, 10, 5));
    expect(body.Code).toBe('Success');
    expect(body.locations.map((l) => [l.name, l.distance])).toEqual([
      ['Near', Math.round(haversineMiles(CENTER, near) * 100) / 100],
      ['Far', Math.round(haversineMiles(CENTER, far) * 100) / 100],
    ]);
    expect(parse(nearestResponse(snapshot, CENTER, 10, 1)).locations.map((l) => l.name)).toEqual(['Near']);
  });

  it('includes a store exactly on the boundary', async () => {
    const edge = north(2);
    const snapshot = await buildSnapshot(1, [[store('E', 'Edge', edge.lat, edge.lng)]]);
    const exact = haversineMiles(CENTER, edge);
    expect(parse(nearestResponse(snapshot, CENTER, exact, 5)).locations.map((l) => l.name)).toEqual(['Edge']);
    expect(parse(nearestResponse(snapshot, CENTER, exact * (1 - 1e-6), 5)).locations).toEqual([]);
  });

  it('breaks distance ties by name, then code, even among more tied stores than the walk first asks for', async () => {
    // 30 stores at one point: more than limit + 8, so the tree walk must widen to see them all.
    const tied = Array.from({ length: 30 }, (_, i) => store(`C${String(29 - i).padStart(2, '0')}`, i % 2 ? 'Beta' : 'Alpha', CENTER.lat, CENTER.lng));
    const snapshot = await buildSnapshot(1, [tied]);
    const names = parse(nearestResponse(snapshot, CENTER, 1, 20)).locations.map((l) => l.name);
    expect(names).toEqual([...Array<string>(15).fill('Alpha'), ...Array<string>(5).fill('Beta')]);
  });

  describe('at a moment (open_at, open_only)', () => {
    // Wednesday 2026-11-25, 17:30 UTC: 12:30 PM in New York (EST, -05:00), 10:30 AM in Denver (MST, -07:00).
    const AT = Date.UTC(2026, 10, 25, 17, 30);
    const WEDNESDAY = (text: string) => ({ wednesday: text });
    type Located = { name: string; open: boolean; time_zone: string; next_change: string | null };
    const located = (body: Buffer) =>
      (JSON.parse(body.toString('utf8')) as { locations: Located[] }).locations.map(({ name, open, time_zone, next_change }) => ({
        name,
        open,
        time_zone,
        next_change,
      }));

    it('adds open, time_zone and next_change, each store in its own zone; without a moment the locations are as before', async () => {
      const [a, b, c] = [north(1), north(2), north(3)];
      const snapshot = await buildSnapshot(1, [
        [
          store('A', 'Open in New York', a.lat, a.lng, WEDNESDAY('9:00 AM - 6:00 PM')),
          store('B', 'Not yet open in Denver', b.lat, b.lng, WEDNESDAY('11:00 AM - 7:00 PM'), 'America/Denver'),
          store('C', 'Closed all week', c.lat, c.lng),
        ],
      ]);
      expect(located(nearestResponse(snapshot, CENTER, 10, 5, { at: AT, openOnly: false }))).toEqual([
        { name: 'Open in New York', open: true, time_zone: 'America/New_York', next_change: '2026-11-25T18:00:00-05:00' },
        { name: 'Not yet open in Denver', open: false, time_zone: 'America/Denver', next_change: '2026-11-25T11:00:00-07:00' },
        { name: 'Closed all week', open: false, time_zone: 'America/New_York', next_change: null },
      ]);
      const plain = JSON.parse(nearestResponse(snapshot, CENTER, 10, 5).toString('utf8')) as { locations: object[] };
      expect(plain.locations.map((l) => Object.keys(l))).toEqual(
        Array(3).fill(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']),
      );
    });

    it('with openOnly passes over closed stores, so that limit counts open ones', async () => {
      // 40 closed stores nearer than the two open ones: more than limit + 8, so the walk must widen.
      const closed = Array.from({ length: 40 }, (_, i) => store(`Z${i}`, `Closed ${i}`, north(0.01 * (i + 1)).lat, CENTER.lng));
      const open = [
        store('O1', 'Open One', north(2).lat, CENTER.lng, WEDNESDAY('12:00 PM - 1:00 PM')),
        store('O2', 'Open Two', north(3).lat, CENTER.lng, WEDNESDAY('12:00 AM - 12:00 AM')),
      ];
      const snapshot = await buildSnapshot(1, [[...closed, ...open]]);
      expect(located(nearestResponse(snapshot, CENTER, 10, 2, { at: AT, openOnly: true }))).toEqual([
        { name: 'Open One', open: true, time_zone: 'America/New_York', next_change: '2026-11-25T13:00:00-05:00' },
        { name: 'Open Two', open: true, time_zone: 'America/New_York', next_change: '2026-11-26T00:00:00-05:00' },
      ]);
      expect(located(nearestResponse(snapshot, CENTER, 10, 1, { at: AT, openOnly: true })).map((l) => l.name)).toEqual(['Open One']);
      expect(located(nearestResponse(snapshot, CENTER, 2.5, 5, { at: AT, openOnly: true })).map((l) => l.name)).toEqual(['Open One']);
      expect(located(nearestResponse(snapshot, CENTER, 10, 5, { at: AT + 12 * 3600_000, openOnly: true }))).toEqual([]);
    });

    it('with openOnly and nothing open in range, looks at the stores in range and not at the whole catalogue', async () => {
      const inRange = [
        store('N1', 'Closed near', north(1).lat, CENTER.lng),
        store('N2', 'Open on the boundary', north(5).lat, CENTER.lng, WEDNESDAY('12:00 PM - 1:00 PM')),
      ];
      const beyond = [store('B0', 'Open just beyond', north(5.01).lat, CENTER.lng, WEDNESDAY('12:00 PM - 1:00 PM'))];
      // 2,000 closed stores on a grid about 100 miles north: the walk used to ask about each of them.
      for (let i = 0; i < 2000; i++) beyond.push(store(`F${i}`, `Far ${i}`, north(100).lat + 0.01 * Math.floor(i / 50), CENTER.lng + 0.01 * (i % 50)));
      const snapshot = await buildSnapshot(1, [[...inRange, ...beyond]]);
      const asked = new Set<string>();
      const scheduleOf = new Proxy(snapshot.scheduleOf, {
        get: (target, key) => {
          if (typeof key === 'string' && /^\d+$/.test(key)) asked.add(key);
          return Reflect.get(target, key) as unknown;
        },
      });
      const counted = { ...snapshot, scheduleOf };
      const edge = haversineMiles(CENTER, north(5));
      expect(located(nearestResponse(counted, CENTER, edge, 5, { at: AT, openOnly: true })).map((l) => l.name)).toEqual(['Open on the boundary']);
      expect(located(nearestResponse(counted, CENTER, edge, 5, { at: AT + 12 * 3600_000, openOnly: true }))).toEqual([]);
      expect(asked.size).toBeLessThan(200);
    });
  });

  describe('with a scope (distance_unit, nearest_if_none, region)', () => {
    const MILES: Scope = { unit: 'mi', nearestIfNone: false };
    const KM: Scope = { unit: 'km', nearestIfNone: false };
    const distances = (answer: { body: Buffer }) => parse(answer.body).locations.map((l) => [l.name, l.distance]);
    const round = (value: number) => Math.round(value * 100) / 100;

    it('in miles, answers exactly what the plain search answers, scope radius', async () => {
      const snapshot = await buildSnapshot(1, [[1, 2, 3, 7].map((miles) => store(`S${miles}`, `At ${miles}`, north(miles).lat, CENTER.lng))]);
      const answer = scopedResponse(snapshot, CENTER, 5, 25, undefined, MILES);
      expect(answer.scope).toBe('radius');
      expect(answer.body.equals(nearestResponse(snapshot, CENTER, 5, 25))).toBe(true);
    });

    it('in kilometres, reads max_distance in kilometres and gives each distance in kilometres, the boundary counting', async () => {
      const points = [1, 2, 3].map((miles) => north(miles));
      const snapshot = await buildSnapshot(1, [points.map((p, i) => store(`S${i}`, `Store ${i}`, p.lat, p.lng))]);
      const exactKm = points.map((p) => haversineMiles(CENTER, p) * KM_PER_MILE);
      const answer = scopedResponse(snapshot, CENTER, exactKm[1], 25, undefined, KM);
      expect(distances(answer)).toEqual([
        ['Store 0', round(exactKm[0])],
        ['Store 1', round(exactKm[1])],
      ]);
      expect(distances(scopedResponse(snapshot, CENTER, exactKm[1] * (1 - 1e-12), 25, undefined, KM))).toEqual([['Store 0', round(exactKm[0])]]);
      // 4 km is about 2.5 miles: two of the stores, where 4 miles would take all three.
      expect(distances(scopedResponse(snapshot, CENTER, 4, 25, undefined, KM)).map(([name]) => name)).toEqual(['Store 0', 'Store 1']);
    });

    it('with nearestIfNone, answers the single nearest store when none is in range, in either unit; none at all stays empty', async () => {
      const [far, farther] = [north(40), north(41)];
      const snapshot = await buildSnapshot(1, [[store('F2', 'Farther', farther.lat, farther.lng), store('F1', 'Far', far.lat, far.lng)]]);
      const nearest = scopedResponse(snapshot, CENTER, 5, 25, undefined, { ...MILES, nearestIfNone: true });
      expect(nearest.scope).toBe('nearest');
      expect(distances(nearest)).toEqual([['Far', round(haversineMiles(CENTER, far))]]);
      expect(distances(scopedResponse(snapshot, CENTER, 5, 25, undefined, { ...KM, nearestIfNone: true }))).toEqual([
        ['Far', round(haversineMiles(CENTER, far) * KM_PER_MILE)],
      ]);
      // In range: the radius answer, however many.
      const inRange = scopedResponse(snapshot, CENTER, 45, 25, undefined, { ...MILES, nearestIfNone: true });
      expect([inRange.scope, distances(inRange).length]).toEqual(['radius', 2]);
      const empty = scopedResponse(EMPTY_SNAPSHOT, CENTER, 5, 25, undefined, { ...MILES, nearestIfNone: true });
      expect([empty.scope, empty.body.toString()]).toEqual(['radius', '{"Code":"Success","locations":[]}']);
    });

    it('with nearestIfNone and openOnly, answers the nearest open store, and nothing when none is open', async () => {
      const AT = Date.UTC(2026, 10, 25, 17, 30); // Wednesday 12:30 PM in New York
      const [closed, open] = [north(10), north(60)];
      const snapshot = await buildSnapshot(1, [
        [store('C', 'Closed', closed.lat, closed.lng), store('O', 'Open', open.lat, open.lng, { wednesday: '9:00 AM - 6:00 PM' })],
      ]);
      const scope = { ...MILES, nearestIfNone: true };
      expect(distances(scopedResponse(snapshot, CENTER, 5, 25, { at: AT, openOnly: true }, scope))).toEqual([['Open', round(haversineMiles(CENTER, open))]]);
      const night = scopedResponse(snapshot, CENTER, 5, 25, { at: AT + 12 * 3600_000, openOnly: true }, scope);
      expect([night.scope, parse(night.body).locations]).toEqual(['radius', []]);
    });

    it('with nearestIfNone, breaks a tie for the nearest by name, then code', async () => {
      const spot = north(30);
      // More stores at one point than the walk first asks for (limit 1 + 8).
      const snapshot = await buildSnapshot(1, [
        Array.from({ length: 12 }, (_, i) => store(`T${String(11 - i).padStart(2, '0')}`, i === 7 ? 'Aardvark' : 'Zebra', spot.lat, spot.lng)),
      ]);
      expect(distances(scopedResponse(snapshot, CENTER, 5, 25, undefined, { ...MILES, nearestIfNone: true })).map(([name]) => name)).toEqual(['Aardvark']);
    });

    describe('a region', () => {
      const inState = (code: string, state: string, city: string, p: Point): CatalogStore => ({ ...store(code, code, p.lat, p.lng), state, city });
      // 100 stores in Kansas (more than GROUP_TREE_MIN: its own tree), 70 of them in Wichita (a tree too), a Garden City in Kansas and one in New York.
      const kansas = Array.from({ length: 100 }, (_, i) => inState(`KS${String(i).padStart(3, '0')}`, 'KS', i < 70 ? 'Wichita' : 'Topeka', north(100 + i)));
      const stores = [
        ...kansas,
        inState('GC', 'KS', 'Garden City', north(500)),
        inState('GC-NY', 'NY', 'Garden City', north(1)),
        inState('NY', 'NY', 'New York', CENTER),
      ];
      const region = (state: string, city?: string, limit = 200, unit: 'mi' | 'km' = 'mi') =>
        scopedResponse(snapshotOf, CENTER, 5, limit, undefined, { unit, nearestIfNone: false, region: { state, city } });
      let snapshotOf: Awaited<ReturnType<typeof buildSnapshot>>;
      beforeAll(async () => {
        snapshotOf = await buildSnapshot(1, [stores]);
      });

      it('answers every store of the state and no other, nearest first, whatever the distance, scope region', () => {
        const answer = region('KS');
        expect(answer.scope).toBe('region');
        expect(distances(answer).map(([name]) => name)).toEqual([...kansas.map((s) => s.code), 'GC']);
        expect(distances(answer)[0][1]).toBe(round(haversineMiles(CENTER, north(100))));
      });

      it('honours limit, and the unit', () => {
        expect(distances(region('KS', undefined, 3)).map(([name]) => name)).toEqual(['KS000', 'KS001', 'KS002']);
        expect(distances(region('KS', undefined, 1, 'km'))).toEqual([['KS000', round(haversineMiles(CENTER, north(100)) * KM_PER_MILE)]]);
      });

      it('answers the stores of a city of the state only, compared without regard to case or surrounding spaces', () => {
        expect(distances(region('KS', ' garden CITY ')).map(([name]) => name)).toEqual(['GC']);
        expect(distances(region('NY', 'Garden City')).map(([name]) => name)).toEqual(['GC-NY']);
        expect(distances(region('KS', 'wichita', 100)).map(([name]) => name)).toEqual(kansas.slice(0, 70).map((s) => s.code));
        expect(distances(region('KS', 'Wichita', 2)).map(([name]) => name)).toEqual(['KS000', 'KS001']);
      });

      it('answers an empty list for a state or city without stores', () => {
        expect(parse(region('WY').body).locations).toEqual([]);
        expect(parse(region('KS', 'Dodge City').body).locations).toEqual([]);
        expect(region('WY').scope).toBe('region');
      });
    });
  });

  describe('by road (travel): route, then order and filter, then slice', () => {
    type Travelled = { name: string; distance: number; travel_time: number | null; travel_distance: number | null };
    const travelled = (body: Buffer) =>
      (JSON.parse(body.toString('utf8')) as { locations: Travelled[] }).locations.map(({ name, travel_time, travel_distance }) => [
        name,
        travel_time,
        travel_distance,
      ]);
    // Straight-line order: At 1, At 2, At 3, At 4; by road At 3 is quickest and At 2 has no road.
    const LEGS: Record<string, TravelLeg | null> = {
      S1: { seconds: 600, metres: 5000 },
      S2: null,
      S3: { seconds: 120, metres: 2000 },
      S4: { seconds: 900, metres: 9000 },
    };
    let snapshot: Snapshot;
    beforeAll(async () => {
      snapshot = await buildSnapshot(1, [[1, 2, 3, 4].map((miles) => store(`S${miles}`, `At ${miles}`, north(miles).lat, CENTER.lng))]);
    });
    const plan = (travel: Travel, limit = 25): SearchPlan => ({ center: CENTER, area: { kind: 'radius', maxDistance: 5 }, unit: 'mi', limit, travel });
    /** The store a route step is asked about, by its point: the one of S1 … S4 at that latitude. */
    const codeAt = ({ point }: RouteStop) =>
      `S${[1, 2, 3, 4].reduce((best, miles) => (Math.abs(north(miles).lat - point.lat) < Math.abs(north(best).lat - point.lat) ? miles : best))}`;
    const byRoad =
      (asked: RouteStop[][] = []): Travel['route'] =>
      (stores) => {
        asked.push(stores);
        return { legs: stores.map((stop) => LEGS[codeAt(stop)]), source: 'osrm', keepMs: 1000 };
      };

    it('orders the reachable stores by time, then the unreachable ones in straight-line order; synchronous with a synchronous route', () => {
      const asked: RouteStop[][] = [];
      const got = answer(snapshot, plan({ candidates: 3, route: byRoad(asked) }, 2));
      expect(got).not.toBeInstanceOf(Promise);
      const { body, travel, keepMs } = got as SearchAnswer;
      // The route is asked about `candidates` stores (more than limit), nearest first; the answer is `limit` of them.
      expect(asked.map((stores) => stores.map(codeAt))).toEqual([['S1', 'S2', 'S3']]);
      expect(travelled(body)).toEqual([
        ['At 3', 2, 1.24],
        ['At 1', 10, 3.11],
      ]);
      expect([travel, keepMs]).toEqual(['osrm', 1000]);
      const all = answer(snapshot, plan({ candidates: 1, route: byRoad() })) as SearchAnswer;
      expect(travelled(all.body)).toEqual([
        ['At 3', 2, 1.24],
        ['At 1', 10, 3.11],
        ['At 4', 15, 5.59],
        ['At 2', null, null],
      ]);
    });

    it('leaves out the stores slower than maxMinutes, and the unreachable ones', () => {
      const { body } = answer(snapshot, plan({ candidates: 25, maxMinutes: 10, route: byRoad() })) as SearchAnswer;
      expect(travelled(body).map(([name]) => name)).toEqual(['At 3', 'At 1']);
    });

    it('without legs, writes the straight-line answer: the plain answer with null times, maxMinutes unused, whatever the candidates', () => {
      const plain = answer(snapshot, { center: CENTER, area: { kind: 'radius', maxDistance: 5 }, unit: 'mi', limit: 3 });
      const none = (): Routed => ({ source: 'straight-line', keepMs: 0 });
      for (const candidates of [0, 3, 25]) {
        const { body, travel } = answer(snapshot, plan({ candidates, maxMinutes: 1, route: none }, 3)) as SearchAnswer;
        expect(travel).toBe('straight-line');
        expect(JSON.parse(body.toString('utf8'))).toEqual({
          Code: 'Success',
          locations: (JSON.parse(plain.body.toString('utf8')) as { locations: object[] }).locations.map((l) => ({
            ...l,
            travel_time: null,
            travel_distance: null,
          })),
        });
      }
    });

    it('waits for an asynchronous route', async () => {
      const got = answer(snapshot, plan({ candidates: 25, route: (stores) => Promise.resolve(byRoad()(stores)) }, 1));
      expect(got).toBeInstanceOf(Promise);
      expect(travelled((await got).body)).toEqual([['At 3', 2, 1.24]]);
    });
  });
});
