import { Inject, Injectable } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import type { Response } from 'express';
import { POSITION_SOURCES, type PositionSource, type TRAVEL_SOURCES } from '../common/api-headers.js';
import { AddressGeocoder, type FallbackReason } from '../geo/address-geocoder.js';
import { routerConfig } from '../geo/router.config.js';
import { Router } from '../geo/router.js';
import type { Point } from '../shared/great-circle.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { Metrics } from '../metrics/metrics.js';
import { parseDateTime } from './date-time.js';
import { INCLUDE_NAMES } from '../shared/store-fields.js';
import { DEFAULT_MAX_DISTANCE, OPEN_AT_NOW, type CustomerAddress, type NearestLocationsRequest } from './dto/nearest-locations.dto.js';
import type { Area, DistanceUnit, Moment, Routed, SearchScope, Travel } from './nearest-response.js';
import { StoreIndex, type IndexAnswer } from './store-index.js';
import type { StorePage } from './store-page.js';

/** Where a search measures from, and why: the `Customer-Position` header and the admin's position look-up. */
export interface CustomerPosition {
  point: Point;
  source: PositionSource;
  /** The request's ZIP code point (always looked up: an unknown ZIP code is refused whatever else is given). */
  zipPoint: Point;
  /** Why a street address was not used, when there was one to use. */
  fallback?: FallbackReason;
}

/** A search's answer: the JSON of a NearestLocationsResponse, where it measured from, in what unit, what it looked through, and (with `travel_mode`) where its travel times came from. */
export interface NearestAnswer {
  body: Buffer;
  source: PositionSource;
  unit: DistanceUnit;
  scope: SearchScope;
  travel?: TravelSource;
}

/** The `Travel-Source` header's values. */
export type TravelSource = (typeof TRAVEL_SOURCES)[number];

/** No source of ZIP code points knows this (well-formed) ZIP code; the entry point words it for its caller (UnknownZipFilter: 400). */
export class UnknownZipError extends Error {
  constructor(readonly zip5: string) {
    super(`unknown ZIP code ${zip5}`);
  }
}

@Injectable()
export class LocationsService {
  private readonly counted: Record<PositionSource, { inc(): void }>;

  constructor(
    private readonly index: StoreIndex,
    private readonly geocoder: ZipGeocoder,
    private readonly addresses: AddressGeocoder,
    private readonly metrics: Metrics,
    private readonly router: Router,
    @Inject(routerConfig.KEY) private readonly routing: ConfigType<typeof routerConfig>,
  ) {
    // Bound once: the search's hot path counts without a label look-up.
    this.counted = Object.fromEntries(POSITION_SOURCES.map((source) => [source, metrics.searchPositions.labels(source)])) as Record<
      PositionSource,
      { inc(): void }
    >;
  }

  /**
   * The customer's point: the packaged point of the ZIP's first five digits (the request DTO
   * has checked and trimmed it), or UnknownZipError for a ZIP no source knows.
   */
  locate(zip: string): Point {
    const zip5 = zip.slice(0, 5);
    const point = this.geocoder.lookup(zip5);
    if (!point) throw new UnknownZipError(zip5);
    return point;
  }

  /**
   * Where the search measures from: the device's `lat`/`lng` when given; else the street address
   * through the geocoder, when there is one (GEOCODER) and the request has an address; else, and
   * whenever the geocoder has no believable answer in time, the ZIP code's point. Synchronous
   * unless the geocoder is asked, so that a ZIP search stays as cheap as it was.
   */
  position(address: CustomerAddress): CustomerPosition | Promise<CustomerPosition> {
    const zipPoint = this.locate(address.zip);
    if (address.lat !== undefined && address.lng !== undefined) return { point: { lat: address.lat, lng: address.lng }, source: 'device', zipPoint };
    if (!this.addresses.enabled || !address.address?.trim()) return { point: zipPoint, source: 'zip', zipPoint };
    return this.addresses
      .locate({ address: address.address, city: address.city, state: address.state, zip5: address.zip.slice(0, 5) }, zipPoint)
      .then((answer): CustomerPosition => {
        if ('point' in answer) return { point: answer.point, source: 'address', zipPoint };
        this.metrics.geocoderFallbacks.inc({ reason: answer.fallback });
        return { point: zipPoint, source: 'zip', zipPoint, fallback: answer.fallback };
      });
  }

