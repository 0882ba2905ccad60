import { Module } from '@nestjs/common';
import { AddressGeocoder } from './address-geocoder.js';
import { Router } from './router.js';
import { ZipGeocoder } from './zip-geocoder.js';

/**
 * US geography shared by the search and the catalogue: one ZIP table in memory for both, and the
 * street-address geocoder of the search (GEOCODER; it connects to its engine only when asked), and
 * the router of its `travel_mode` (ROUTER).
 */
@Module({
  providers: [ZipGeocoder, AddressGeocoder, Router],
  exports: [ZipGeocoder, AddressGeocoder, Router],
})
export class GeoModule {}
