import { haversineMiles, type Point } from '../geo/geo.js';
import type { CatalogStore } from '../stores/store-catalog.js';
import { nearestResponse } from './nearest-response.js';
import { buildSnapshot, EMPTY_SNAPSHOT } from './store-snapshot.js';

const CENTER: Point = { lat: 40.75065, lng: -73.997293 };

const store = (code: string, name: string, lat: number, lng: number): CatalogStore => ({
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
});
