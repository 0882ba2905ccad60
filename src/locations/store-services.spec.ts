import type { Point } from '../shared/great-circle.js';
import type { CatalogStore } from '../stores/store-catalog.js';
import { answer, UnknownSearchServiceError, type Moment, type SearchPlan, type Travel } from './nearest-response.js';
import { buildSnapshot, hasServices, servicesMask, servicesOfStore, type Snapshot } from './store-snapshot.js';
import { planOf, type Scope } from '../../test/support/search-plans.js';

const CENTER: Point = { lat: 40.75065, lng: -73.997293 };
const MILES: Scope = { unit: 'mi', nearestIfNone: false };
const VOCABULARY = ['curbside_pickup', 'delivery', 'greenhouse', 'repotting', 'workshops'];

/** A store `miles` due north of CENTER, open Mondays 9 to 6 (or closed), with `services`. */
const store = (code: string, miles: number, services: string, open = true, state = 'NY'): CatalogStore => ({
  code,
  name: `Store ${code}`,
  address: '1 Test Street',
  city: 'New York',
  state,
  zip: '10001',
  lat: CENTER.lat + (miles / 3958.8) * (180 / Math.PI),
  lng: CENTER.lng,
  monday: open ? '9:00 AM - 6:00 PM' : 'Closed',
  tuesday: 'Closed',
  wednesday: 'Closed',
  thursday: 'Closed',
  friday: 'Closed',
  saturday: 'Closed',
  sunday: 'Closed',
  time_zone: 'America/New_York',
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services,
});

const STORES = [
  store('A', 0.1, ''),
  store('B', 0.2, 'delivery'),
  store('C', 0.3, 'curbside_pickup|delivery', false),
  store('D', 0.4, 'curbside_pickup|delivery|greenhouse'),
  store('E', 3, 'curbside_pickup|delivery'),
  // A slug the vocabulary does not have (a row edited by hand): left out, the others kept.
  store('F', 0.5, 'delivery|gone'),
  store('G', 50, 'curbside_pickup|delivery', true, 'NJ'),
];

type Body = { locations: Array<{ name: string; code?: string; services?: string[]; open?: boolean; travel_time?: number | null }> };
const parse = (body: Buffer) => JSON.parse(body.toString('utf8')) as Body;
const codes = (body: Buffer) => parse(body).locations.map((location) => location.name.slice('Store '.length));
const plan = (services: string[] | undefined, more: Partial<SearchPlan> = {}, scope: Scope = MILES, miles = 5): SearchPlan & { travel?: undefined } => ({
  ...planOf(CENTER, miles, 25, undefined, scope),
  services,
  ...more,
  travel: undefined,
});

