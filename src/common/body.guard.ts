import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/** Raises the body problem found by jsonBody (413/415/400), after the auth guard has passed. */
@Injectable()
export class BodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    if (req.bodyError) throw req.bodyError;
    return true;
  }
}
