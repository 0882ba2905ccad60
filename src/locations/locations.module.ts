import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LocationsController } from './locations.controller.js';
import { LocationsService } from './locations.service.js';
import { StoreImportService } from './store-import.service.js';
import { StoreIndex } from './store-index.js';
import { Store } from './store.entity.js';
import { ZipGeocoder } from './zip-geocoder.js';

@Module({
  imports: [TypeOrmModule.forFeature([Store])],
  controllers: [LocationsController],
  providers: [LocationsService, StoreImportService, StoreIndex, ZipGeocoder],
  exports: [StoreImportService, StoreIndex, ZipGeocoder],
})
export class LocationsModule {}
