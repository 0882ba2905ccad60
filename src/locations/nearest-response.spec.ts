import { haversineMiles, type Point } from '../geo/geo.js';
import type { CatalogStore } from '../stores/store-catalog.js';
import type { Weekday } from '../stores/store.entity.js';
import { nearestResponse } from './nearest-response.js';
import { buildSnapshot, EMPTY_SNAPSHOT } from './store-snapshot.js';

const CENTER: Point = { lat: 40.75065, lng: -73.997293 };

const store = (code: string, name: string, lat: number, lng: number, hours: Partial<Record<Weekday, string>> = {}, timeZone = 'America/New_York'): CatalogStore => ({
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
});

type Body = { Code: string; locations: Array<{ name: string; distance: number }> };
const parse = (body: Buffer): Body => JSON.parse(body.toString('utf8')) as Body;

/** A point `miles` due north of CENTER. */
const north = (miles: number): Point => ({ lat: CENTER.lat + (miles / 3958.8) * (180 / Math.PI), lng: CENTER.lng });

describe('nearestResponse', () => {
  it('answers an empty list when nothing is loaded', () => {
    expect(nearestResponse(EMPTY_SNAPSHOT, CENTER, 10, 5).toString()).toBe('{"Code":"Success","locations":[]}');
  });

  it('lists stores nearest first, at most `limit`, with the distance rounded to hundredths', async () => {
    const far = north(3);
    const near = north(1);
    const snapshot = await buildSnapshot(1, [[store('F', 'Far', far.lat, far.lng), store('N', 'Near', near.lat, near.lng), store('X', 'Out of range', 40, -100)]]);
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
    const located = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { locations: Located[] }).locations.map(({ name, open, time_zone, next_change }) => ({ name, open, time_zone, next_change }));

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
      expect(plain.locations.map((l) => Object.keys(l))).toEqual(Array(3).fill(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']));
    });

    it('with openOnly passes over closed stores, so that limit counts open ones', async () => {
      // 40 closed stores nearer than the two open ones: more than limit + 8, so the walk must widen.
      const closed = Array.from({ length: 40 }, (_, i) => store(`Z${i}`, `Closed ${i}`, north(0.01 * (i + 1)).lat, CENTER.lng));
      const open = [store('O1', 'Open One', north(2).lat, CENTER.lng, WEDNESDAY('12:00 PM - 1:00 PM')), store('O2', 'Open Two', north(3).lat, CENTER.lng, WEDNESDAY('12:00 AM - 12:00 AM'))];
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
      const inRange = [store('N1', 'Closed near', north(1).lat, CENTER.lng), store('N2', 'Open on the boundary', north(5).lat, CENTER.lng, WEDNESDAY('12:00 PM - 1:00 PM'))];
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
});
