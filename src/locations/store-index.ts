import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { around } from 'geokdbush';
import KDBush from 'kdbush';
import { DataSource } from 'typeorm';
import type { EnvironmentVariables } from '../config/environment.js';
import { Metrics } from '../metrics/metrics.js';
import { EARTH_RADIUS_MILES, haversineMiles, type Point } from './geo.js';
import type { Store } from './store.entity.js';

/** geokdbush measures in kilometres on a sphere of this radius; only the angle matters. */
const GEOKDBUSH_EARTH_RADIUS_KM = 6371;
/** Rows per read while loading: small pages keep the load's short-lived garbage young. */
const LOAD_PAGE = 2000;
const LOAD_SQL =
  'SELECT id, code, name, address, city, state, zip, lat, lng, monday, tuesday, wednesday, thursday, friday, saturday, sunday FROM stores WHERE id > ? ORDER BY id LIMIT ?';

/** A row of LOAD_SQL: mysql2 gives DECIMAL as text, better-sqlite3 as a number. */
type StoreRow = Pick<Store, 'id' | 'code' | 'name' | 'address' | 'city' | 'state' | 'zip' | 'monday' | 'tuesday' | 'wednesday' | 'thursday' | 'friday' | 'saturday' | 'sunday'> & {
  lat: number | string;
  lng: number | string;
};

const RESPONSE_HEAD = Buffer.from('{"Code":"Success","locations":[');
const RESPONSE_TAIL = Buffer.from(']}');
const COMMA = 0x2c;

/**
 * One loaded catalogue, kept off the JavaScript heap: a few typed arrays and one buffer,
 * whatever the number of stores, so the garbage collector never walks 100,000 store objects
 * and the process stays small (about 20 MB for 100,000 stores instead of about 150 MB of
 * objects; README "Performance").
 */
interface Snapshot {
  version: number;
  /** k-d tree over (lng, lat); store n is item n. */
  index?: KDBush;
  /** Store n's longitude and latitude at 2n and 2n + 1 (the tree reorders its own copy). */
  points: Float64Array;
  /** Store n's place in (name, code) order: breaks distance ties. Its length is the number of stores. */
  rank: Uint32Array;
  /**
   * Every store's Location as UTF-8 JSON, back to back, without its business_hours value,
   * `distance` and the closing brace: store n's is json[offsets[n] .. offsets[n + 1]), and
   * its business_hours value, hours[hoursOf[n]], goes in at json[splits[n]].
   */
  json: Buffer;
  offsets: Uint32Array;
  splits: Uint32Array;
  /** Each distinct week of hours once: a chain has few (about half of a store's JSON). */
  hours: Buffer[];
  hoursOf: Uint32Array;
}

interface Nearby {
  /** The store's number in the snapshot the search ran on. */
  store: number;
  distance: number;
}

const EMPTY: Snapshot = {
  version: -1,
  points: new Float64Array(0),
  rank: new Uint32Array(0),
  json: Buffer.alloc(0),
  offsets: new Uint32Array(1),
  splits: new Uint32Array(0),
  hours: [],
  hoursOf: new Uint32Array(0),
};

const HOURS_SLOT = '"business_hours":0';

/** A store's Location in the response's field order, its hours and `distance` left out: [before the hours, after them]. */
function locationJson(s: StoreRow, lat: number, lng: number): [string, string] {
  const text = JSON.stringify({ name: s.name, address: s.address, city: s.city, state: s.state, zip: s.zip, business_hours: 0, lat: lat.toFixed(6), lng: lng.toFixed(6) });
  // The last match: only the fixed-format lat and lng follow it, never text from the catalogue.
  const slot = text.lastIndexOf(HOURS_SLOT) + HOURS_SLOT.length - 1;
  return [text.slice(0, slot), text.slice(slot + 1, -1)];
}

