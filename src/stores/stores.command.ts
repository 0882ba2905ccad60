import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { say, type WithApp } from '../common/command-line.js';
import { StoreExportService } from './store-export.service.js';
import { StoreImportService, type ImportProgress } from './store-import.service.js';

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
    .description('Validate every row of a stores CSV, then upsert them by code in one transaction (nothing is written if any row is bad).')
    .argument('<file>', 'CSV with header code,name,address,city,state,zip,lat,lng,monday,…,sunday')
    .option('--dry-run', 'validate and report, write nothing')
    .option('--prune', 'also delete stores whose code is not in the file')
    .action((file: string, options: { dryRun?: boolean; prune?: boolean }) =>
      withApp(async (app) => {
        const progress = progressReporter();
        const summary = await app.get(StoreImportService).importFile(file, { ...options, onProgress: progress.onProgress }).finally(progress.stop);
        for (const warning of summary.warnings.slice(0, 50)) say(`warning: ${warning}`);
        if (summary.warnings.length > 50) say(`… and ${summary.warnings.length - 50} more warnings`);
        const pruned = options.prune ? `, ${summary.pruned} pruned` : '';
        say(`${options.dryRun ? 'dry run, nothing written: ' : ''}${summary.read} rows read, ${summary.inserted} inserted, ${summary.updated} updated, ${summary.unchanged} unchanged${pruned}`);
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
