import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { LRUCache } from 'lru-cache';
import { storesConfig } from '../stores/stores.config.js';
import type { Point } from '../geo/geo.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog } from '../stores/store-catalog.js';
import { nearestResponse, scopedResponse, type Moment, type Scope, type SearchScope } from './nearest-response.js';
import { buildSnapshot, cityKey, EMPTY_SNAPSHOT, type Snapshot } from './store-snapshot.js';

/** Rows per read while loading: small pages keep the load's short-lived garbage young. */
const LOAD_PAGE = 2000;

/**
 * The answers kept per snapshot: most searches repeat (a ZIP code's point, the default distance
 * and limit; a cached address), and an answer is a few KB (25 stores: about 12 KB), so 8 MiB
 * hold some 700 of them. Bounded in bytes, so that device positions, each a key of its own, only
 * push older answers out.
 */
const ANSWERS_MAX_BYTES = 8 * 1024 * 1024;

/** A snapshot and the answers worked out on it: swapped together, so an answer never outlives its catalogue version. */
interface Loaded {
  snapshot: Snapshot;
  answers: LRUCache<string, Answer>;
}

/** A kept answer: the response's bytes and what it answered (the Search-Scope header). */
interface Answer {
  body: Buffer;
  scope: SearchScope;
}

function loaded(snapshot: Snapshot): Loaded {
  return { snapshot, answers: new LRUCache<string, Answer>({ maxSize: ANSWERS_MAX_BYTES, sizeCalculation: ({ body }) => body.length + 100 }) };
}

/**
 * The stores, held in memory in a k-d tree (kdbush + geokdbush, see store-snapshot.ts), so
 * that a search costs about the same with 100,000 stores as with 1,000.
 *
 * Freshness: an import bumps `store_catalog.version` in its transaction and reloads this
 * instance's index at once; every other instance polls the version every
 * STORE_INDEX_REFRESH_MS and reloads when it changed. So a search may lag an import made
 * elsewhere by at most that interval plus the reload (about a second for 100,000 stores).
 * While a reload runs, searches use the previous snapshot.
 */
@Injectable()
export class StoreIndex implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('StoreIndex');
  private current: Loaded = loaded(EMPTY_SNAPSHOT);
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;

  constructor(
    private readonly catalog: StoreCatalog,
    @Inject(storesConfig.KEY) private readonly settings: ConfigType<typeof storesConfig>,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    // A change committed by this process (an import, an admin write) answers after the reload.
    this.catalog.onChange(() => this.reload());
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.refresh(), this.settings.STORE_INDEX_REFRESH_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Reloads if another instance changed the stores; a failure keeps the current snapshot. */
  async refresh(): Promise<void> {
    try {
      if ((await this.catalog.version()) !== this.current.snapshot.version) await this.reload();
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
   * The whole 200 response of POST /locations/nearest, as UTF-8 JSON (see nearestResponse). A
   * search without `open_at` depends only on the position, the distance, the limit and the
   * snapshot, so its answer is kept for the snapshot and given again as is (the same bytes; a
   * caller never writes into them). With `open_at` the answer depends on the moment ("now" moves),
   * and is worked out every time.
   */
  nearestResponse(center: Point, maxMiles: number, limit: number, moment?: Moment): Buffer {
    const { snapshot, answers } = this.current;
    if (moment) return nearestResponse(snapshot, center, maxMiles, limit, moment);
    // Every argument that shapes the answer is in the key: an option added to the search goes in too.
    const key = `radius:${center.lat},${center.lng},${maxMiles},${limit}`;
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = { body: nearestResponse(snapshot, center, maxMiles, limit), scope: 'radius' }));
    return answer.body;
  }

  /**
   * The same with a unit, nearest_if_none or a region, and what it answered (see scopedResponse).
   * Kept like the plain search's answers, by every argument of the answer (a region's city as the
   * snapshot compares it, so "Garden City" and " garden city" are one answer); with `open_at`,
   * worked out every time.
   */
  scopedResponse(center: Point, maxDistance: number, limit: number, moment: Moment | undefined, scope: Scope): { body: Buffer; scope: SearchScope } {
    const { snapshot, answers } = this.current;
    if (moment) return scopedResponse(snapshot, center, maxDistance, limit, moment, scope);
    const { unit, nearestIfNone, region } = scope;
    const where = region
      ? `region:${region.state}:${region.city === undefined ? '' : `city:${cityKey(region.city)}`}`
      : `${maxDistance}${nearestIfNone ? ':nearest' : ''}`;
    const key = `scoped:${center.lat},${center.lng},${limit},${unit},${where}`;
    let answer = answers.get(key);
    if (!answer) answers.set(key, (answer = scopedResponse(snapshot, center, maxDistance, limit, undefined, scope)));
    return answer;
  }

  private async load(): Promise<void> {
    const started = Date.now();
    const version = await this.catalog.version();
    const snapshot = await buildSnapshot(version, this.catalog.pages(LOAD_PAGE));
    this.current = loaded(snapshot);
    const count = snapshot.rank.length;
    this.metrics.storeIndexStores.set(count);
    this.metrics.storeIndexLoadedAt = Date.now();
    this.logger.log(
      `store index loaded: ${count} stores, ${snapshot.hours.length} distinct weeks of hours (version ${version}, ${Math.round(snapshot.json.length / 1024)} KiB of JSON) in ${Date.now() - started} ms`,
    );
  }
}
