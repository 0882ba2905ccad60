import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { around } from 'geokdbush';
import KDBush from 'kdbush';
import { DataSource } from 'typeorm';
import type { EnvironmentVariables } from '../config/environment.js';
import type { Location } from './dto/nearest-locations.dto.js';
import { EARTH_RADIUS_MILES, haversineMiles, type Point } from './geo.js';
import { Store } from './store.entity.js';

/** geokdbush measures in kilometres on a sphere of this radius; only the angle matters. */
const GEOKDBUSH_EARTH_RADIUS_KM = 6371;
const LOAD_PAGE = 5000;

interface IndexedStore extends Point {
  code: string;
  name: string;
  /** The response object without `distance`, built once per load. */
  location: Omit<Location, 'distance'>;
}

interface Snapshot {
  version: number;
  stores: IndexedStore[];
  index?: KDBush;
}

export interface Nearby {
  store: IndexedStore;
  distance: number;
}

const byDistanceNameCode = (a: Nearby, b: Nearby) =>
  a.distance - b.distance ||
  (a.store.name < b.store.name ? -1 : a.store.name > b.store.name ? 1 : 0) ||
  (a.store.code < b.store.code ? -1 : a.store.code > b.store.code ? 1 : 0);

/**
 * The stores, held in memory in a k-d tree (kdbush + geokdbush), so that a search costs
 * about the same with 100,000 stores as with 1,000: a k-nearest walk of the tree, never a
 * scan of the table, whatever the number of stores in range.
 *
 * Freshness: an import bumps `store_catalog.version` in its transaction and reloads this
 * instance's index at once; every other instance polls the version every
 * STORE_INDEX_REFRESH_MS and reloads when it changed. So a search may lag an import made
 * elsewhere by at most that interval plus the reload (about a second for 100,000 stores).
 * While a reload runs, searches use the previous snapshot.
 */
@Injectable()
export class StoreIndex implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('StoreIndex');
  private snapshot: Snapshot = { version: -1, stores: [] };
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: ConfigService<EnvironmentVariables, true>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.refresh(), this.config.get('STORE_INDEX_REFRESH_MS', { infer: true }));
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  get size(): number {
    return this.snapshot.stores.length;
  }

  /** Reloads if another instance changed the stores; a failure keeps the current snapshot. */
  async refresh(): Promise<void> {
    try {
      if ((await this.readVersion()) !== this.snapshot.version) await this.reload();
    } catch (error) {
      this.logger.warn(`store index not refreshed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Loads every store and swaps the snapshot; concurrent callers share one load. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /**
   * At most `limit` stores within `maxMiles` of `center` (boundary included), nearest
   * first, ties by name then code.
   */
  nearest(center: Point, maxMiles: number, limit: number): Nearby[] {
    const { stores, index } = this.snapshot;
    if (!index) return [];
    // A hair wider than asked, so rounding never drops a store on the boundary; the exact
    // haversine distance (R = 3958.8 miles) decides below.
    const maxKm = (maxMiles / EARTH_RADIUS_MILES) * GEOKDBUSH_EARTH_RADIUS_KM * (1 + 1e-9);
    for (let wanted = limit + 8; ; wanted *= 2) {
      const ids = around(index, center.lng, center.lat, wanted, maxKm);
      const found = ids
        .map((id) => ({ store: stores[id], distance: haversineMiles(center, stores[id]) }))
        .filter(({ distance }) => distance <= maxMiles)
        .sort(byDistanceNameCode);
      // The walk stopped at `wanted`: a store tied with the last one kept may lie beyond it.
      const complete = ids.length < wanted || (found.length >= limit && found[limit - 1].distance < found[found.length - 1].distance);
      if (complete) return found.slice(0, limit);
    }
  }

  private async readVersion(): Promise<number> {
    const rows: Array<{ version: number | string }> = await this.dataSource.query('SELECT version FROM store_catalog WHERE id = 1');
    return Number(rows[0]?.version ?? 0);
  }

  private async load(): Promise<void> {
    const started = Date.now();
    const version = await this.readVersion();
    const repository = this.dataSource.getRepository(Store);
    const intern = new Map<string, string>();
    const same = (text: string) => {
      const known = intern.get(text);
      if (known !== undefined) return known;
      intern.set(text, text);
      return text;
    };
    const stores: IndexedStore[] = [];
    for (let after = 0; ; ) {
      const page = await repository
        .createQueryBuilder('store')
        .where('store.id > :after', { after })
        .orderBy('store.id', 'ASC')
        .limit(LOAD_PAGE)
        .getMany();
      for (const s of page) {
        stores.push({
          code: s.code,
          name: s.name,
          lat: s.lat,
          lng: s.lng,
          location: Object.freeze({
            name: s.name,
            address: s.address,
            city: same(s.city),
            state: same(s.state),
            zip: s.zip,
            business_hours: Object.freeze({
              Monday: same(s.monday),
              Tuesday: same(s.tuesday),
              Wednesday: same(s.wednesday),
              Thursday: same(s.thursday),
              Friday: same(s.friday),
              Saturday: same(s.saturday),
              Sunday: same(s.sunday),
            }),
            lat: s.lat.toFixed(6),
            lng: s.lng.toFixed(6),
          }),
        });
      }
      if (page.length < LOAD_PAGE) break;
      after = page[page.length - 1].id;
    }
    let index: KDBush | undefined;
    if (stores.length > 0) {
      index = new KDBush(stores.length);
      for (const store of stores) index.add(store.lng, store.lat);
      index.finish();
    }
    this.snapshot = { version, stores, index };
    this.logger.log(`store index loaded: ${stores.length} stores (version ${version}) in ${Date.now() - started} ms`);
  }
}
