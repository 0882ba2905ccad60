import type { ImportProgress } from './store-csv-reader.js';

/**
 * What the caller of an import asks for: read by the service (StoreImportService) and by its
 * planner (ImportPlanner), so it sits in a file of its own that both import, not in either of them.
 */
export interface ImportOptions {
  dryRun?: boolean;
  /** Delete stores whose code is not in the file (only after the whole file is valid). */
  prune?: boolean;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Apply only if the catalogue is still at one of these versions (the `version` of a dry run):
   * otherwise StoreCatalogMovedError and nothing is written. Ignored by a dry run.
   */
  ifVersions?: readonly number[];
  /**
   * The number of removals the caller expects from `prune`. When given it must equal the real
   * number, and it is what lets a prune remove more than STORE_IMPORT_MAX_PRUNE_PERCENT of the
   * catalogue (StoreRemovalGuardError otherwise). Ignored by a dry run.
   */
  expectedRemovals?: number;
  /**
   * The share of this process's time the import may take, from 0 (exclusive) to 1 (the default:
   * as fast as it goes). The server's import takes half, so that searches and other requests
   * keep at least about half of their throughput while a large file is imported.
   */
  cpuShare?: number;
  /**
   * A dry run of a file with bad rows answers a summary that lists them (`problems`) instead of
   * throwing StoreImportError: the admin upload's `Prefer: handling=lenient`. Ignored by an apply.
   */
  listProblems?: boolean;
}
