import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** Who is calling: the token's team decides which plants are visible (contract §2). */
export interface Caller {
  tokenId: number;
  team: string;
}

export const IS_PUBLIC = 'isPublic';
/** Routes without a token: health checks only. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

export const CurrentCaller = createParamDecorator((_: unknown, ctx: ExecutionContext): Caller => {
  return ctx.switchToHttp().getRequest<Request & { user: Caller }>().user;
});
