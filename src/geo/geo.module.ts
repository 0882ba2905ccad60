import { Module } from '@nestjs/common';
import { ZipGeocoder } from './zip-geocoder.js';

/** US geography shared by the search and the catalogue: one ZIP table in memory for both. */
@Module({
  providers: [ZipGeocoder],
  exports: [ZipGeocoder],
})
export class GeoModule {}
