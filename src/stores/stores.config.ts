import { registerAs } from '@nestjs/config';
import { BooleanSetting, IntegerSetting, validateSettings } from '../config/environment.js';

/** The store list: its imports, the demo stores, and each instance's search index of it. */
export class StoresSettings {
  /**
   * Largest store list `POST /admin/stores.csv` takes, in bytes; larger → 413. The upload is
   * streamed to a temporary file, gzip-compressed, so memory does not grow with it; the JSON body
   * limit above stays.
   */
  @IntegerSetting(1024, 1_073_741_824)
  STORE_IMPORT_MAX_BYTES = 52_428_800;

  /**
   * The share of the catalogue, in percent, that an import's `prune` may remove without the
   * caller stating how many removals it expects (`expected_removals`, `--expect-removals`); more
   * is refused with 409 and nothing is written. 0: every removal must be confirmed; 100: never asked.
   */
  @IntegerSetting(0, 100)
  STORE_IMPORT_MAX_PRUNE_PERCENT = 10;

  /**
   * How often each instance checks whether the store list changed elsewhere and applies those
   * changes to its in-memory search index (250–3600000). See [Store
   * search](operations.md#store-search-at-chain-scale).
   */
  @IntegerSetting(250, 3_600_000)
  STORE_INDEX_REFRESH_MS = 5000;

  /**
   * Embedded SQLite only: on the first start (no stores and no tokens yet) load the demo stores and
   * log a token for team `demo`. Never on MySQL.
   */
  @BooleanSetting()
  DEMO_SEED = true;
}

export const storesConfig = registerAs('stores', () => validateSettings(StoresSettings));
