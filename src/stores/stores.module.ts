import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GeoModule } from '../geo/geo.module.js';
import { AdminHolidaysController } from './admin-holidays.controller.js';
import { AdminStoresController } from './admin-stores.controller.js';
import { Holiday } from './holiday.entity.js';
import { HolidaysService } from './holidays.service.js';
import { StoreAdminService } from './store-admin.service.js';
import { StoreCatalog } from './store-catalog.js';
import { StoreExportService } from './store-export.service.js';
import { StoreImportService } from './store-import.service.js';
import { Store } from './store.entity.js';

/**
 * The store catalogue: the stores table and the chain's holidays, the CSV import and export, the
 * admin routes and the `locations` and `holidays` commands. The search (locations/) reads it through StoreCatalog only.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Store, Holiday]), GeoModule],
  controllers: [AdminStoresController, AdminHolidaysController],
  providers: [StoreCatalog, StoreImportService, StoreAdminService, StoreExportService, HolidaysService],
  exports: [StoreCatalog, StoreImportService, StoreExportService, HolidaysService],
})
export class StoresModule {}
