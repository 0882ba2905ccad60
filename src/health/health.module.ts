import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ShutdownState } from '../common/shutdown-state.js';
import { GeoModule } from '../geo/geo.module.js';
import { StoresModule } from '../stores/stores.module.js';
import { AdminStatusController } from './admin-status.controller.js';
import { HealthController } from './health.controller.js';
import { Readiness } from './readiness.js';

/** The probes (/health) and the operator's status (/admin/status), from one readiness check. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), StoresModule, GeoModule],
  controllers: [HealthController, AdminStatusController],
  providers: [ShutdownState, Readiness],
  // The change-event relay's handover reads the shutdown's deadline.
  exports: [ShutdownState],
})
export class HealthModule {}
