import 'reflect-metadata';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Presets, SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import { ApiToken } from './auth/api-token.entity.js';
import { TOKEN_SCOPES, type TokenScope } from './auth/caller.js';
import { generateToken } from './auth/token-format.js';
import { TokensService } from './auth/tokens.service.js';
import { appConfigModule } from './config/config.module.js';
import { loadEnvironment } from './config/environment.js';
import { databaseModule } from './database/database.module.js';
import { EventsModule } from './events/events.module.js';
import { StoreExportService } from './locations/store-export.service.js';
import { STORES_IMPORTED, StoreImportError, StoreImportService, type ImportProgress } from './locations/store-import.service.js';
import { Store } from './locations/store.entity.js';
import { ZipGeocoder } from './locations/zip-geocoder.js';
import { MetricsModule } from './metrics/metrics.module.js';

/**
 * The same configuration, database and services as the server, without HTTP: only what the
 * commands use. No in-memory store index (a command needs no index of 100,000 stores), and
 * none of the request-time auth parts (passport strategy, SSO, rate limits with their Redis
 * connection).
 */
@Module({})
class CliModule {
  static forRoot(): DynamicModule {
    return {
      module: CliModule,
      imports: [appConfigModule(), databaseModule(), MetricsModule, EventsModule, TypeOrmModule.forFeature([ApiToken, Store])],
      providers: [
        TokensService,
        StoreImportService,
        StoreExportService,
        ZipGeocoder,
        // No index to reload here: running servers see an import at their next poll (StoreIndex).
        { provide: STORES_IMPORTED, useValue: () => Promise.resolve() },
      ],
    };
  }
}

/** stdout carries only the result (a token, a listing); everything else goes to stderr. */
const say = (line: string) => process.stderr.write(`${line}\n`);

async function withApp(run: (app: INestApplicationContext) => Promise<void>): Promise<void> {
  loadEnvironment();
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(), { logger: ['fatal', 'error'], abortOnError: false });
  try {
    await run(app);
  } finally {
    await app.close();
  }
}

function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
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

function scope(value: string): TokenScope {
  if (!(TOKEN_SCOPES as string[]).includes(value)) throw new InvalidArgumentError(`must be ${TOKEN_SCOPES.join(' or ')}`);
  return value as TokenScope;
}

const DURATION_UNITS_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** `0`, or a whole number with a unit: `90s`, `30m`, `24h`, `7d` (at most 3650 days). */
function duration(value: string): number {
  const match = /^(0|[1-9][0-9]{0,8})([smhd])?$/.exec(value);
  if (!match || (match[1] !== '0' && !match[2])) throw new InvalidArgumentError('must be 0 or a whole number with a unit: 90s, 30m, 24h, 7d');
  const ms = Number(match[1]) * DURATION_UNITS_MS[(match[2] ?? 's') as keyof typeof DURATION_UNITS_MS];
  if (ms > 3650 * DURATION_UNITS_MS.d) throw new InvalidArgumentError('must be at most 3650 days');
  return ms;
}

const iso = (date: Date | null) => (date ? date.toISOString() : '-');

const program = new Command('plant-store').description('Operator command line of the plant store service.').showHelpAfterError();

const tokens = program.command('tokens').description('Issue, list and revoke bearer tokens.');

tokens
  .command('create')
  .description('Issue a token for a team; prints the token (shown only this once) on stdout.')
  .requiredOption('--team <slug>', 'team the token belongs to (lowercase slug, e.g. acme)')
  .option('--name <label>', 'a label for the operator')
  .option('--expires-in-days <n>', 'lifetime in days (default: TOKEN_DEFAULT_TTL_DAYS, 90 unless configured)', positiveInteger)
  .option('--scope <scope>', 'read (list plants, search stores), write (also create and delete plants) or admin (the /admin routes only)', scope, 'write' as TokenScope)
  .action((options: { team: string; name?: string; expiresInDays?: number; scope: TokenScope }) =>
    withApp(async (app) => {
      const { token, record } = await app.get(TokensService).create(options);
      process.stdout.write(`${token}\n`);
      say(`token ${record.id} (${record.scope}) issued for team ${record.team}, ${record.expiresAt ? `expires ${iso(record.expiresAt)}` : 'never expires'}`);
    }),
  );

tokens
  .command('list')
  .description('One token a line: id, team, name, prefix, created, expires, last used, revoked, scope.')
  .option('--team <slug>', 'only this team')
  .action((options: { team?: string }) =>
    withApp(async (app) => {
      for (const t of await app.get(TokensService).list(options.team)) {
        const fields = [t.id, t.team, t.name ?? '-', t.prefix, iso(t.createdAt), iso(t.expiresAt), iso(t.lastUsedAt), iso(t.revokedAt), t.scope];
        process.stdout.write(`${fields.join('\t')}\n`);
      }
    }),
  );

tokens
  .command('revoke')
  .description('Revoke a token by id; it stops working on the next request.')
  .argument('<id>', 'token id, as listed', positiveInteger)
  .action((id: number) =>
    withApp(async (app) => {
      await app.get(TokensService).revoke(id);
      say(`token ${id} revoked`);
    }),
  );

tokens
  .command('generate')
  .description('Print a new token without storing it: the content of ADMIN_TOKEN_FILE (needs no database).')
  .action(() => {
    process.stdout.write(`${generateToken()}\n`);
  });

tokens
  .command('rotate')
  .description('Issue a replacement (same team, name and scope; prints it on stdout) and let the old token expire after a grace period.')
  .argument('<id>', 'token id, as listed', positiveInteger)
  .requiredOption('--grace <duration>', 'how long the old token keeps working: 0 (stops at once), 90s, 30m, 24h, 7d', duration)
  .option('--expires-in-days <n>', 'lifetime of the new token in days (default: TOKEN_DEFAULT_TTL_DAYS)', positiveInteger)
  .action((id: number, options: { grace: number; expiresInDays?: number }) =>
    withApp(async (app) => {
      const { token, record, old } = await app.get(TokensService).rotate(id, options.grace, options.expiresInDays);
      process.stdout.write(`${token}\n`);
      say(`token ${record.id} (${record.scope}) issued for team ${record.team}, ${record.expiresAt ? `expires ${iso(record.expiresAt)}` : 'never expires'}`);
      say(`token ${old.id} now expires ${iso(old.expiresAt)}`);
    }),
  );

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

program.parseAsync().catch((error: unknown) => {
  // A closed stdout (`… export | head`) is the reader's choice, not a failure.
  if ((error as { code?: string }).code === 'EPIPE') return;
  say(error instanceof StoreImportError || error instanceof Error ? `error: ${error.message}` : `error: ${String(error)}`);
  process.exitCode = 1;
});
