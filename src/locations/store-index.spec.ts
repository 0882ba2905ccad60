import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { StoresSettings } from '../stores/stores.config.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CatalogStore, StoreCatalog } from '../stores/store-catalog.js';
import type { Point } from '../shared/great-circle.js';
import type { Moment, Travel } from './nearest-response.js';
import { StoreIndex, type IndexAnswer } from './store-index.js';
import { planOf, type Scope } from '../../test/support/search-plans.js';
import { withExposedGc, withoutExposedGc } from '../../test/support/exposed-gc.js';

const store = (code: string, name: string, lat: number, lng: number): CatalogStore => ({
  code,
  name,
  address: `${code} Main St`,
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat,
  lng,
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: '9:00 AM - 6:00 PM',
  thursday: '9:00 AM - 6:00 PM',
  friday: '9:00 AM - 6:00 PM',
  saturday: 'Closed',
  sunday: 'Closed',
  time_zone: 'America/New_York',
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services: '',
});

/** A StoreIndex over stores held in this test: `rows` and `version` are what the next load reads. */
function indexOver(catalogue: { rows: CatalogStore[]; version: number; gate?: Promise<void>; versionReads?: number }): StoreIndex {
  const catalog = {
    // `gate`, when set, holds every read of the version until it resolves.
    version: async () => {
      catalogue.versionReads = (catalogue.versionReads ?? 0) + 1;
      await catalogue.gate;
      return catalogue.version;
    },
    pages: async function* (pageSize: number) {
      for (let at = 0; at === 0 || at < catalogue.rows.length; at += pageSize) yield await Promise.resolve(catalogue.rows.slice(at, at + pageSize));
    },
    count: () => Promise.resolve(catalogue.rows.length),
    holidays: () => Promise.resolve([]),
    services: () => Promise.resolve([]),
    onChange: () => undefined,
    // No change log here: every change is a load.
    changesSince: () => Promise.resolve({ version: catalogue.version, reload: true }),
  } as unknown as StoreCatalog;
  const config = { STORE_INDEX_REFRESH_MS: 60_000 } as StoresSettings;
  const metrics = { storeIndexStores: { set: () => undefined } } as unknown as Metrics;
  return new StoreIndex(catalog, config, metrics);
}

/** A search in miles within `maxMiles`: its body. */
const nearest = (index: StoreIndex, center: Point, maxMiles: number, limit: number, moment?: Moment) =>
  index.search(planOf(center, maxMiles, limit, moment, { unit: 'mi', nearestIfNone: false })).body;
const scoped = (index: StoreIndex, center: Point, maxDistance: number, limit: number, moment: Moment | undefined, scope: Scope) =>
  index.search(planOf(center, maxDistance, limit, moment, scope));
const names = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { locations: Array<{ name: string; open?: boolean }> }).locations.map((l) => l.name);
const CHELSEA = { lat: 40.7506, lng: -73.9972 };

describe('StoreIndex loads', () => {
  // 25,000 stores: 13 pages of 2,000, so the load also gives memory back between pages.
  const rows = Array.from({ length: 25_000 }, (_, n) => store(`S${n}`, `Store ${n}`, 40 + (n % 100) / 1000, -74 + Math.floor(n / 100) / 1000));
  const loadLines = async (catalogue: { rows: CatalogStore[]; version: number }) => {
    const lines: string[] = [];
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void lines.push(String(message)));
    try {
      const index = indexOver(catalogue);
      await index.reload();
      return { index, lines };
    } finally {
      log.mockRestore();
    }
  };

  it('gives the heap memory it no longer uses back around the load of a large catalogue, not of a small one', async () => {
    await withExposedGc(async () => {
      const { index, lines } = await loadLines({ rows, version: 1 });
      expect(lines.at(-1)).toMatch(/^store index loaded: 25000 stores, .* \(\d+ ms of it giving memory back\)$/);
      // Every store was read, and each page in its place.
      expect(names(nearest(index, { lat: 40, lng: -74 }, 0.01, 1))).toEqual(['Store 0']);
      expect(names(nearest(index, { lat: 40.099, lng: -73.751 }, 0.01, 1))).toEqual(['Store 24999']);
      expect((await loadLines({ rows: rows.slice(0, 3), version: 1 })).lines.at(-1)).toMatch(/^store index loaded: 3 stores, .* ms$/);
    });
  });

  it('loads a large catalogue all the same where Node runs without --expose-gc, giving nothing back and saying so once', async () => {
    const warnings: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    try {
      await withoutExposedGc(async () => {
        const { index, lines } = await loadLines({ rows, version: 1 });
        expect(lines.at(-1)).toMatch(/^store index loaded: 25000 stores, .* ms$/);
        expect(names(nearest(index, { lat: 40.099, lng: -73.751 }, 0.01, 1))).toEqual(['Store 24999']);
        await index.reload();
        expect(warnings).toEqual([expect.stringMatching(/^node runs without --expose-gc: /)]);
      });
    } finally {
      warn.mockRestore();
    }
  });
});

