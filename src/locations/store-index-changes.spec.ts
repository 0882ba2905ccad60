import type { Metrics } from '../metrics/metrics.js';
import type { CatalogChange, CatalogHoliday, CatalogStore, StoreCatalog } from '../stores/store-catalog.js';
import type { StoresSettings } from '../stores/stores.config.js';
import { answer, type Moment, type SearchPlan } from './nearest-response.js';
import { StoreIndex } from './store-index.js';
import { buildSnapshot } from './store-snapshot.js';
import { planOf, type Scope } from '../../test/support/search-plans.js';

const MILES: Scope = { unit: 'mi', nearestIfNone: false };

/** mulberry32: a small seeded generator, so that a failing sequence can be run again. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOURS = ['9:00 AM - 6:00 PM', '10:00 AM - 4:00 PM', 'Closed', '12:00 AM - 11:59 PM'];
const ZONES = ['America/New_York', 'America/Chicago', 'America/Los_Angeles'];
// Around the Monday the searches ask about (2026-11-23): special days, closures and holidays that decide it or the days after.
const SPECIAL = ['', '', '2026-11-23=Closed', '2026-11-23=10:00 AM - 12:00 PM; 2026-11-24=Closed', '2026-11-25=12:00 AM - 12:00 AM'];
const CLOSURES = ['', '', '', '2026-11-20/2026-11-23', '2026-11-23/..', '2026-11-24/2026-12-31'];
const HOLIDAYS: CatalogHoliday[] = [
  { date: '2026-11-23', name: 'Founders Day', hours: '1:00 PM - 3:00 PM', states: 'NJ' },
  { date: '2026-11-26', name: 'Thanksgiving Day', hours: 'Closed', states: '' },
];
// The chain's services, and the stores' lists of them (sorted, as the door stores them; one names a service the chain no longer has, as a row edited by hand).
const SERVICES = ['curbside_pickup', 'delivery', 'greenhouse', 'repotting'];
const STORE_SERVICES = ['', '', 'delivery', 'curbside_pickup|delivery', 'greenhouse|repotting', 'curbside_pickup|delivery|greenhouse', 'delivery|workshops'];
const STATES = ['NY', 'NJ', 'CT'];
const CITIES = ['Springfield', 'Riverside', 'Salem'];
// Few names (one with a character above the Basic Multilingual Plane, ordered by UTF-16 code
// units) and few positions, so that distance ties, broken by name then code, are everywhere.
const NAMES = ['Alder', 'Birch', 'Cedar', 'Ëlm', 'Fern 🌿', 'Fern', 'ﬀ Oak'];

/** A catalogue with many ties: stores on a coarse grid of a few square miles, most sharing a position with others. */
function storeMaker(next: () => number) {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  return (code: string): CatalogStore => ({
    code,
    name: pick(NAMES),
    address: `${code} Main St`,
    city: pick(CITIES),
    state: pick(STATES),
    zip: '10001',
    // Text, as mysql2 gives DECIMAL: the snapshot reads either.
    lat: (40.7 + Math.floor(next() * 8) * 0.01).toFixed(6),
    lng: (-74 + Math.floor(next() * 8) * 0.01).toFixed(6),
    monday: pick(HOURS),
    tuesday: pick(HOURS),
    wednesday: pick(HOURS),
    thursday: pick(HOURS),
    friday: pick(HOURS),
    saturday: pick(HOURS),
    sunday: pick(HOURS),
    time_zone: pick(ZONES),
    special_hours: pick(SPECIAL),
    temporarily_closed: pick(CLOSURES),
    phone: '',
    website: '',
    email: '',
    services: pick(STORE_SERVICES),
  });
}

/**
 * A catalogue held in this test as the database would hold it: its stores by code, its version,
 * and each version's change as StoreCatalog.changesSince gives it (the stores as they are now).
 */
class Catalogue {
  readonly stores = new Map<string, CatalogStore>();
  version = 1;
  readonly log = new Map<number, string[] | null>();

  /** Writes `puts` and removes `removes` as one commit; the change the door hands its listeners. */
  commit(puts: CatalogStore[], removes: string[]): CatalogChange {
    for (const store of puts) this.stores.set(store.code, store);
    for (const code of removes) this.stores.delete(code);
    this.version++;
    const codes = [...new Set([...puts.map((s) => s.code), ...removes])];
    this.log.set(this.version, codes);
    return { version: this.version, ...this.now(codes) };
  }

  now(codes: string[]) {
    return {
      stores: codes.flatMap((code) => (this.stores.has(code) ? [this.stores.get(code)!] : [])),
      removed: codes.filter((code) => !this.stores.has(code)),
    };
  }

  /** One page of every store, as they are when the reader starts reading. */
  private async *pages(): AsyncGenerator<CatalogStore[]> {
    yield await Promise.resolve([...this.stores.values()]);
  }

