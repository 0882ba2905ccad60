import type { ConfigService } from '@nestjs/config';
import type { EnvironmentVariables } from '../config/environment.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CatalogStore, StoreCatalog } from '../stores/store-catalog.js';
import { StoreIndex } from './store-index.js';

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
});

/** A StoreIndex over stores held in this test: `rows` and `version` are what the next load reads. */
function indexOver(catalogue: { rows: CatalogStore[]; version: number }): StoreIndex {
  const catalog = {
    version: () => Promise.resolve(catalogue.version),
    pages: async function* () {
      yield await Promise.resolve(catalogue.rows);
    },
    onChange: () => undefined,
  } as unknown as StoreCatalog;
  const config = { get: () => 60_000 } as unknown as ConfigService<EnvironmentVariables, true>;
  const metrics = { storeIndexStores: { set: () => undefined } } as unknown as Metrics;
  return new StoreIndex(catalog, config, metrics);
}

const names = (body: Buffer) => (JSON.parse(body.toString('utf8')) as { locations: Array<{ name: string; open?: boolean }> }).locations.map((l) => l.name);
const CHELSEA = { lat: 40.7506, lng: -73.9972 };

describe('StoreIndex answers', () => {
  it('gives a repeated search the answer it worked out, and none of an older catalogue version', async () => {
    const catalogue = { rows: [store('A', 'Alder', 40.751, -73.997), store('B', 'Birch', 40.76, -73.99)], version: 1 };
    const index = indexOver(catalogue);
    await index.reload();
    const first = index.nearestResponse(CHELSEA, 5, 25);
    expect(names(first)).toEqual(['Alder', 'Birch']);
    expect(index.nearestResponse(CHELSEA, 5, 25)).toBe(first);
    // Another distance, limit or position is another answer.
    expect(names(index.nearestResponse(CHELSEA, 5, 1))).toEqual(['Alder']);
    expect(names(index.nearestResponse(CHELSEA, 0.1, 25))).toEqual(['Alder']);
    expect(names(index.nearestResponse({ lat: 40.76, lng: -73.99 }, 5, 1))).toEqual(['Birch']);

    catalogue.rows = [store('C', 'Cedar', 40.7507, -73.9973), ...catalogue.rows];
    catalogue.version = 2;
    await index.refresh();
    expect(names(index.nearestResponse(CHELSEA, 5, 25))).toEqual(['Cedar', 'Alder', 'Birch']);
    expect(names(index.nearestResponse(CHELSEA, 5, 1))).toEqual(['Cedar']);
  });

  it('works out a search with open_at every time: its answer depends on the moment', async () => {
    const index = indexOver({ rows: [store('A', 'Alder', 40.751, -73.997)], version: 1 });
    await index.reload();
    const monday = Date.parse('2026-11-23T12:00:00-05:00');
    const sunday = Date.parse('2026-11-22T12:00:00-05:00');
    const open = index.nearestResponse(CHELSEA, 5, 25, { at: monday, openOnly: false });
    expect(index.nearestResponse(CHELSEA, 5, 25, { at: monday, openOnly: false })).not.toBe(open);
    expect(JSON.parse(open.toString('utf8'))).toMatchObject({ locations: [{ name: 'Alder', open: true }] });
    expect(JSON.parse(index.nearestResponse(CHELSEA, 5, 25, { at: sunday, openOnly: false }).toString('utf8'))).toMatchObject({ locations: [{ name: 'Alder', open: false }] });
    expect(names(index.nearestResponse(CHELSEA, 5, 25, { at: sunday, openOnly: true }))).toEqual([]);
    // The plain search beside them is its own answer.
    expect(JSON.parse(index.nearestResponse(CHELSEA, 5, 25).toString('utf8')).locations[0]).not.toHaveProperty('open');
  });
});
