import { Module } from '@nestjs/common';
import { AddressGeocoder } from './address-geocoder.js';
import { ZipGeocoder } from './zip-geocoder.js';

/**
 * US geography shared by the search and the catalogue: one ZIP table in memory for both, and the
 * street-address geocoder of the search (GEOCODER; it connects to its engine only when asked).
 */
@Module({
  providers: [ZipGeocoder, AddressGeocoder],
  exports: [ZipGeocoder, AddressGeocoder],
})
export class GeoModule {}