  /** The page of the store with `code` now (see StoreIndex.page), or undefined. */
  page(code: string): StorePage | undefined {
    return this.index.page(code, Date.now());
  }

  /**
   * Stores within max_distance miles (boundary included), nearest first, ties by name then
   * code: the JSON of a NearestLocationsResponse, written by the store index (see StoreIndex.search).
   */
  nearest(request: NearestLocationsRequest): NearestAnswer | Promise<NearestAnswer> {
    const position = this.position(request.customer_address);
    return position instanceof Promise ? position.then((p) => this.answer(request, p)) : this.answer(request, position);
  }

  private answer(request: NearestLocationsRequest, position: CustomerPosition): NearestAnswer | Promise<NearestAnswer> {
    this.counted[position.source].inc();
    const { distance_unit: unit = 'mi', nearest_if_none: nearestIfNone = false, region, travel_mode: travelMode } = request;
    const maxDistance = request.max_distance ?? DEFAULT_MAX_DISTANCE;
    const area: Area = region
      ? { kind: 'region', region: { state: region.state.toUpperCase(), city: region.city } }
      : { kind: nearestIfNone ? 'nearest' : 'radius', maxDistance };
    const travel = travelMode && this.travel(position.point, request.max_travel_time);
    const found = this.index.search({
      center: position.point,
      area,
      unit,
      limit: request.limit,
      moment: moment(request),
      travel,
      // Sorted, and in the table's order: one answer (and one kept answer) whatever the request's order.
      services: request.services?.length ? [...request.services].sort() : undefined,
      include: request.include?.length ? INCLUDE_NAMES.filter((name) => request.include!.includes(name)) : undefined,
    });
    if (found instanceof Promise) return found.then((answer) => nearestAnswer(answer, position, unit));
    return nearestAnswer(found, position, unit);
  }

  /**
   * The route step of a travel_mode search from `from`: the router's legs, kept for
   * ROUTER_CACHE_SECONDS (a failure answers none, kept not at all, so that the next search asks
   * again). Without a routing engine (ROUTER=off) no legs, ever: the straight-line answer, with
   * null times and `Travel-Source: straight-line`, kept until the catalogue changes.
   */
  private travel(from: Point, maxMinutes: number | undefined): Travel {
    if (!this.router.enabled) return { candidates: 0, maxMinutes, route: () => STRAIGHT_LINE };
    const keepMs = this.routing.ROUTER_CACHE_SECONDS * 1000;
    return {
      candidates: this.routing.ROUTER_MAX_STORES,
      maxMinutes,
      route: (stores): Routed | Promise<Routed> =>
        // No store found: nothing to ask the engine, and nothing fell back.
        stores.length === 0
          ? { source: this.routing.ROUTER, legs: [], keepMs }
          : this.router.times(from, stores).then((times) => ('legs' in times ? { ...times, keepMs } : { ...times, keepMs: 0 })),
    };
  }
}

/** What StoreIndex answered, with where the search measured from and in what unit. */
const nearestAnswer = ({ body, scope, travel }: IndexAnswer, { source }: CustomerPosition, unit: DistanceUnit): NearestAnswer => ({
  body,
  source,
  unit,
  scope,
  travel: travel as TravelSource | undefined,
});

/** The route step's answer without a routing engine: no legs, and nothing that a later search could answer otherwise. */
const STRAIGHT_LINE: Routed = { source: 'straight-line', keepMs: Infinity };

/** The request's `open_at` and `open_only` (already validated); "now" is read when the search runs, after any geocoding. */
function moment({ open_at, open_only }: NearestLocationsRequest): Moment | undefined {
  if (open_at === undefined) return undefined;
  return { at: open_at === OPEN_AT_NOW ? Date.now() : parseDateTime(open_at)!, openOnly: open_only === true };
}

/**
 * Sends a search's answer: the body comes as JSON bytes already (a NearestLocationsResponse, see
 * StoreIndex.search), so it is sent as is rather than returned for Nest to serialize again.
 */
export function sendNearest(res: Response, answer: NearestAnswer | Promise<NearestAnswer>): void | Promise<void> {
  if (answer instanceof Promise) return answer.then((settled) => sendNearest(res, settled));
  res.status(200).setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Customer-Position', answer.source);
  res.setHeader('Distance-Unit', answer.unit);
  res.setHeader('Search-Scope', answer.scope);
  if (answer.travel) res.setHeader('Travel-Source', answer.travel);
  res.send(answer.body);
}
