import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.js';

/** Global: the feature services count into the one Metrics of their application. */
@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
