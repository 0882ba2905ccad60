import { registerAs } from '@nestjs/config';
import { IsOptional, IsString, MinLength } from 'class-validator';
import { IntegerSetting, validateSettings } from '../config/environment.js';

/** The Prometheus endpoint. */
export class MetricsSettings {
  /**
   * Port of the Prometheus endpoint `GET /metrics`, a listener of its own (never the public port, no
   * token); `0`: metrics off. A port that cannot be bound stops start-up naming `METRICS_PORT`:
   * instances side by side on one host each need their own (or `0`). See [Metrics and
   * traces](operations.md#metrics-and-traces).
   */
  @IntegerSetting(0, 65535)
  METRICS_PORT = 9464;

  /**
   * Interface of the metrics listener. Unset: the same as `HOST` (in a container, `0.0.0.0`, so that
   * Prometheus can scrape the pod).
   */
  @IsOptional()
  @IsString()
  @MinLength(1)
  METRICS_HOST?: string;
}

export const metricsConfig = registerAs('metrics', () => validateSettings(MetricsSettings));