function hoursJson(s: StoreRow): string {
  return JSON.stringify({
    Monday: s.monday,
    Tuesday: s.tuesday,
    Wednesday: s.wednesday,
    Thursday: s.thursday,
    Friday: s.friday,
    Saturday: s.saturday,
    Sunday: s.sunday,
  });
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

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
  private snapshot: Snapshot = EMPTY;
  private timer?: NodeJS.Timeout;
  private reloading?: Promise<void>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: ConfigService<EnvironmentVariables, true>,
    private readonly metrics: Metrics,
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
    return this.snapshot.rank.length;
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
   * At most `limit` stores within `maxMiles` of `center` (boundary included), nearest first,
   * ties by name then code, as the whole 200 response of POST /locations/nearest,
   * `{"Code":"Success","locations":[…]}` in UTF-8: each store's JSON was written once at load;
   * a search only copies it and adds the distance (no objects built, no JSON.stringify).
   */
  nearestResponse(center: Point, maxMiles: number, limit: number): Buffer {
    const snapshot = this.snapshot;
    const found = this.search(snapshot, center, maxMiles, limit);
    const { json, offsets, splits, hours, hoursOf } = snapshot;
    const tails = found.map(({ distance }) => `,"distance":${Math.round(distance * 100) / 100}}`);
    let size = RESPONSE_HEAD.length + RESPONSE_TAIL.length + Math.max(0, found.length - 1);
    for (let i = 0; i < found.length; i++) {
      const n = found[i].store;
      size += offsets[n + 1] - offsets[n] + hours[hoursOf[n]].length + tails[i].length;
    }
    const body = Buffer.allocUnsafe(size);
    let at = RESPONSE_HEAD.copy(body, 0);
    for (let i = 0; i < found.length; i++) {
      const n = found[i].store;
      if (i > 0) body[at++] = COMMA;
      at += json.copy(body, at, offsets[n], splits[n]);
      at += hours[hoursOf[n]].copy(body, at);
      at += json.copy(body, at, splits[n], offsets[n + 1]);
      at += body.write(tails[i], at, 'latin1');
    }
    RESPONSE_TAIL.copy(body, at);
    return body;
  }

  /** The stores of `nearestResponse`, in order. */
  private search({ index, points, rank }: Snapshot, center: Point, maxMiles: number, limit: number): Nearby[] {
    if (!index) return [];
    const distanceTo = (store: number) => haversineMiles(center, { lng: points[2 * store], lat: points[2 * store + 1] });
    const byDistanceNameCode = (a: Nearby, b: Nearby) => a.distance - b.distance || rank[a.store] - rank[b.store];
    // A hair wider than asked, so rounding never drops a store on the boundary; the exact
    // haversine distance (R = 3958.8 miles) decides below.
    const maxKm = (maxMiles / EARTH_RADIUS_MILES) * GEOKDBUSH_EARTH_RADIUS_KM * (1 + 1e-9);
    for (let wanted = limit + 8; ; wanted *= 2) {
      const ids = around(index, center.lng, center.lat, wanted, maxKm);
      const found = ids
        .map((store) => ({ store, distance: distanceTo(store) }))
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
    const points: number[] = [];
    const names: string[] = [];
    const codes: string[] = [];
    const pages: Buffer[] = [];
    const lengths: number[] = [];
    const heads: number[] = [];
    const weeks = new Map<string, number>();
    const hoursOf: number[] = [];
    for (let after = 0; ; ) {
      const page: StoreRow[] = await this.dataSource.query(LOAD_SQL, [after, LOAD_PAGE]);
      const texts: string[] = [];
      for (const row of page) {
        const lat = Number(row.lat);
        const lng = Number(row.lng);
        const [head, tail] = locationJson(row, lat, lng);
        texts.push(head, tail);
        const headBytes = Buffer.byteLength(head);
        heads.push(headBytes);
        lengths.push(headBytes + Buffer.byteLength(tail));
        const week = hoursJson(row);
        if (!weeks.has(week)) weeks.set(week, weeks.size);
        hoursOf.push(weeks.get(week)!);
        points.push(lng, lat);
        names.push(row.name);
        codes.push(row.code);
      }
      pages.push(Buffer.from(texts.join('')));
      if (page.length < LOAD_PAGE) break;
      after = Number(page[page.length - 1].id);
    }
    const count = names.length;
    const offsets = new Uint32Array(count + 1);
    const splits = new Uint32Array(count);
    for (let n = 0; n < count; n++) {
      offsets[n + 1] = offsets[n] + lengths[n];
      splits[n] = offsets[n] + heads[n];
    }
    const rank = new Uint32Array(count);
    const order = Array.from({ length: count }, (_, n) => n).sort((a, b) => compareText(names[a], names[b]) || compareText(codes[a], codes[b]));
    order.forEach((store, place) => (rank[store] = place));
    let index: KDBush | undefined;
    if (count > 0) {
      index = new KDBush(count);
      for (let n = 0; n < count; n++) index.add(points[2 * n], points[2 * n + 1]);
      index.finish();
    }
    const json = Buffer.concat(pages);
    const hours = [...weeks.keys()].map((week) => Buffer.from(week));
    this.snapshot = { version, index, points: Float64Array.from(points), rank, json, offsets, splits, hours, hoursOf: Uint32Array.from(hoursOf) };
    this.metrics.storeIndexStores.set(count);
    this.metrics.storeIndexLoadedAt = Date.now();
    this.logger.log(`store index loaded: ${count} stores, ${hours.length} distinct weeks of hours (version ${version}, ${Math.round(json.length / 1024)} KiB of JSON) in ${Date.now() - started} ms`);
  }
}
