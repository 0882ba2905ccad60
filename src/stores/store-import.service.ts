import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { type ConfigType } from '@nestjs/config';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { storesConfig } from './stores.config.js';
import { ZipGeocoder } from '../geo/zip-geocoder.js';
import { Metrics } from '../metrics/metrics.js';
import { StoreCatalog } from './store-catalog.js';
import { Pacer } from './pacer.js';
import { StoreCsvReader, StoreImportError, type CheckedFile } from './store-csv-reader.js';
import type { ImportOptions } from './store-import-options.js';
import { ImportPlanner, StoreCatalogMovedError, type ImportPlan, type ImportSummary } from './store-import-plan.js';
import { ServicesService } from './services.service.js';
import { Store } from './store.entity.js';

/**
 * How many plans an import makes outside a transaction: each one is dropped when a catalogue
 * write committed while it ran (a file of 100,000 rows takes seconds to plan). After them a dry
 * run answers its last plan, and an apply plans inside the write's own transaction (holding the
 * writer, as every import did before plans).
 */
const OPTIMISTIC_PLANS = 3;

/**
 * The stores CSV, for `locations import` and the admin upload, in three steps, each streaming
 * the file: a check of every row (keeping only the codes seen), a plan that compares the rows
 * with the stored ones a chunk at a time (reads only: no transaction, no lock, so plant writes
 * and the admin API go on meanwhile, on SQLite too), and an apply that writes only the plan's
 * changes through the catalogue's one door (StoreCatalog.write), in one short transaction.
 * The apply first checks that the catalogue is still at the version the plan read before its
 * first look-up; when another write committed since, an apply with `ifVersions` is refused
 * (StoreCatalogMovedError) and one without plans again (then, after OPTIMISTIC_PLANS, plans
 * inside the write's transaction, as before plans existed: it cannot miss a change). Nothing is
 * written unless every row is valid and the whole apply commits. docs/operations.md, "Importing
 * stores", tells operators; docs/performance.md has the figures.
 */
@Injectable()
export class StoreImportService {
  private readonly csv: StoreCsvReader;
  private readonly planner: ImportPlanner;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    geocoder: ZipGeocoder,
    private readonly metrics: Metrics,
    private readonly catalog: StoreCatalog,
    private readonly services: ServicesService,
    @Inject(storesConfig.KEY) settings: ConfigType<typeof storesConfig>,
  ) {
    this.csv = new StoreCsvReader((zip5) => geocoder.lookup(zip5));
    this.planner = new ImportPlanner(this.csv, catalog, settings.STORE_IMPORT_MAX_PRUNE_PERCENT);
  }

  importFile(path: string, options: ImportOptions = {}): Promise<ImportSummary> {
    const totalBytes = statSync(path).size;
    return this.import(() => createReadStream(path), { ...options, onProgress: options.onProgress && ((p) => options.onProgress!({ ...p, totalBytes })) });
  }

  /**
   * `open` is called once per pass and must give the same content each time. A dry run is the
   * check and one plan; an apply refuses when `ifVersions` does not name the plan's version or
   * the removal guard stops it, before anything is written.
   */
  async import(open: () => Readable, options: ImportOptions = {}): Promise<ImportSummary> {
    const pacer = new Pacer(options.cpuShare ?? 1);
    let file: CheckedFile;
    try {
      // The vocabulary as the import begins; the catalogue's door checks the written rows against it again (a service deleted meanwhile).
      file = await this.csv.validate(open, pacer, await this.services.slugs(), options.onProgress);
    } catch (error) {
      if (options.dryRun && options.listProblems && error instanceof StoreImportError) return this.refusal(error);
      throw error;
    }
    // Only a prune's removals read the codes after the check: without one they go now, not after
    // the commit (100,000 codes are about 8 MiB that the plan and the apply would carry).
    if (!options.prune) file.codes.clear();
    // Each try plans outside any transaction while the catalogue holds still; OPTIMISTIC_PLANS tries
    // at most. Then a dry run answers its last plan (a listing that may mix in a write made
    // meanwhile), and an apply plans once more inside the write's own transaction, which nothing
    // can overtake.
    for (let tries = 1; ; tries++) {
      const optimistic = tries <= OPTIMISTIC_PLANS;
      if (options.dryRun) {
        const plan = await this.planner.plan(this.dataSource.manager, open, file, pacer, options);
        // A write that committed during the plan may show in its listing: plan again, so that the listing is the version's.
        if (tries === OPTIMISTIC_PLANS || (await this.catalog.version()) === plan.summary.version) return plan.summary;
        continue;
      }
      // Once an apply committed, the codes of the file are not needed again (no plan follows): let
      // them go before the index loads every store, as the plan's rows (planThenApply).
      const committed = (applied: ImportSummary | undefined) => {
        if (applied) file.codes.clear();
      };
      const outcome = optimistic
        ? await this.planThenApply(open, file, pacer, options, committed)
        : await this.catalog.write(
            'import',
            async (write) => {
              // Only the summary leaves `work`: the plan's rows are garbage once written.
              const plan = await this.planner.plan(write.manager, open, file, pacer, options, write.version);
              this.planner.check(plan, options);
              await this.planner.apply(write, open, plan);
              return plan.summary;
            },
            committed,
          );
      if (!outcome) continue;
      const summary = { ...outcome.value, version: outcome.version };
      for (const count of ['inserted', 'updated', 'unchanged', 'pruned'] as const) this.metrics.storeImportRows.inc({ outcome: count }, summary[count]);
      return summary;
    }
  }

  /** A dry run's answer for a file with bad rows (`listProblems`): the problems, and no plan. */
  private async refusal(error: StoreImportError): Promise<ImportSummary> {
    return {
      read: error.read,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      pruned: 0,
      warnings: [],
      warningCount: 0,
      version: await this.catalog.version(),
      catalogSize: await this.dataSource.manager.count(Store),
      changes: [],
      changesTruncated: false,
      removalsNeedConfirmation: false,
      problems: error.problems,
      problemCount: error.problemCount,
    };
  }

  /**
   * A plan outside any transaction, then its apply; undefined when the catalogue moved in between
   * (plan again). The plan is let go of once the write committed, before the catalogue's
   * listeners run: an import of more than CHANGE_LOG_MAX_STORES stores makes the index load
   * every store again, and the old index, the new one and the plan's rows must not all be held
   * at once. `committed` runs then too.
   */
  private async planThenApply(
    open: () => Readable,
    file: CheckedFile,
    pacer: Pacer,
    options: ImportOptions,
    committed: (applied: ImportSummary | undefined) => void,
  ): Promise<{ value: ImportSummary; version: number } | undefined> {
    let plan: ImportPlan | undefined = await this.planner.plan(this.dataSource.manager, open, file, pacer, options);
    this.planner.check(plan, options);
    const applied = await this.catalog.write(
      'import',
      async (write) => {
        if (write.version !== plan!.summary.version) return undefined;
        await this.planner.apply(write, open, plan!);
        return plan!.summary;
      },
      (value) => {
        plan = undefined;
        committed(value);
      },
    );
    if (applied.value) return { value: applied.value, version: applied.version };
    if (options.ifVersions !== undefined && !options.ifVersions.includes(applied.version))
      throw new StoreCatalogMovedError(options.ifVersions, applied.version);
    return undefined;
  }
}
