import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { LRUCache } from 'lru-cache';
import { haversineMiles, type Point } from '../shared/great-circle.js';
import { memoryReleasable, releaseMemory } from '../common/release-memory.js';
import { storesConfig } from '../stores/stores.config.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog, type CatalogChange, type CatalogStore } from '../stores/store-catalog.js';
import { answer, type IndexView, type SearchAnswer, type SearchPlan, type SearchScope } from './nearest-response.js';
import { findStore, storePage, type StorePage } from './store-page.js';
import { buildSnapshot, cityKey, EMPTY_SNAPSHOT, storeOfCode, vocabularyOf, type Snapshot } from './store-snapshot.js';

/** Rows per read while loading: small pages keep the load's short-lived garbage young. */
const LOAD_PAGE = 2000;

/**
 * From this many stores a whole load gives the heap's unused memory back before and after it
 * (releaseMemory): below it there is little to give, and the collection's pause is not worth it.
 */
const RELEASE_MIN_STORES = 10_000;
/** Pages of a large load between two such collections: 20,000 stores. */
const RELEASE_PAGES = 10;

/**
 * The answers kept per snapshot: most searches repeat (a ZIP code's point, the default distance
 * and limit; a cached address), and an answer is a few KB (25 stores: about 12 KB), so 8 MiB
 * hold some 700 of them. Bounded in bytes, so that device positions, each a key of its own, only
 * push older answers out.
 */
const ANSWERS_MAX_BYTES = 8 * 1024 * 1024;

/** A kept answer: the response's bytes, what it answered (the Search-Scope header), and where a store's change could alter it. */
interface Answer {
  body: Buffer;
  scope: SearchScope;
  center: Point;
  /** Miles from `center` beyond which no store's change alters this answer (see SearchAnswer). */
  reach: number;
  /** A region answer's state: a change elsewhere leaves it as it is. */
  state?: string;
  /** A travel_mode answer's Travel-Source. */
  travel?: string;
}

/** A search's answer as StoreIndex.search gives it. */
export type IndexAnswer = Pick<Answer, 'body' | 'scope' | 'travel'>;

/**
 * Stores changed since the base snapshot was built, at most this many, before the index is
 * built again (off the request path): each change rebuilds the changes' own small snapshot, so
 * applying one costs a little more the more there are (about 5 ms at 2,000).
 */
const CHANGES_MAX = 2000;

/** A store changed since the base snapshot: as it now is (none when removed), and in which catalogue version. */
interface Changed {
  store?: CatalogStore;
  version: number;
}

/**
 * What the index searches: the snapshot last built from the whole catalogue (`base`), and the
 * stores changed since, kept apart: their base entries hidden, their current rows in a small
 * snapshot of their own (`overlay`), searched as one catalogue (IndexView).
 */
interface Catalogue {
  version: number;
  base: Snapshot;
  changed: Map<string, Changed>;
  overlay: Snapshot;
  /** 1 at each base store that changed. */
  hidden: Uint8Array;
  view: IndexView;
}

function catalogueOf(base: Snapshot): Catalogue {
  return {
    version: base.version,
    base,
    changed: new Map(),
    overlay: EMPTY_SNAPSHOT,
    hidden: new Uint8Array(base.rank.length),
    view: { parts: [{ snapshot: base }] },
  };
}

/**
 * The key a search's answer is kept under: every part of the plan that shapes the answer (a
 * region's city as the snapshot compares it, so "Garden City" and " garden city" are one answer),
 * none for a search at a moment (its answer depends on the moment, and "now" moves). An option
 * added to SearchPlan goes in too.
 */
function keyOf({ center, area, unit, limit, moment, travel, services, include }: SearchPlan): string | undefined {
  if (moment) return undefined;
  const where =
    area.kind === 'region'
      ? `region:${area.region.state}:${area.region.city === undefined ? '' : `city:${cityKey(area.region.city)}`}`
      : `${area.kind}:${area.maxDistance}`;
  // The plan's services and include come sorted and each once: one key per set, whatever the request's order.
  const filters = `${services?.length ? `,services:${services.join('|')}` : ''}${include?.length ? `,include:${include.join('|')}` : ''}`;
  return `${center.lat},${center.lng},${limit},${unit},${where}${travel ? `,travel:${travel.candidates},${travel.maxMinutes ?? ''}` : ''}${filters}`;
}

const answerCache = () => new LRUCache<string, Answer>({ maxSize: ANSWERS_MAX_BYTES, sizeCalculation: ({ body }) => body.length + 100 });

