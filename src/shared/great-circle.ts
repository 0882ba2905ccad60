/** Mean Earth radius in miles, as the contract fixes it (§4). */
export const EARTH_RADIUS_MILES = 3958.8;

/** 1 mile in kilometres, exactly (the international mile): the search's `distance_unit` "km". */
export const KM_PER_MILE = 1.609344;

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
