import { Module } from '@nestjs/common';
import { GeoModule } from '../geo/geo.module.js';
import { StoresModule } from '../stores/stores.module.js';
import { AdminLocationsController } from './admin-locations.controller.js';
import { LocationsController } from './locations.controller.js';
import { LocationsService } from './locations.service.js';
import { StoreIndex } from './store-index.js';

/** The spec's store search: POST /locations/nearest (and its admin door) over an in-memory index of the catalogue. */
@Module({
  imports: [StoresModule, GeoModule],
  controllers: [LocationsController, AdminLocationsController],
  providers: [LocationsService, StoreIndex],
})
export class LocationsModule {}
