import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GeoModule } from '../geo/geo.module.js';
import { AdminStoresController } from './admin-stores.controller.js';
import { StoreAdminService } from './store-admin.service.js';
import { StoreCatalog } from './store-catalog.js';
import { StoreExportService } from './store-export.service.js';
import { StoreImportService } from './store-import.service.js';
import { Store } from './store.entity.js';

/**
 * The store catalogue: the stores table, its CSV import and export, the admin routes and the
 * `locations` commands. The search (locations/) reads it through StoreCatalog only.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Store]), GeoModule],
  controllers: [AdminStoresController],
  providers: [StoreCatalog, StoreImportService, StoreAdminService, StoreExportService],
  exports: [StoreCatalog, StoreImportService, StoreExportService],
})
export class StoresModule {}
