/** Mean Earth radius in miles, as the contract fixes it (§4). */
export const EARTH_RADIUS_MILES = 3958.8;

export interface Point {
  lat: number;
  lng: number;
}

const RAD = Math.PI / 180;

/** Great-circle distance in miles (haversine). */
export function haversineMiles(a: Point, b: Point): number {
  const dLat = (b.lat - a.lat) * RAD;
  const dLng = (b.lng - a.lng) * RAD;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_MILES * Math.asin(Math.min(1, Math.sqrt(h)));
}

export interface BoundingBox {
  minLat: number;
  maxLat: number;
  /** One or two longitude ranges: two when the box crosses the antimeridian. */
  lngRanges: Array<[number, number]>;
}

/**
 * The smallest latitude/longitude box holding every point within `miles` of `center`,
 * widened by a hair so that float rounding never drops a store on the boundary. It only
 * narrows the search; the haversine distance decides.
 */
export function boundingBox(center: Point, miles: number): BoundingBox {
  const angular = (miles / EARTH_RADIUS_MILES) * 1.000001 + 1e-9;
  const minLat = center.lat - angular / RAD;
  const maxLat = center.lat + angular / RAD;
  if (minLat <= -90 || maxLat >= 90 || Math.sin(angular) >= Math.cos(center.lat * RAD)) {
    return { minLat: Math.max(minLat, -90), maxLat: Math.min(maxLat, 90), lngRanges: [[-180, 180]] };
  }
  const dLng = Math.asin(Math.sin(angular) / Math.cos(center.lat * RAD)) / RAD;
  const west = center.lng - dLng;
  const east = center.lng + dLng;
  if (west < -180) return { minLat, maxLat, lngRanges: [[west + 360, 180], [-180, east]] };
  if (east > 180) return { minLat, maxLat, lngRanges: [[west, 180], [-180, east - 360]] };
  return { minLat, maxLat, lngRanges: [[west, east]] };
}
