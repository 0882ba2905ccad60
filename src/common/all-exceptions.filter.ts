import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger, NotFoundException, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isDatabaseUnavailableError } from '../database/database-errors.js';
import { carriesProblems } from './error-body.js';
import { redactUrl } from './logger.js';

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

declare module 'express' {
  interface Request {
    /** The template of the route a 405 answered for (no route matched its method): for the request's log line and metric. */
    routeTemplate?: string;
  }
}

/**
 * Methods that some route answers for this path; empty when no route matches at all.
 * Neither Nest nor Express answers 405 (contract §1), so this reads Express's route layers
 * (`app.router.stack`, including the /docs routes Swagger registers outside Nest); the 405
 * tests of test/http.e2e-spec.ts fail if an Express update changes that shape.
 */
function allowedMethods(req: Request): { methods: string[]; template?: string } {
  const stack: RouteLayer[] = (req.app as unknown as { router?: { stack: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  let template: string | undefined;
  const matching = stack.flatMap((layer) => (layer.route && layer.match(req.path) ? [layer.route] : []));
  // A path one route names literally is that route's: /locations/nearest is POST only, though
  // GET /locations/{code} matches it too (a store's page; app.setup.ts's nearestIsPostOnly).
  const literal = matching.filter((route) => !route.path.includes(':'));
  for (const route of literal.length > 0 ? literal : matching) {
    template ??= route.path;
    for (const [method, on] of Object.entries(route.methods)) if (on && method !== '_all') methods.add(method.toUpperCase());
  }
  if (methods.has('GET')) methods.add('HEAD');
  return { methods: [...methods].sort(), template };
}

function problemsOf(exception: HttpException): unknown[] | undefined {
  const response = exception.getResponse();
  const problems = typeof response === 'object' ? (response as { problems?: unknown }).problems : undefined;
  return Array.isArray(problems) && problems.length > 0 ? problems : undefined;
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}

/**
 * Turns every error, from any layer, into `{"error": status, "message": sentence}` and
 * nothing else (contract §1). A 5xx never shows internals; it is logged with the request id.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const { status, message } = this.describe(exception, req, res);
    if (status >= 500) {
      const detail = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
      this.logger.error(`request ${req.id} ${req.method} ${redactUrl(req.originalUrl)} failed with ${status}: ${detail}`);
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    // Admin routes may carry their problems as data (AdminErrorBody); every other answer is exactly {error, message}.
    const problems = exception instanceof HttpException && carriesProblems(req.path) ? problemsOf(exception) : undefined;
    res.status(status).json(problems ? { error: status, message, problems } : { error: status, message });
  }

  private describe(exception: unknown, req: Request, res: Response): { status: number; message: string } {
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      // Nest's router throws a 404 when no route matched: say 405 if the path exists for another method.
      if (exception instanceof NotFoundException && !req.route) {
        const { methods: allowed, template } = allowedMethods(req);
        if (allowed.length > 0) {
          // Counted under its route template (`/plants/:id`), not with the paths that match nothing.
          req.routeTemplate = template;
          res.setHeader('Allow', allowed.join(', '));
          return { status: HttpStatus.METHOD_NOT_ALLOWED, message: `method ${req.method} is not allowed on ${req.path}` };
        }
        return { status, message: `no route for ${req.method} ${req.path}` };
      }
      if (status >= 500) return { status, message: status === Number(HttpStatus.SERVICE_UNAVAILABLE) ? messageOf(exception) : 'internal server error' };
      return { status, message: messageOf(exception) };
    }
    if (isDatabaseUnavailableError(exception)) {
      return { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'the database is unavailable, try again shortly' };
    }
    // Errors raised by Express itself (e.g. a malformed %-escape in the path) carry a 4xx status.
    const status = (exception as { status?: unknown })?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return { status, message: 'request could not be understood' };
    }
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, message: 'internal server error' };
  }
}