  catalog(): StoreCatalog {
    return {
      version: () => Promise.resolve(this.version),
      pages: () => this.pages(),
      count: () => Promise.resolve(this.stores.size),
      holidays: () => Promise.resolve(HOLIDAYS),
      services: () => Promise.resolve(SERVICES),
      onChange: () => undefined,
      changesSince: (since: number): Promise<CatalogChange> => {
        const codes = new Set<string>();
        for (let v = since + 1; v <= this.version; v++) {
          const logged = this.log.get(v);
          if (!logged) return Promise.resolve({ version: this.version, reload: true });
          for (const code of logged) codes.add(code);
        }
        return Promise.resolve({ version: this.version, ...this.now([...codes]) });
      },
    } as unknown as StoreCatalog;
  }
}

const names = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { locations: Array<{ name: string }> }).locations.map((l) => l.name);

function indexOver(catalogue: Catalogue): StoreIndex {
  const catalog = catalogue.catalog();
  const config = { STORE_INDEX_REFRESH_MS: 60_000 } as StoresSettings;
  const metrics = { storeIndexStores: { set: () => undefined } } as unknown as Metrics;
  return new StoreIndex(catalog, config, metrics);
}

/** What a search asks besides its area: nothing, or a services filter and `include` (the `filter` seed's searches). */
type Extra = Pick<SearchPlan, 'services' | 'include'>;
const FILTERED: Extra = { services: ['curbside_pickup', 'delivery'], include: ['code', 'services'] };

/** Every kind of search, at a few places, each with `extra`: [what, the index's answer, a fresh snapshot's answer]. */
async function compare(index: StoreIndex, catalogue: Catalogue, next: () => number, extra: Extra = {}): Promise<void> {
  // The fresh snapshot reads the stores in another order than the index did: only the answers must agree.
  const rows = [...catalogue.stores.values()].sort(() => next() - 0.5);
  const fresh = await buildSnapshot(catalogue.version, [rows], HOLIDAYS, SERVICES);
  const monday: Moment = { at: Date.parse('2026-11-23T17:30:00Z'), openOnly: false };
  const mondayOpen: Moment = { ...monday, openOnly: true };
  const centers = [
    { lat: 40.73, lng: -73.97 },
    { lat: 40.7, lng: -74 },
    { lat: 40.7 + next() * 0.08, lng: -74 + next() * 0.08 },
  ];
  for (const center of centers) {
    for (const [miles, limit] of [
      [0.5, 3],
      [2, 10],
      [10, 200],
      [0, 5],
    ]) {
      for (const moment of [undefined, monday, mondayOpen]) {
        const what = `radius ${JSON.stringify(center)} ${miles} ${limit} ${JSON.stringify(moment)}`;
        expect([what, index.search({ ...planOf(center, miles, limit, moment, MILES), ...extra }).body.toString()]).toEqual([
          what,
          answer(fresh, { ...planOf(center, miles, limit, moment, MILES), ...extra }).body.toString(),
        ]);
      }
      const scopes: Scope[] = [
        { unit: 'km', nearestIfNone: false },
        { unit: 'km', nearestIfNone: true },
        { unit: 'mi', nearestIfNone: true },
        ...STATES.map((state): Scope => ({ unit: 'mi', nearestIfNone: false, region: { state } })),
        ...CITIES.map((city): Scope => ({ unit: 'km', nearestIfNone: false, region: { state: 'NY', city } })),
        { unit: 'mi', nearestIfNone: false, region: { state: 'TX' } },
      ];
      for (const scope of scopes) {
        for (const moment of [undefined, mondayOpen]) {
          const what = `scoped ${JSON.stringify(center)} ${miles} ${limit} ${JSON.stringify(scope)} ${JSON.stringify(moment)}`;
          const got = index.search({ ...planOf(center, miles, limit, moment, scope), ...extra });
          const want = answer(fresh, { ...planOf(center, miles, limit, moment, scope), ...extra });
          expect([what, got.scope, got.body.toString()]).toEqual([what, want.scope, want.body.toString()]);
        }
      }
    }
  }
}

