import {
  ForbiddenException,
  HttpException,
  HttpStatus,
  Injectable,
  InternalServerErrorException,
  UnauthorizedException,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { ADMIN_ON_TEAM_ROUTE, IS_PUBLIC, notAdminRefusal, readOnlyRefusal, REQUIRED_SCOPE, type RequiredScope } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { REALM } from './bearer.strategy.js';
import { rateLimit, rateLimitPolicy } from './rate-limit-headers.js';
import { RateLimitsService } from './rate-limits.service.js';

/**
 * Global guard: every route needs a bearer token unless marked @Public(). It runs before
 * any validation, so a bad request without a valid token gets 401 (contract §1). In order:
 * an address with too many failed authentications gets 429 whatever it sends; then the
 * token is checked (a failure counts against the address); then the token's own request
 * limit, whose state every later answer reports in `RateLimit-Policy` and `RateLimit`;
 * then its scope (403).
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimitsService,
  ) {
    super();
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request & { user?: Caller }>();
    const res = http.getResponse<Response>();
    // req.ip is the socket's address unless TRUST_PROXY says which X-Forwarded-For hops to believe.
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const blocked = await this.limits.addressBlocked(address);
    if (blocked !== null) tooMany(res, blocked, 'too many failed authentication attempts from this address, try again later');
    try {
      await super.canActivate(context);
    } catch (error) {
      // Only a token that was presented and refused counts: a missing header guesses nothing.
      if (error instanceof UnauthorizedException && req.headers.authorization !== undefined) await this.limits.recordFailure(address);
      throw error;
    }
    const caller = req.user!;
    const quota = await this.limits.consumeRequest(`${caller.tokenId}`);
    if (quota) {
      // Set before anything can fail, so that every answer to an accepted token carries them, errors included.
      res.setHeader('RateLimit-Policy', rateLimitPolicy(quota));
      res.setHeader('RateLimit', rateLimit(quota));
      if (quota.limited) tooMany(res, quota.resetSeconds, 'too many requests with this token, try again later');
    }
    const required = this.reflector.getAllAndOverride<RequiredScope | undefined>(REQUIRED_SCOPE, targets);
    const scope = required?.scope ?? 'read';
    if (!caller.scopes.includes(scope)) {
      if (scope === 'admin') throw new ForbiddenException(notAdminRefusal(required!.action));
      if (caller.scopes.includes('admin')) throw new ForbiddenException(ADMIN_ON_TEAM_ROUTE);
      throw new ForbiddenException(scope === 'write' ? readOnlyRefusal(required!.action) : 'this token has no read scope');
    }
    return true;
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

function tooMany(res: Response, seconds: number, message: string): never {
  res.setHeader('Retry-After', String(seconds));
  throw new HttpException(message, HttpStatus.TOO_MANY_REQUESTS);
}