describe('the services filter', () => {
  let snapshot: Snapshot;
  beforeAll(async () => {
    snapshot = await buildSnapshot(1, [STORES], [], VOCABULARY);
  });

  it("holds each store's services as bits over the vocabulary, leaving out a slug it does not have", () => {
    expect(snapshot.serviceWords).toBe(1);
    expect(STORES.map((_, n) => servicesOfStore(snapshot, n))).toEqual([
      [],
      ['delivery'],
      ['curbside_pickup', 'delivery'],
      ['curbside_pickup', 'delivery', 'greenhouse'],
      ['curbside_pickup', 'delivery'],
      ['delivery'],
      ['curbside_pickup', 'delivery'],
    ]);
    const mask = servicesMask(snapshot, ['delivery', 'curbside_pickup']);
    expect('mask' in mask && STORES.map((_, n) => hasServices(snapshot, n, mask.mask))).toEqual([false, false, true, true, true, false, true]);
    expect(servicesMask(snapshot, ['delivery', 'gone'])).toEqual({ unknown: 'gone' });
  });

  it('keeps only the stores that have every service asked for, and `limit` counts those', () => {
    expect(codes(answer(snapshot, plan(undefined)).body)).toEqual(['A', 'B', 'C', 'D', 'F', 'E']);
    expect(codes(answer(snapshot, plan(['delivery'])).body)).toEqual(['B', 'C', 'D', 'F', 'E']);
    expect(codes(answer(snapshot, plan(['curbside_pickup', 'delivery'])).body)).toEqual(['C', 'D', 'E']);
    expect(codes(answer(snapshot, plan(['greenhouse', 'curbside_pickup'])).body)).toEqual(['D']);
    expect(codes(answer(snapshot, plan(['workshops'])).body)).toEqual([]);
    expect(codes(answer(snapshot, { ...plan(['curbside_pickup']), limit: 2 }).body)).toEqual(['C', 'D']);
    // An empty list filters nothing.
    expect(answer(snapshot, plan([])).body).toEqual(answer(snapshot, plan(undefined)).body);
  });

  it('combines with the radius, nearest_if_none, a region and open_only', () => {
    expect(codes(answer(snapshot, plan(['curbside_pickup'], {}, MILES, 1)).body)).toEqual(['C', 'D']);
    // Nothing with a greenhouse within 0.3 miles: the nearest store that has one, however far.
    const nearest = answer(snapshot, plan(['greenhouse'], {}, { unit: 'mi', nearestIfNone: true }, 0.3));
    expect([nearest.scope, codes(nearest.body)]).toEqual(['nearest', ['D']]);
    const none = answer(snapshot, plan(['workshops'], {}, { unit: 'mi', nearestIfNone: true }, 0.3));
    expect([none.scope, codes(none.body)]).toEqual(['radius', []]);
    expect(codes(answer(snapshot, plan(['curbside_pickup'], {}, { unit: 'mi', nearestIfNone: false, region: { state: 'NJ' } })).body)).toEqual(['G']);
    expect(codes(answer(snapshot, plan(['delivery'], {}, { unit: 'km', nearestIfNone: false, region: { state: 'NY' } })).body)).toEqual([
      'B',
      'C',
      'D',
      'F',
      'E',
    ]);
    // Monday 2026-11-23, 12:30 in New York: C is closed.
    const monday: Moment = { at: Date.parse('2026-11-23T17:30:00Z'), openOnly: true };
    expect(codes(answer(snapshot, plan(['curbside_pickup'], { moment: monday })).body)).toEqual(['D', 'E']);
  });

  it('combines with travel_mode: the route step is asked only about the stores that have them', () => {
    const asked: number[] = [];
    const travel: Travel = {
      candidates: 10,
      route: (stops) => {
        asked.push(stops.length);
        // The nearer, the longer the drive: the order is the route's.
        return { legs: stops.map((_, i) => ({ seconds: 600 - i * 60, metres: 1000 })), source: 'test', keepMs: Infinity };
      },
    };
    const found = answer(snapshot, { ...plan(['curbside_pickup']), travel });
    expect(found instanceof Promise).toBe(false);
    expect(codes((found as { body: Buffer }).body)).toEqual(['E', 'D', 'C']);
    expect(asked).toEqual([3]);
  });

  it('refuses a slug the vocabulary does not have, naming it', () => {
    expect(() => answer(snapshot, plan(['delivery', 'valet']))).toThrow(new UnknownSearchServiceError('valet'));
    expect(new UnknownSearchServiceError('valet').message).toBe('services: "valet" is not a service of the chain');
  });

  it('writes the fields `include` asks for last, in UTF-8, and nothing more without it', async () => {
    const unicode = await buildSnapshot(1, [[{ ...STORES[3], code: 'NY-Ë-🌿' }]], [], VOCABULARY);
    const body = answer(unicode, plan(undefined, { include: ['code', 'services'] })).body;
    const [location] = parse(body).locations;
    expect(Object.keys(location).slice(-3)).toEqual(['distance', 'code', 'services']);
    expect(location).toMatchObject({ code: 'NY-Ë-🌿', services: ['curbside_pickup', 'delivery', 'greenhouse'] });
    expect(body.toString('utf8')).toContain('"code":"NY-Ë-🌿","services":["curbside_pickup","delivery","greenhouse"]}');
    expect(parse(answer(unicode, plan(undefined, { include: ['services'] })).body).locations[0]).not.toHaveProperty('code');
    // Without include, byte for byte the answer of a catalogue without services.
    const plain = await buildSnapshot(1, [STORES.map((s) => ({ ...s, services: '' }))]);
    expect(answer(snapshot, plan(undefined)).body.equals(answer(plain, plan(undefined)).body)).toBe(true);
    expect(answer(snapshot, plan(undefined, { include: [] })).body.equals(answer(plain, plan(undefined)).body)).toBe(true);
  });

  it('spreads a vocabulary of more than 32 services over several words, bit 31 included', async () => {
    const vocabulary = Array.from({ length: 70 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    const stores = [store('A', 0.1, 's00|s31|s69'), store('B', 0.2, 's31|s32'), store('C', 0.3, 's31'), store('D', 0.4, '')];
    const wide = await buildSnapshot(1, [stores], [], vocabulary);
    expect(wide.serviceWords).toBe(3);
    expect(stores.map((_, n) => servicesOfStore(wide, n))).toEqual([['s00', 's31', 's69'], ['s31', 's32'], ['s31'], []]);
    expect(codes(answer(wide, plan(['s31'])).body)).toEqual(['A', 'B', 'C']);
    expect(codes(answer(wide, plan(['s31', 's69'])).body)).toEqual(['A']);
    expect(codes(answer(wide, plan(['s32', 's31'])).body)).toEqual(['B']);
    expect(parse(answer(wide, plan(['s69'], { include: ['services'] })).body).locations[0].services).toEqual(['s00', 's31', 's69']);
  });
});
