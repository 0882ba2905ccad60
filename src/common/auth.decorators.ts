import { applyDecorators, createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import { ApiForbiddenResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Caller, TokenScope } from './caller.js';
import { ErrorBody } from './error-body.js';

/** Route metadata read by BearerAuthGuard. */
export const IS_PUBLIC = 'isPublic';
export const REQUIRED_SCOPE = 'requiredScope';

/** The scope a route needs, and what the route does, for the 403 message. */
export interface RequiredScope {
  scope: TokenScope;
  action: string;
}

/** The 403 message for a read-only token on a route that needs `write`. */
export const readOnlyRefusal = (action: string) => `this token may only read; ${action} needs scope write`;
/** The 403 message for a team token on an /admin route. */
export const notAdminRefusal = (action: string) => `this token is not an admin token; ${action} needs scope admin`;
/** The 403 message for an admin token on a team's route (plants, store search). */
export const ADMIN_ON_TEAM_ROUTE = 'an admin token manages tokens and stores only; use a team token (scope read or write) here';

/** Routes without a token: health checks only. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** The scope a route needs; routes without this decorator need `read`. */
export const RequireScope = (scope: TokenScope, action: string) => SetMetadata(REQUIRED_SCOPE, { scope, action } satisfies RequiredScope);

/**
 * Operations that change data: they need a token with scope `write`; a read-only token gets
 * 403 naming `action` (e.g. "creating or deleting plants").
 */
export const WriteScope = (action: string) =>
  applyDecorators(
    RequireScope('write', action),
    ApiForbiddenResponse({
      description: 'The token has scope `read` only; creating or deleting needs scope `write`.',
      type: ErrorBody,
      example: { error: 403, message: readOnlyRefusal(action) },
    }),
  );

/**
 * The /admin routes: they need a token with scope `admin`; any other token gets 403
 * naming `action` (e.g. "issuing tokens").
 */
export const AdminScope = (action: string) =>
  applyDecorators(
    RequireScope('admin', action),
    ApiForbiddenResponse({
      description: 'The token is not an admin token (scope `admin`).',
      type: ErrorBody,
      example: { error: 403, message: notAdminRefusal(action) },
    }),
  );

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  return ctx.switchToHttp().getRequest<Request & { user: Caller }>().user;
});
