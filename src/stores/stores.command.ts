import { Presets, SingleBar } from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import { CommandFailure, nonNegativeInteger, say, type WithApp } from '../common/command-line.js';
import { StoreExportService } from './store-export.service.js';
import { formatProblem } from './store-csv.js';
import { type ImportProgress } from './store-csv-reader.js';
import { StoreCatalogMovedError, StoreRemovalGuardError, type ImportSummary } from './store-import-plan.js';
import { StoreImportService } from './store-import.service.js';

/** Exit codes a script can tell apart from a bad file (1): the catalogue moved since the dry run, the removal guard refused. */
const EXIT_CATALOG_MOVED = 3;
const EXIT_REMOVAL_GUARD = 4;

/** Text for a table cell: JSON-quoted (white space and control characters show), cut at `max` characters. */
const cell = (text: string, max = 40) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/**
 * A dry run's changes as a table: one line per added or removed store, one per changed field of
 * an updated store (`field: "old" -> "new"`), in the order of the file, removals last.
 */
export function changesTable(summary: ImportSummary): string {
  if (summary.changes.length === 0) return 'no changes\n';
  const rows: string[][] = [['CHANGE', 'LINE', 'CODE', 'NAME', 'WHAT']];
  for (const change of summary.changes) {
    const head = [change.change, change.change === 'remove' ? '-' : String(change.line), cell(change.code, 24), cell(change.name)];
    if (change.change !== 'update') rows.push([...head, `${change.city}, ${change.state}`]);
    else
      change.fields.forEach((field, i) =>
        rows.push([...(i === 0 ? head : ['', '', '', '']), `${field.field}: ${JSON.stringify(field.old)} -> ${JSON.stringify(field.new)}`]),
      );
  }
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const lines = rows.map((row) =>
    row
      .map((value, column) => (column === row.length - 1 ? value : value.padEnd(widths[column])))
      .join('  ')
      .trimEnd(),
  );
  const listed = summary.inserted + summary.updated + summary.pruned;
  if (summary.changesTruncated) lines.push(`… the first ${summary.changes.length} of ${listed} changes`);
  return `${lines.join('\n')}\n`;
}

/**
 * Import progress on stderr: a bar on a terminal (cli-progress), otherwise a plain line
 * every 10,000 rows and at the end of each pass, which reads well in CI logs.
 */
function progressReporter(): { onProgress: (p: ImportProgress) => void; stop: () => void } {
  let phase: ImportProgress['phase'] | undefined;
  if (process.stderr.isTTY) {
    const bar = new SingleBar({ format: '{phase} |{bar}| {percentage}% | {rows} rows', stream: process.stderr, hideCursor: true }, Presets.shades_classic);
    return {
      onProgress: (p) => {
        if (p.phase !== phase) {
          if (phase) bar.stop();
          phase = p.phase;
          bar.start(p.totalBytes || 1, 0, { phase: p.phase.padEnd(8), rows: 0 });
        }
        bar.update(Number.isNaN(p.bytes) ? (p.totalBytes ?? 1) : p.bytes, { rows: p.rows });
      },
      stop: () => phase && bar.stop(),
    };
  }
  return {
    onProgress: (p) => {
      const done = Number.isNaN(p.bytes);
      if (done || p.rows % 10_000 === 0) say(`${p.phase}: ${p.rows} rows${done ? ', done' : ''}`);
    },
    stop: () => undefined,
  };
}

/**
 * `plant-store locations …`: the store list as CSV from a shell. The command keeps its name of
 * the spec's vocabulary (a store is a location to a customer); running servers see an import
 * at their next poll of the catalogue's version (StoreCatalog).
 */
export function storesCommand(program: Command, withApp: WithApp): void {
  const locations = program.command('locations').description('Load and dump the store list.');

  locations
    .command('import')
    .description(
      'Validate every row of a stores CSV, then upsert them by code in one transaction (nothing is written if any row is bad). ' +
        'A dry run prints every change as a table on stdout and the catalogue version to apply it with (--if-version).',
    )
    .argument('<file>', 'CSV with header code,name,address,city,state,zip,lat,lng,monday,…,sunday[,time_zone][,special_hours][,temporarily_closed]')
    .option('--dry-run', 'validate and list the changes, write nothing')
    .option('--prune', 'also delete stores whose code is not in the file')
    .option('--if-version <version>', "apply only if the catalogue is still at this version (a dry run's), else exit 3 writing nothing", nonNegativeInteger)
    .option(
      '--expect-removals <count>',
      'with --prune: the number of removals expected (as the dry run listed); needed above STORE_IMPORT_MAX_PRUNE_PERCENT',
      nonNegativeInteger,
    )
    .action((file: string, options: { dryRun?: boolean; prune?: boolean; ifVersion?: number; expectRemovals?: number }) =>
      withApp(async (app) => {
        if (options.expectRemovals !== undefined && !options.prune) throw new InvalidArgumentError('--expect-removals needs --prune');
        const progress = progressReporter();
        const summary = await app
          .get(StoreImportService)
          .importFile(file, {
            dryRun: options.dryRun,
            prune: options.prune,
            ifVersions: options.ifVersion === undefined ? undefined : [options.ifVersion],
            expectedRemovals: options.expectRemovals,
            onProgress: progress.onProgress,
          })
          .catch((error: unknown) => {
            if (error instanceof StoreCatalogMovedError) {
              throw new CommandFailure(`${error.message}. Check the file again with --dry-run and apply with its version`, EXIT_CATALOG_MOVED);
            }
            if (error instanceof StoreRemovalGuardError) {
              throw new CommandFailure(
                `${error.message}. Check the list with --dry-run, then add --expect-removals ${error.removals} to confirm`,
                EXIT_REMOVAL_GUARD,
              );
            }
            throw error;
          })
          .finally(progress.stop);
        for (const warning of summary.warnings) say(`warning: ${formatProblem(warning)}`);
        if (summary.warningCount > summary.warnings.length) say(`… and ${summary.warningCount - summary.warnings.length} more warnings`);
        if (options.dryRun) process.stdout.write(changesTable(summary));
        const pruned = options.prune ? `, ${summary.pruned} pruned` : '';
        say(
          `${options.dryRun ? 'dry run, nothing written: ' : ''}${summary.read} rows read, ${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged${pruned}`,
        );
        if (options.dryRun) {
          say(`catalogue version ${summary.version}: apply exactly these changes with --if-version ${summary.version}`);
          if (summary.removalsNeedConfirmation)
            say(`${summary.pruned} of ${summary.catalogSize} stores would be removed: the apply needs --expect-removals ${summary.pruned}`);
        } else say(`catalogue version ${summary.version}`);
      }),
    );

  locations
    .command('export')
    .description('Write every store as CSV in the import format (to stdout without a file).')
    .argument('[file]', 'output file')
    .action((file: string | undefined) =>
      withApp(async (app) => {
        const exporter = app.get(StoreExportService);
        const count = file ? await exporter.exportFile(file) : await exporter.export(process.stdout);
        say(`${count} stores exported`);
      }),
    );
}
