import { registerAs } from '@nestjs/config';
import { IntegerSetting, validateSettings } from '../config/environment.js';

/** The plant catalogue's upkeep. */
export class PlantsSettings {
  /**
   * How often each instance deletes `Idempotency-Key`s older than 24 hours, in batches of 1000
   * (1000–86400000). See [Idempotent creates](api.md#idempotent-creates).
   */
  @IntegerSetting(1000, 86_400_000)
  IDEMPOTENCY_CLEANUP_INTERVAL_MS = 600_000;
}

export const plantsConfig = registerAs('plants', () => validateSettings(PlantsSettings));
