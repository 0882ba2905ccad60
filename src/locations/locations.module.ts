import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminStoresController } from './admin-stores.controller.js';
import { LocationsController } from './locations.controller.js';
import { LocationsService } from './locations.service.js';
import { StoreAdminService } from './store-admin.service.js';
import { StoreExportService } from './store-export.service.js';
import { STORES_IMPORTED, StoreImportService } from './store-import.service.js';
import { StoreIndex } from './store-index.js';
import { Store } from './store.entity.js';
import { ZipGeocoder } from './zip-geocoder.js';

@Module({
  imports: [TypeOrmModule.forFeature([Store])],
  controllers: [LocationsController, AdminStoresController],
  providers: [
    LocationsService,
    StoreImportService,
    StoreAdminService,
    StoreExportService,
    StoreIndex,
    ZipGeocoder,
    // The server that imports answers with the new stores at once, without waiting for its poll.
    { provide: STORES_IMPORTED, useFactory: (index: StoreIndex) => () => index.reload(), inject: [StoreIndex] },
  ],
  exports: [StoreImportService, StoreIndex, ZipGeocoder],
})
export class LocationsModule {}