/**
 * The stores, held in memory in a k-d tree (kdbush + geokdbush, see store-snapshot.ts), so
 * that a search costs about the same with 100,000 stores as with 1,000.
 *
 * Freshness: every write of the catalogue goes through StoreCatalog.write, which bumps
 * `store_catalog.version` and logs the codes it changed (`store_changes`) in its transaction,
 * and hands this instance's index the changed stores as it left them: the write answers once
 * the index has them (a few milliseconds, whatever the catalogue's size). Every other instance
 * polls the version every STORE_INDEX_REFRESH_MS and, when it moved, reads the log for the
 * versions it missed and only the stores they name. So a search lags a change made elsewhere by
 * at most that interval plus a few milliseconds. A change too big to list (an import of more
 * than CHANGE_LOG_MAX_STORES stores), a gap the log no longer covers, or a failure to apply
 * loads every store instead (about a second for 100,000), as the start does; searches use the
 * previous index meanwhile.
 *
 * Changes are not written into the snapshot (it is immutable, off the heap): the changed stores
 * go into a small snapshot of their own and their entries in the base are hidden, both searched
 * as one catalogue (nearest-response.ts, IndexView). Past CHANGES_MAX changed stores the index
 * is built again from the database, off the request path. A kept answer is dropped when a
 * changed store was or now is within its reach (the distance of its last store, or what it
 * searched when it is not full), so most answers outlive an edit elsewhere.
 */
