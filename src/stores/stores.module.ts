import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GeoModule } from '../geo/geo.module.js';
import { AdminHolidaysController } from './admin-holidays.controller.js';
import { AdminServicesController } from './admin-services.controller.js';
import { AdminStoresController } from './admin-stores.controller.js';
import { Holiday } from './holiday.entity.js';
import { HolidaysService } from './holidays.service.js';
import { Service } from './service.entity.js';
import { ServicesService } from './services.service.js';
import { StoreAdminService } from './store-admin.service.js';
import { StoreCatalog } from './store-catalog.js';
import { StoreExportService } from './store-export.service.js';
import { StoreImportService } from './store-import.service.js';
import { Store } from './store.entity.js';

/**
 * The store catalogue: the stores table and the chain's holidays, the CSV import and export, the
 * admin routes and the `locations`, `holidays` and `services` commands. The search (locations/) reads it through StoreCatalog only.
 */
@Module({
  imports: [TypeOrmModule.forFeature([Store, Holiday, Service]), GeoModule],
  controllers: [AdminStoresController, AdminHolidaysController, AdminServicesController],
  providers: [StoreCatalog, StoreImportService, StoreAdminService, StoreExportService, HolidaysService, ServicesService],
  exports: [StoreCatalog, StoreImportService, StoreExportService, HolidaysService, ServicesService],
})
export class StoresModule {}
