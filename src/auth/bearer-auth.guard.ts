import { Injectable, InternalServerErrorException, UnauthorizedException, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { REALM } from './bearer.strategy.js';
import { IS_PUBLIC, type Caller } from './caller.js';

/**
 * Global guard: every route needs a bearer token unless marked @Public(). It runs before
 * any validation, so a bad request without a valid token gets 401 (contract §1).
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(private readonly reflector: Reflector) {
    super();
  }

  canActivate(context: ExecutionContext) {
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
    return super.canActivate(context);
  }

  /**
   * passport-http-bearer also reads `access_token` from the query and the body; the
   * contract accepts the token only from the Authorization header, so the strategy is
   * shown the header alone.
   */
  getRequest(context: ExecutionContext) {
    const req = context.switchToHttp().getRequest<Request>();
    return { headers: { authorization: req.headers.authorization } };
  }

  handleRequest<TUser = Caller>(err: unknown, user: TUser | false, _info: unknown, context: ExecutionContext): TUser {
    if (err instanceof Error) throw err;
    if (err) throw new InternalServerErrorException('authentication failed');
    const req = context.switchToHttp().getRequest<Request & { user?: TUser }>();
    if (!user) {
      const res = context.switchToHttp().getResponse<Response>();
      if (req.headers.authorization === undefined) {
        res.setHeader('WWW-Authenticate', `Bearer realm="${REALM}"`);
        throw new UnauthorizedException('missing bearer token');
      }
      res.setHeader('WWW-Authenticate', `Bearer realm="${REALM}", error="invalid_token"`);
      throw new UnauthorizedException('invalid or expired bearer token');
    }
    req.user = user;
    return user;
  }
}
