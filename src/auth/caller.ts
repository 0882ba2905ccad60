import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** `read`: list plants and search stores; `write`: also create and delete plants (write includes read). */
export type TokenScope = 'read' | 'write';
export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'write'];

/** Who is calling: the token's team decides which plants are visible (contract §2). */
export interface Caller {
  /**
   * What names the credential in logs, never the credential itself: an opaque token's id,
   * or `oidc:` + the JWT's `jti` (its `sub` when it has no `jti`).
   */
  tokenId: number | string;
  team: string;
  scopes: readonly TokenScope[];
}

export const IS_PUBLIC = 'isPublic';
/** Routes without a token: health checks only. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const REQUIRED_SCOPE = 'requiredScope';
/** The scope a route needs; routes without this decorator need `read`. */
export const RequireScope = (scope: TokenScope) => SetMetadata(REQUIRED_SCOPE, scope);

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  return ctx.switchToHttp().getRequest<Request & { user: Caller }>().user;
});
