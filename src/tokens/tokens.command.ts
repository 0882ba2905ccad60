import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { TOKEN_SCOPES, type TokenScope } from '../common/caller.js';
import { positiveInteger, say, type WithApp } from '../common/command-line.js';
import { generateToken } from '../config/token-format.js';
import { TokensService } from './tokens.service.js';

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

/** `plant-store tokens …`: the registry from a shell (the first admin token comes from here). */
export function tokensCommand(program: Command, withApp: WithApp): void {
  const tokens = program.command('tokens').description('Issue, list and revoke bearer tokens.');

  tokens
    .command('create')
    .description('Issue a token for a team; prints the token (shown only this once) on stdout.')
    .requiredOption('--team <slug>', 'team the token belongs to (lowercase slug, e.g. acme)')
    .option('--name <label>', 'a label for the operator')
    .option('--expires-in-days <n>', 'lifetime in days (default: TOKEN_DEFAULT_TTL_DAYS, 90 unless configured)', positiveInteger)
    .option(
      '--scope <scope>',
      'read (list plants, search stores), write (also create and delete plants) or admin (the /admin routes only)',
      scope,
      'write' as TokenScope,
    )
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
}
