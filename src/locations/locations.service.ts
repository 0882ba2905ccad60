import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, Repository } from 'typeorm';
import type { Location, NearestLocationsRequest, NearestLocationsResponse } from './dto/nearest-locations.dto.js';
import { boundingBox, haversineMiles, type Point } from './geo.js';
import { Store } from './store.entity.js';
import { ZipGeocoder } from './zip-geocoder.js';

function toLocation(store: Store, distance: number): Location {
  return {
    name: store.name,
    address: store.address,
    city: store.city,
    state: store.state,
    zip: store.zip,
    business_hours: {
      Monday: store.monday,
      Tuesday: store.tuesday,
      Wednesday: store.wednesday,
      Thursday: store.thursday,
      Friday: store.friday,
      Saturday: store.saturday,
      Sunday: store.sunday,
    },
    lat: store.lat.toFixed(6),
    lng: store.lng.toFixed(6),
    distance: Math.round(distance * 100) / 100,
  };
}

@Injectable()
export class LocationsService {
  constructor(
    @InjectRepository(Store) private readonly stores: Repository<Store>,
    private readonly geocoder: ZipGeocoder,
  ) {}

  /** The customer's point: the ZIP's packaged point, or 400 for a ZIP no source knows. */
  locate(zip: string): Point {
    const zip5 = ZipGeocoder.normalize(zip);
    if (!zip5) throw new BadRequestException('customer_address.zip must be a US ZIP code such as 12345 or 12345-6789');
    const point = this.geocoder.lookup(zip5);
    if (!point) throw new BadRequestException(`unknown ZIP code ${zip5}`);
    return point;
  }

  /**
   * Stores within max_distance miles (boundary included), nearest first, ties by name then
   * code. The indexed bounding box narrows the rows read; the haversine distance decides.
   */
  async nearest(request: NearestLocationsRequest): Promise<NearestLocationsResponse> {
    const center = this.locate(request.customer_address.zip);
    const box = boundingBox(center, request.max_distance);
    const query = this.stores
      .createQueryBuilder('store')
      .where('store.lat BETWEEN :minLat AND :maxLat', { minLat: box.minLat, maxLat: box.maxLat })
      .andWhere(
        new Brackets((lng) =>
          box.lngRanges.forEach(([west, east], i) =>
            lng.orWhere(`store.lng BETWEEN :west${i} AND :east${i}`, { [`west${i}`]: west, [`east${i}`]: east }),
          ),
        ),
      );
    const inRange = (await query.getMany())
      .map((store) => ({ store, distance: haversineMiles(center, store) }))
      .filter(({ distance }) => distance <= request.max_distance)
      .sort(
        (a, b) =>
          a.distance - b.distance ||
          (a.store.name < b.store.name ? -1 : a.store.name > b.store.name ? 1 : 0) ||
          (a.store.code < b.store.code ? -1 : a.store.code > b.store.code ? 1 : 0),
      )
      .slice(0, request.limit);
    return { Code: 'Success', locations: inRange.map(({ store, distance }) => toLocation(store, distance)) };
  }
}