describe('StoreIndex stops', () => {
  it('lets the refresh under way finish before the database closes, and starts none after', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      const catalogue: Parameters<typeof indexOver>[0] = { rows: [store('A', 'Alder', 40.751, -73.997)], version: 1 };
      const index = indexOver(catalogue);
      await index.onApplicationBootstrap();
      // Another instance's change, whose refresh is held at its first read until `release`.
      let release!: () => void;
      catalogue.gate = new Promise((resolve) => (release = resolve));
      catalogue.rows = [...catalogue.rows, store('B', 'Birch', 40.76, -73.99)];
      catalogue.version = 2;
      jest.advanceTimersByTime(60_000);
      let stopped = false;
      const stopping = index.onModuleDestroy().then(() => (stopped = true));
      await new Promise(setImmediate);
      expect(stopped).toBe(false);
      release();
      await stopping;
      // The refresh ended while the database was still open: the index took the change.
      expect(index.version).toBe(2);
      const reads = catalogue.versionReads;
      jest.advanceTimersByTime(600_000);
      await new Promise(setImmediate);
      expect(catalogue.versionReads).toBe(reads);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('StoreIndex answers', () => {
  it('gives a repeated search the answer it worked out, and none of an older catalogue version', async () => {
    const catalogue = { rows: [store('A', 'Alder', 40.751, -73.997), store('B', 'Birch', 40.76, -73.99)], version: 1 };
    const index = indexOver(catalogue);
    await index.reload();
    const first = nearest(index, CHELSEA, 5, 25);
    expect(names(first)).toEqual(['Alder', 'Birch']);
    expect(nearest(index, CHELSEA, 5, 25)).toBe(first);
    // Another distance, limit or position is another answer.
    expect(names(nearest(index, CHELSEA, 5, 1))).toEqual(['Alder']);
    expect(names(nearest(index, CHELSEA, 0.1, 25))).toEqual(['Alder']);
    expect(names(nearest(index, { lat: 40.76, lng: -73.99 }, 5, 1))).toEqual(['Birch']);

    catalogue.rows = [store('C', 'Cedar', 40.7507, -73.9973), ...catalogue.rows];
    catalogue.version = 2;
    await index.refresh();
    expect(names(nearest(index, CHELSEA, 5, 25))).toEqual(['Cedar', 'Alder', 'Birch']);
    expect(names(nearest(index, CHELSEA, 5, 1))).toEqual(['Cedar']);
  });

  it('works out a search with open_at every time: its answer depends on the moment', async () => {
    const index = indexOver({ rows: [store('A', 'Alder', 40.751, -73.997)], version: 1 });
    await index.reload();
    const monday = Date.parse('2026-11-23T12:00:00-05:00');
    const sunday = Date.parse('2026-11-22T12:00:00-05:00');
    const open = nearest(index, CHELSEA, 5, 25, { at: monday, openOnly: false });
    expect(nearest(index, CHELSEA, 5, 25, { at: monday, openOnly: false })).not.toBe(open);
    expect(JSON.parse(open.toString('utf8'))).toMatchObject({ locations: [{ name: 'Alder', open: true }] });
    expect(JSON.parse(nearest(index, CHELSEA, 5, 25, { at: sunday, openOnly: false }).toString('utf8'))).toMatchObject({
      locations: [{ name: 'Alder', open: false }],
    });
    expect(names(nearest(index, CHELSEA, 5, 25, { at: sunday, openOnly: true }))).toEqual([]);
    // The plain search beside them is its own answer.
    expect(JSON.parse(nearest(index, CHELSEA, 5, 25).toString('utf8')).locations[0]).not.toHaveProperty('open');
  });

  it('keeps a scoped answer by every argument of it: the unit, nearest_if_none, the region and its city as compared', async () => {
    const catalogue = {
      rows: [store('A', 'Alder', 40.751, -73.997), { ...store('K', 'Kansas Oak', 37.97, -100.87), city: 'Garden City', state: 'KS' }],
      version: 1,
    };
    const index = indexOver(catalogue);
    await index.reload();
    const miles = { unit: 'mi' as const, nearestIfNone: true };
    const nearest = scoped(index, CHELSEA, 5, 25, undefined, miles);
    expect(names(nearest.body)).toEqual(['Alder']);
    expect(scoped(index, CHELSEA, 5, 25, undefined, miles)).toBe(nearest);
    // The same point and distance in kilometres is another answer, with its own distances.
    const km = scoped(index, CHELSEA, 5, 25, undefined, { unit: 'km', nearestIfNone: false });
    expect(km.body).not.toBe(nearest.body);
    const distance = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { locations: Array<{ distance: number }> }).locations[0].distance;
    expect(distance(km.body)).toBeCloseTo(distance(nearest.body) * 1.609344, 1);
    // A region: its city compared as the snapshot compares it, so two spellings are one answer.
    const city = scoped(index, CHELSEA, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'KS', city: 'Garden City' } });
    expect(city.scope).toBe('region');
    expect(names(city.body)).toEqual(['Kansas Oak']);
    expect(scoped(index, CHELSEA, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'KS', city: ' garden CITY ' } })).toBe(city);
    expect(names(scoped(index, CHELSEA, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'KS', city: 'Dodge City' } }).body)).toEqual([]);
    expect(names(scoped(index, CHELSEA, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'NY' } }).body)).toEqual(['Alder']);
    // Nearest if none, with nothing in 1 mile of Garden City: the nearest store, and the scope says so.
    const GARDEN_CITY_EAST = { lat: 37.97, lng: -100.5 };
    const far = scoped(index, GARDEN_CITY_EAST, 1, 25, undefined, miles);
    expect([far.scope, names(far.body)]).toEqual(['nearest', ['Kansas Oak']]);
    expect(scoped(index, GARDEN_CITY_EAST, 1, 25, undefined, miles)).toBe(far);
    // With open_at the answer is worked out each time.
    const monday = { at: Date.parse('2026-11-23T12:00:00-05:00'), openOnly: false };
    expect(scoped(index, CHELSEA, 5, 25, monday, miles).body).not.toBe(scoped(index, CHELSEA, 5, 25, monday, miles).body);
    // A new catalogue version answers afresh.
    catalogue.rows = [store('C', 'Cedar', 40.7507, -73.9973), ...catalogue.rows];
    catalogue.version = 2;
    await index.refresh();
    expect(names(scoped(index, CHELSEA, 5, 25, undefined, miles).body)).toEqual(['Cedar', 'Alder']);
  });

  it('keeps a search by road for as long as its route step says, and not when the catalogue moved while it routed', async () => {
    const catalogue = { rows: [store('A', 'Alder', 40.751, -73.997)], version: 1 };
    const index = indexOver(catalogue);
    await index.reload();
    let asked = 0;
    const byRoad = (keepMs: number, route?: Travel['route']) => {
      const travel: Travel = {
        candidates: 5,
        route: (stores) => {
          asked++;
          return route ? route(stores) : { legs: stores.map(() => ({ seconds: 60, metres: 1000 })), source: 'osrm', keepMs };
        },
      };
      return { center: CHELSEA, area: { kind: 'radius' as const, maxDistance: 5 }, unit: 'mi' as const, limit: 25, travel };
    };
    // A failure (0): asked again each time. Until the catalogue changes (Infinity): asked once.
    const failed = index.search(byRoad(0)) as IndexAnswer;
    expect(index.search(byRoad(0))).not.toBe(failed);
    expect(asked).toBe(2);
    const kept = index.search({ ...byRoad(Infinity), limit: 24 }) as IndexAnswer;
    expect(index.search({ ...byRoad(Infinity), limit: 24 })).toBe(kept);
    expect(asked).toBe(3);
    // The catalogue moves while the route is asked: the answer is given, and not kept.
    const later = async () => {
      catalogue.rows = [store('B', 'Birch', 40.76, -73.99), ...catalogue.rows];
      catalogue.version = 2;
      await index.refresh();
      return { source: 'osrm', legs: [{ seconds: 60, metres: 1000 }], keepMs: Infinity };
    };
    const moved = await index.search({ ...byRoad(Infinity, later), limit: 1 });
    expect(names(moved.body)).toEqual(['Alder']);
    expect(names((await index.search({ ...byRoad(Infinity), limit: 1 })).body)).toEqual(['Alder']);
    expect(asked).toBe(5);
  });
});
