import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { EnvironmentVariables } from '../config/environment.js';
import type { Point } from '../geo/geo.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog } from '../stores/store-catalog.js';
import { nearestResponse, scopedResponse, type Moment, type Scope, type SearchScope } from './nearest-response.js';
import { buildSnapshot, EMPTY_SNAPSHOT, type Snapshot } from './store-snapshot.js';

/** Rows per read while loading: small pages keep the load's short-lived garbage young. */
const LOAD_PAGE = 2000;

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
  private snapshot: Snapshot = EMPTY_SNAPSHOT;
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;

  constructor(
    private readonly catalog: StoreCatalog,
    private readonly config: ConfigService<EnvironmentVariables, true>,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    // A change committed by this process (an import, an admin write) answers after the reload.
    this.catalog.onChange(() => this.reload());
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.refresh(), this.config.get('STORE_INDEX_REFRESH_MS', { infer: true }));
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Reloads if another instance changed the stores; a failure keeps the current snapshot. */
  async refresh(): Promise<void> {
    try {
      if ((await this.catalog.version()) !== this.snapshot.version) await this.reload();
    } catch (error) {
      this.logger.warn(`store index not refreshed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Loads every store and swaps the snapshot; concurrent callers share one load. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /** The whole 200 response of POST /locations/nearest, as UTF-8 JSON (see nearestResponse). */
  nearestResponse(center: Point, maxMiles: number, limit: number, moment?: Moment): Buffer {
    return nearestResponse(this.snapshot, center, maxMiles, limit, moment);
  }

  /** The same with a unit, nearest_if_none or a region, and what it answered (see scopedResponse). */
  scopedResponse(center: Point, maxDistance: number, limit: number, moment: Moment | undefined, scope: Scope): { body: Buffer; scope: SearchScope } {
    return scopedResponse(this.snapshot, center, maxDistance, limit, moment, scope);
  }

  private async load(): Promise<void> {
    const started = Date.now();
    const version = await this.catalog.version();
    const snapshot = await buildSnapshot(version, this.catalog.pages(LOAD_PAGE));
    this.snapshot = snapshot;
    const count = snapshot.rank.length;
    this.metrics.storeIndexStores.set(count);
    this.metrics.storeIndexLoadedAt = Date.now();
    this.logger.log(
      `store index loaded: ${count} stores, ${snapshot.hours.length} distinct weeks of hours (version ${version}, ${Math.round(snapshot.json.length / 1024)} KiB of JSON) in ${Date.now() - started} ms`,
    );
  }
}