describe('StoreIndex applying changes', () => {
  // Seed 4's searches filter by services and include code and services: the stores' masks and extras over the same changes.
  it.each([
    [1, {}],
    [2, {}],
    [3, {}],
    [4, FILTERED],
  ])('answers every kind of search as a snapshot built afresh would, byte for byte, over random changes (seed %i, %j)', async (seed, extra: Extra) => {
    const next = random(seed);
    const make = storeMaker(next);
    const catalogue = new Catalogue();
    for (let n = 0; n < 300; n++) catalogue.stores.set(`S${n}`, make(`S${n}`));
    const index = indexOver(catalogue);
    // A few rebuilds happen along the way, some while changes keep coming.
    index.changesMax = 40;
    await index.reload();
    await compare(index, catalogue, next, extra);
    let added = 0;
    for (let step = 0; step < 30; step++) {
      const codes = [...catalogue.stores.keys()];
      const puts: CatalogStore[] = [];
      const removes: string[] = [];
      for (let k = 1 + Math.floor(next() * 6); k > 0; k--) {
        const roll = next();
        if (roll < 0.35) puts.push(make(`N${added++}`));
        else if (roll < 0.7) puts.push(make(codes[Math.floor(next() * codes.length)]));
        // The same position with another name: only the tie order changes.
        else if (roll < 0.8) {
          const store = catalogue.stores.get(codes[Math.floor(next() * codes.length)])!;
          puts.push({ ...store, name: NAMES[Math.floor(next() * NAMES.length)] });
        } else removes.push(codes[Math.floor(next() * codes.length)]);
      }
      // A code both written and removed in one commit is removed.
      const change = catalogue.commit(
        puts.filter((store) => !removes.includes(store.code)),
        removes,
      );
      if (next() < 0.7) {
        // This instance's own write: the change as the door hands it.
        await index.apply(change);
      } else {
        // Another instance's: some versions later, read from the log.
        if (next() < 0.5) continue;
        await index.refresh();
      }
      if (next() < 0.3) await index.settled();
      expect(index.version).toBe(catalogue.version);
      await compare(index, catalogue, next, extra);
    }
    await index.settled();
    await compare(index, catalogue, next, extra);
  });

  it('catches up from the log when a change of its own follows one it has not seen, and loads everything when the log does not cover the gap', async () => {
    const next = random(7);
    const make = storeMaker(next);
    const catalogue = new Catalogue();
    for (let n = 0; n < 50; n++) catalogue.stores.set(`S${n}`, make(`S${n}`));
    const index = indexOver(catalogue);
    await index.reload();
    catalogue.commit([make('S1')], ['S2']);
    const own = catalogue.commit([make('X1')], []);
    await index.apply(own);
    expect(index.version).toBe(catalogue.version);
    await compare(index, catalogue, next);
    // Versions the log no longer holds (pruned, or too big to list): a load.
    catalogue.commit([make('S3')], []);
    catalogue.log.delete(catalogue.version);
    catalogue.commit([make('S4')], ['S5']);
    await index.refresh();
    expect(index.version).toBe(catalogue.version);
    await compare(index, catalogue, next);
    // A change marked "reload" by the door, from this instance.
    catalogue.commit([make('S6')], []);
    catalogue.log.set(catalogue.version, null);
    await index.apply({ version: catalogue.version, reload: true });
    expect(index.version).toBe(catalogue.version);
    await compare(index, catalogue, next);
  });

  it('keeps the answers no change can alter, and forgets those it can', async () => {
    const catalogue = new Catalogue();
    const make = storeMaker(random(9));
    const at = (code: string, lat: number, lng: number, state = 'NY') => ({ ...make(code), lat, lng, state, name: code });
    catalogue.stores.set('A', at('A', 40.75, -73.99));
    catalogue.stores.set('B', at('B', 40.76, -73.99));
    catalogue.stores.set('F', at('F', 42.5, -71, 'MA'));
    const index = indexOver(catalogue);
    await index.reload();
    const here = { lat: 40.75, lng: -73.99 };
    const there = { lat: 42.5, lng: -71 };
    const near = index.search(planOf(here, 5, 25, undefined, MILES)).body;
    const far = index.search(planOf(there, 5, 25, undefined, MILES)).body;
    const region = index.search(planOf(there, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'MA' } }));
    // A store added within the first answer's reach, far from the second's and in another state than the region's: only the first goes.
    await index.apply(catalogue.commit([at('C', 40.77, -73.98)], []));
    expect(index.search(planOf(here, 5, 25, undefined, MILES)).body).not.toBe(near);
    expect(index.search(planOf(there, 5, 25, undefined, MILES)).body).toBe(far);
    expect(index.search(planOf(there, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'MA' } }))).toBe(region);
    // Removing the store the second answer lists: it goes.
    await index.apply(catalogue.commit([], ['F']));
    expect(JSON.parse(index.search(planOf(there, 5, 25, undefined, MILES)).body.toString())).toEqual({ Code: 'Success', locations: [] });
    expect(index.search(planOf(there, 5, 25, undefined, { unit: 'mi', nearestIfNone: false, region: { state: 'MA' } }))).not.toBe(region);
    // A store moved far away from where it was: the answers near either place go, as a fresh search shows.
    const moved = index.search(planOf(here, 5, 25, undefined, MILES)).body;
    await index.apply(catalogue.commit([at('A', 42.5, -71.001, 'MA')], []));
    expect(names(index.search(planOf(here, 5, 25, undefined, MILES)).body)).toEqual(['B', 'C']);
    expect(index.search(planOf(here, 5, 25, undefined, MILES)).body).not.toBe(moved);
    expect(names(index.search(planOf(there, 5, 25, undefined, MILES)).body)).toEqual(['A']);
  });
});
