import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TOKEN_SCOPES, type TokenScope } from '../../common/caller.js';
import { ValidateField, ValidateInteger, ValidateProblems, ValidateText, type FieldOptions } from '../../common/validators.js';
import type { ApiToken } from '../api-token.entity.js';
import { TEAM_SLUG } from '../tokens.service.js';

/** Longest grace period of a rotate: the longest lifetime of a token. */
export const MAX_GRACE_SECONDS = 3650 * 24 * 60 * 60;

/** A team slug (contract §2): lowercase letters, digits and inner hyphens, at most 63 characters. */
function ValidateTeam(options: FieldOptions) {
  const isTeam = ValidateProblems('isTeam', (value) => {
    if (value === undefined) return [{ code: 'empty', reason: 'is required' }];
    return typeof value === 'string' && TEAM_SLUG.test(value)
      ? []
      : [{ code: 'bad_team', reason: 'must be a lowercase slug (letters, digits, inner hyphens, at most 63 characters)' }];
  });
  return ValidateField({ type: 'string', pattern: TEAM_SLUG.source, maxLength: 63, example: 'acme', ...options }, isTeam);
}

function ValidateScope(options: FieldOptions) {
  const isScope = ValidateProblems('isScope', (value) =>
    (TOKEN_SCOPES as readonly unknown[]).includes(value) ? [] : [{ code: 'bad_scope', reason: `must be one of ${TOKEN_SCOPES.join(', ')}` }],
  );
  return ValidateField({ type: 'string', enum: [...TOKEN_SCOPES], ...options }, isScope);
}

const LIFETIME = {
  minimum: 1,
  maximum: 3650,
  description: "The new token's lifetime in days, 1 to 3650. Default: TOKEN_DEFAULT_TTL_DAYS (90 unless configured; 0 there: no expiry).",
};

@ApiSchema({ name: 'AdminTokenRequest', description: 'A token to issue.' })
export class CreateTokenRequest {
  @ValidateTeam({
    description:
      'The team the token belongs to: every token of a team sees the same plants. For an admin token, the team it is issued for (shown in audit lines).',
  })
  team: string;

  @ValidateText({ optional: true, minLength: 1, maxLength: 100, description: 'A label for operators, 1 to 100 characters.', example: 'storefront checkout' })
  name?: string;

  @ValidateInteger({ optional: true, ...LIFETIME, example: 90 })
  expires_in_days?: number;

  @ValidateScope({
    optional: true,
    default: 'write',
    example: 'read',
    description: '`read` (list plants, search stores), `write` (also create and delete plants) or `admin` (the /admin routes only). Default: `write`.',
  })
  scope?: TokenScope;
}

@ApiSchema({ name: 'AdminTokenRotation', description: 'How to rotate a token.' })
export class RotateTokenRequest {
  @ValidateInteger({
    minimum: 0,
    maximum: MAX_GRACE_SECONDS,
    description: 'How long the old token keeps working, in seconds: 0 (it stops at once) to 3650 days. An earlier expiry of the old token is kept.',
    example: 86400,
  })
  grace_seconds: number;

  @ValidateInteger({ optional: true, ...LIFETIME, example: 90 })
  expires_in_days?: number;
}

export class ListTokensQuery {
  @ValidateTeam({ optional: true, example: undefined, description: 'Only the tokens of this team.' })
  team?: string;

  @ValidateInteger({ optional: true, query: true, minimum: 1, maximum: 1000, description: 'Maximum number of tokens to return: 1 to 1000. Default: 100.' })
  limit: number = 100;

  @ValidateInteger({
    optional: true,
    query: true,
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    format: 'int64',
    description: 'Cursor: only tokens with a larger id. The `Link` header of a page gives the next one.',
  })
  after?: number;
}

/** A token as the admin API shows it: never the token itself or its digest. */
@ApiSchema({ name: 'AdminToken', description: 'An issued token, without the token itself (it is shown once, when issued).' })
export class AdminTokenView {
  @ApiProperty({ description: "The token's id.", type: 'integer', example: 12 })
  id: number;

  @ApiProperty({ description: 'Its team.', example: 'acme' })
  team: string;

  @ApiProperty({ description: 'Its label, or null.', type: 'string', nullable: true, example: 'storefront checkout' })
  name: string | null;

  @ApiProperty({ description: 'What it may do.', enum: [...TOKEN_SCOPES], example: 'write' })
  scope: TokenScope;

  @ApiProperty({ description: 'The first 10 characters of the token, to tell tokens apart.', example: 'pst_3xK9aQ' })
  prefix: string;

  @ApiProperty({ description: 'When it was issued (ISO 8601, UTC).', format: 'date-time', example: '2026-11-24T10:00:00.000Z' })
  created_at: string;

  @ApiProperty({ description: 'When it expires, or null for never.', type: 'string', format: 'date-time', nullable: true, example: '2027-02-22T10:00:00.000Z' })
  expires_at: string | null;

  @ApiProperty({ description: 'Its latest use, up to 15 seconds behind, or null.', type: 'string', format: 'date-time', nullable: true, example: null })
  last_used_at: string | null;

  @ApiProperty({ description: 'When it was revoked, or null.', type: 'string', format: 'date-time', nullable: true, example: null })
  revoked_at: string | null;

  @ApiProperty({ description: 'The id of the token that a rotate issued in its place, or null.', type: 'integer', nullable: true, example: null })
  replaced_by: number | null;
}

@ApiSchema({ name: 'AdminIssuedToken', description: 'A token just issued: the token itself is in this answer and nowhere else, ever.' })
export class IssuedTokenView extends AdminTokenView {
  @ApiProperty({
    description: 'The token, to send as `Authorization: Bearer <token>`. Shown only this once; the service keeps its digest.',
    example: 'pst_3xK9aQ…',
  })
  token: string;
}

@ApiSchema({ name: 'AdminTokenRotated', description: 'The replacement (with the token itself, shown once) and the old token with its new expiry.' })
export class RotatedTokenView extends IssuedTokenView {
  @ApiProperty({ description: 'The old token, now expiring at the end of the grace period.', type: AdminTokenView })
  replaces: AdminTokenView;
}

const iso = (date: Date | null) => date?.toISOString() ?? null;

export function tokenView(token: ApiToken): AdminTokenView {
  return {
    id: token.id,
    team: token.team,
    name: token.name,
    scope: token.scope,
    prefix: token.prefix,
    created_at: token.createdAt.toISOString(),
    expires_at: iso(token.expiresAt),
    last_used_at: iso(token.lastUsedAt),
    revoked_at: iso(token.revokedAt),
    replaced_by: token.replacedBy ?? null,
  };
}