@Injectable()
export class StoreIndex implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('StoreIndex');
  private current: Catalogue = catalogueOf(EMPTY_SNAPSHOT);
  private answers = answerCache();
  private timer?: NodeJS.Timeout;
  /** Every change of `current` (load, change, rebase) runs in this chain: one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  private reloading?: Promise<void>;
  private rebuilding?: Promise<void>;
  /** The timer's refresh under way, if any (see onModuleDestroy). */
  private refreshing?: Promise<void>;
  /** Whether the warning that loads cannot give memory back was logged (see canRelease). */
  private saidNoRelease = false;
  /** Changed stores past which the index is built again (CHANGES_MAX; a spec lowers it to see rebuilds). */
  changesMax = CHANGES_MAX;

  constructor(
    private readonly catalog: StoreCatalog,
    @Inject(storesConfig.KEY) private readonly settings: ConfigType<typeof storesConfig>,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    // A change committed by this process (an import, an admin write) answers once the index has it.
    this.catalog.onChange((change) => this.apply(change));
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.reload();
    this.timer = setInterval(
      () => void (this.refreshing ??= this.refresh().finally(() => (this.refreshing = undefined))),
      this.settings.STORE_INDEX_REFRESH_MS,
    );
    this.timer.unref();
  }

  /**
   * Stops taking other instances' changes and waits for the work under way: Nest closes the
   * database after every module's onModuleDestroy, and a refresh it cut off would load every store
   * again and warn, for a process that is going away.
   */
  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
    await this.settled();
  }

  /** The catalogue version the index holds. */
  get version(): number {
    return this.current.version;
  }

  /** Takes the changes another instance made, if any; a failure keeps the current index. */
  async refresh(): Promise<void> {
    try {
      if ((await this.catalog.version()) !== this.current.version) await this.serially(() => this.catchUp());
    } catch (error) {
      this.logger.warn(`store index not refreshed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Takes a change this process committed: its stores as it left them, straight into the index
   * when it follows the version the index holds; else (another instance's change came between,
   * or it was too big to list) what the change log says since that version.
   */
  apply(change: CatalogChange): Promise<void> {
    return this.serially(async () => {
      if (change.version <= this.current.version) return;
      if (change.reload || change.version !== this.current.version + 1) return this.catchUp();
      await this.update(change);
    });
  }

  /** Resolves once every change taken so far, and any rebuild under way, is in the index. */
  async settled(): Promise<void> {
    await this.rebuilding;
    await this.queue;
  }

  /** Loads every store and swaps the index; concurrent callers share one load. */
  reload(): Promise<void> {
    this.reloading ??= this.serially(() => this.load()).finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /**
   * A search's answer (see `answer` in nearest-response.ts): kept by its key (keyOf) and given
   * again as is (the same bytes; a caller never writes into them) until a store within its reach
   * changes, or for as long as its route step allows (Routed.keepMs); a search at a moment is
   * worked out every time. An answer whose route step was asynchronous is kept only when the
   * catalogue did not move meanwhile. Synchronous unless the route step is not.
   */
  search(plan: SearchPlan & { travel?: undefined }): IndexAnswer;
  search(plan: SearchPlan): IndexAnswer | Promise<IndexAnswer>;
  search(plan: SearchPlan): IndexAnswer | Promise<IndexAnswer> {
    const key = keyOf(plan);
    const kept = key === undefined ? undefined : this.answers.get(key);
    if (kept) return kept;
    const current = this.current;
    const found = answer(current.view, plan);
    if (key === undefined) return found;
    return found instanceof Promise ? found.then((made) => this.keep(key, plan, made, current)) : this.keep(key, plan, found, current);
  }

  /**
   * The page of the store with `code` at instant `at` (see store-page.ts), from what searches see
   * now, the changes taken since the last load included; undefined when no store has it.
   */
  page(code: string, at: number): StorePage | undefined {
    const found = findStore(this.current.view, code);
    return found && storePage(found.snapshot, found.store, at);
  }

  /** Keeps a search's answer under `key`, for as long as its route step allows, unless the catalogue moved since `searched`. */
  private keep(key: string, plan: SearchPlan, { body, scope, reach, travel, keepMs }: SearchAnswer, searched: Catalogue): IndexAnswer {
    const kept: Answer = { body, scope, center: plan.center, reach, state: plan.area.kind === 'region' ? plan.area.region.state : undefined, travel };
    if (keepMs > 0 && this.current === searched) this.answers.set(key, kept, keepMs === Infinity ? undefined : { ttl: keepMs });
    return kept;
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Brings the index to the catalogue's version by the change log, or by a load when the log cannot. */
  private async catchUp(): Promise<void> {
    let change: CatalogChange;
    try {
      change = await this.catalog.changesSince(this.current.version);
    } catch (error) {
      this.logger.warn(`store changes not read, loading every store: ${error instanceof Error ? error.message : String(error)}`);
      return this.load();
    }
    if (change.reload) return this.load();
    if (change.version > this.current.version) await this.update(change);
  }

  /**
   * Puts the stores of `change` in the changes' snapshot (hiding their base entries), and forgets
   * the kept answers that a store where one was or now is could alter. A failure loads every store.
   */
  private async update(change: Extract<CatalogChange, { stores: unknown }>): Promise<void> {
    try {
      const { base, changed: before, hidden: hiddenBefore } = this.current;
      const changed = new Map(before);
      const hidden = hiddenBefore.slice();
      const touched: Touched[] = [];
      const forget = (code: string) => {
        const previous = changed.get(code);
        if (previous) {
          if (previous.store) touched.push(touchedBy(previous.store));
          return;
        }
        const n = storeOfCode(base, code);
        if (n !== undefined && hidden[n] === 0) {
          hidden[n] = 1;
          touched.push({ point: { lng: base.points[2 * n], lat: base.points[2 * n + 1] } });
        }
      };
      for (const code of change.removed) {
        forget(code);
        changed.set(code, { version: change.version });
      }
      for (const store of change.stores) {
        forget(store.code);
        changed.set(store.code, { store, version: change.version });
        touched.push(touchedBy(store));
      }
      const overlay = await buildSnapshot(change.version, [storesOf(changed)], base.holidays, vocabularyOf(base));
      this.current = { version: change.version, base, changed, overlay, hidden, view: { parts: [{ snapshot: base, hidden }, { snapshot: overlay }] } };
      this.forgetAnswers(touched);
      this.loaded();
      if (changed.size > this.changesMax) this.rebuild();
    } catch (error) {
      this.logger.warn(`store changes not applied, loading every store: ${error instanceof Error ? error.message : String(error)}`);
      await this.load();
    }
  }

  /** Drops the kept answers that a change at one of `touched` could alter (a few hundred answers, each measured against each place). */
  private forgetAnswers(touched: Touched[]): void {
    const gone: string[] = [];
    this.answers.forEach(({ center, reach, state }, key) => {
      // A hair wider than the reach, so that rounding never keeps an answer a tie could alter.
      const within = reach * (1 + 1e-9) + 1e-9;
      if (touched.some((at) => (!state || !at.state || state === at.state) && haversineMiles(center, at.point) <= within)) gone.push(key);
    });
    for (const key of gone) this.answers.delete(key);
  }

  /**
   * Builds the index again from the whole catalogue, off the request path (searches and changes
   * go on meanwhile), once the changes have grown past CHANGES_MAX; the changes applied after
   * the catalogue version it read are applied on top of it.
   */
  private rebuild(): void {
    this.rebuilding ??= (async () => {
      const version = await this.catalog.version();
      const { snapshot: base, large } = await this.buildWhole(version);
      await this.serially(async () => {
        // A load since holds a catalogue at least as new.
        if (base.version <= this.current.base.version) return;
        const later = new Map([...this.current.changed].filter(([, { version: changedIn }]) => changedIn > base.version));
        const hidden = new Uint8Array(base.rank.length);
        for (const code of later.keys()) {
          const n = storeOfCode(base, code);
          if (n !== undefined) hidden[n] = 1;
        }
        const overlay = await buildSnapshot(this.current.version, [storesOf(later)], base.holidays, vocabularyOf(base));
        const parts = later.size > 0 ? [{ snapshot: base, hidden }, { snapshot: overlay }] : [{ snapshot: base }];
        this.current = { version: Math.max(base.version, this.current.version), base, changed: later, overlay, hidden, view: { parts } };
        // The base was read after the version: it may hold changes the index has not applied yet, at places no change will name.
        this.answers = answerCache();
        this.loaded();
      });
      // The old base and the build's garbage (see buildWhole).
      if (large) releaseMemory();
      this.logger.log(`store index rebuilt at version ${version}`);
    })()
      .catch((error: unknown) => this.logger.warn(`store index not rebuilt: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => (this.rebuilding = undefined));
  }

  /**
   * The snapshot of the whole catalogue at `version`, built beside the one serving. Two catalogues
   * are held meanwhile: from RELEASE_MIN_STORES stores, what the heap no longer uses (an import's
   * garbage, just before) goes back to the system first and then every RELEASE_PAGES pages (see
   * releaseMemory); the caller gives back the old catalogue and the build's garbage once it has
   * let the old one go (`large`: whether it should; `releasedMs`: the time given so far).
   */
  private async buildWhole(version: number): Promise<{ snapshot: Snapshot; large: boolean; releasedMs: number }> {
    const expected = await this.catalog.count();
    const large = Math.max(expected, this.current.base.rank.length) >= RELEASE_MIN_STORES && this.canRelease();
    const releasedMs = large ? releaseMemory() : 0;
    const pages = this.catalog.pages(LOAD_PAGE);
    const snapshot = await buildSnapshot(version, large ? releasing(pages) : pages, await this.catalog.holidays(), await this.catalog.services(), expected);
    return { snapshot, large, releasedMs };
  }

  /**
   * Whether the loads can give memory back (Node started with `--expose-gc`); said once where they
   * cannot, since an operator who replaced the image's NODE_OPTIONS and dropped the flag would
   * otherwise learn it from a pod killed during an import.
   */
  private canRelease(): boolean {
    if (memoryReleasable()) return true;
    if (!this.saidNoRelease) {
      this.saidNoRelease = true;
      this.logger.warn(
        'node runs without --expose-gc: loads of the search index cannot give V8\'s emptied heap pages back, and a whole-catalogue import needs more memory (docs/operations.md, "Memory sizing")',
      );
    }
    return false;
  }

  private async load(): Promise<void> {
    const started = Date.now();
    const version = await this.catalog.version();
    // Read after the version, as the stores are: a holiday or service set since bumps it, and the index loads again.
    const { snapshot, large, releasedMs } = await this.buildWhole(version);
    this.current = catalogueOf(snapshot);
    this.answers = answerCache();
    this.loaded();
    // The old catalogue and the build's garbage (see buildWhole).
    const released = releasedMs + (large ? releaseMemory() : 0);
    this.logger.log(
      `store index loaded: ${snapshot.rank.length} stores, ${snapshot.hours.length} distinct weeks of hours (version ${version}, ${Math.round(snapshot.offsets[snapshot.rank.length] / 1024)} KiB of JSON) in ${Date.now() - started} ms${large ? ` (${Math.round(released)} ms of it giving memory back)` : ''}`,
    );
  }

  /**
   * Counts the stores searched and restarts the index age gauge: the age is that of what the index
   * holds, whether a load or an applied change brought it (an instance that stops taking changes
   * shows a growing age where the others' stay at that of the last write).
   */
  private loaded(): void {
    const { base, hidden, overlay } = this.current;
    let count = base.rank.length + overlay.rank.length;
    for (const flag of hidden) count -= flag;
    this.metrics.storeIndexStores.set(count);
    this.metrics.storeIndexLoadedAt = Date.now();
  }
}

/**
 * The pages of a large load, the heap's unused memory given back after every RELEASE_PAGES of
 * them (releaseMemory): the rows a page brings and the searches' garbage that outlive the young
 * generation would otherwise fill pages of the heap for the rest of the load, beside two
 * catalogues. With 100,000 stores, five pauses of some 50 ms while the index loads.
 */
async function* releasing(pages: AsyncIterable<CatalogStore[]>): AsyncGenerator<CatalogStore[]> {
  let read = 0;
  for await (const page of pages) {
    yield page;
    if (++read % RELEASE_PAGES === 0) releaseMemory();
  }
}

/** A place where a store was or now is, and its state when known (a base store's is not kept). */
interface Touched {
  point: Point;
  state?: string;
}

const touchedBy = (store: CatalogStore): Touched => ({ point: { lat: Number(store.lat), lng: Number(store.lng) }, state: store.state.toUpperCase() });

const storesOf = (changed: Map<string, Changed>): CatalogStore[] => [...changed.values()].flatMap(({ store }) => (store ? [store] : []));
