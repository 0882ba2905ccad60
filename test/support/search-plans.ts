import type { Point } from '../../src/shared/great-circle.js';
import type { DistanceUnit, Moment, Region, SearchPlan } from '../../src/locations/nearest-response.js';

/** The search's area and unit as the request's fields give them (distance_unit, nearest_if_none, region). */
export interface Scope {
  unit: DistanceUnit;
  nearestIfNone: boolean;
  region?: Region;
}

/** The plan of a search without travel_mode, from the request's fields: what the unit specs of the search ask. */
export const planOf = (
  center: Point,
  maxDistance: number,
  limit: number,
  moment: Moment | undefined,
  { unit, nearestIfNone, region }: Scope,
): SearchPlan & { travel?: undefined } => ({
  center,
  area: region ? { kind: 'region', region } : { kind: nearestIfNone ? 'nearest' : 'radius', maxDistance },
  unit,
  limit,
  moment,
});
