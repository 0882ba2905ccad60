import { BadRequestException, Injectable } from '@nestjs/common';
import type { Point } from '../geo/geo.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import type { NearestLocationsRequest } from './dto/nearest-locations.dto.js';
import { StoreIndex } from './store-index.js';

@Injectable()
export class LocationsService {
  constructor(
    private readonly index: StoreIndex,
    private readonly geocoder: ZipGeocoder,
  ) {}

  /**
   * The customer's point: the packaged point of the ZIP's first five digits (the request DTO
   * has checked and trimmed it), or 400 for a ZIP no source knows.
   */
  locate(zip: string): Point {
    const zip5 = zip.slice(0, 5);
    const point = this.geocoder.lookup(zip5);
    if (!point) throw new BadRequestException(`unknown ZIP code ${zip5}`);
    return point;
  }

  /**
   * Stores within max_distance miles (boundary included), nearest first, ties by name then
   * code: the JSON of a NearestLocationsResponse, written by the store index (see nearestResponse).
   */
  nearest(request: NearestLocationsRequest): Buffer {
    const center = this.locate(request.customer_address.zip);
    return this.index.nearestResponse(center, request.max_distance, request.limit);
  }
}
