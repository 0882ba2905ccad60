import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { BearerAuthGuard } from './auth/bearer-auth.guard.js';
import { AllExceptionsFilter } from './common/all-exceptions.filter.js';
import { BodyGuard } from './common/body.guard.js';
import { createValidationPipe } from './common/validation.js';
import { appConfigModule, loadSettings, type Settings } from './settings.js';
import { ConsoleModule } from './console/console.module.js';
import { databaseModule } from './database/database.module.js';
import { DemoSeedService } from './demo/demo-seed.service.js';
import { EventsModule } from './events/events.module.js';
import { OutboxRelay } from './events/outbox-relay.js';
import { HealthModule } from './health/health.module.js';
import { LocationsModule } from './locations/locations.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { PlantsModule } from './plants/plants.module.js';
import { StoresModule } from './stores/stores.module.js';
import { TokensModule } from './tokens/tokens.module.js';

@Module({})
export class AppModule {
  /**
   * Built at start-up (not at import) so that the environment of this start is the one read:
   * `settings` as main.ts loaded them, or loaded from process.env here (the tests).
   */
  static forRoot(settings?: Settings): DynamicModule {
    // The database's module is declared once the settings are valid: declaring it registers the
    // data source's name for the whole process (@nestjs/typeorm), and a start-up refused for a bad
    // setting would leave that name taken for the next app of the process (a test's).
    const loaded = settings ?? loadSettings();
    const config = appConfigModule(loaded);
    const database = databaseModule({ retry: true, multipleStatements: Boolean(loaded.events.EVENTS_NATS_URL) });
    return {
      module: AppModule,
      // This order is the order of the paths in the OpenAPI document (tokens, plants, search, stores).
      imports: [
        config,
        database,
        MetricsModule,
        EventsModule,
        TokensModule,
        AuthModule,
        PlantsModule,
        LocationsModule,
        StoresModule,
        HealthModule,
        ConsoleModule,
      ],
      providers: [
        // Guards run in this order: who is calling first, then whether the body could be read.
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_GUARD, useClass: BodyGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        DemoSeedService,
        // The server publishes the outbox; the command line only writes to it.
        OutboxRelay,
      ],
    };
  }
}
