import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's defaults; its CSP (scripts from 'self', inline styles) suits Swagger UI, whose files
 * are served from /docs. No upgrade-insecure-requests: behind a TLS-terminating load balancer or
 * on a private network the service is reached over plain HTTP, and /docs must still load.
 */
export const HELMET_OPTIONS: HelmetOptions = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

export type HeaderList = ReadonlyArray<readonly [name: string, value: string]>;

/**
 * The headers helmet sets with these options, worked out once at start-up by running its
 * middleware against a recorder. With no per-request directive (a CSP nonce function, say)
 * they are the same on every response, so each request only copies them instead of passing
 * through helmet's dozen nested middleware functions (about 5 % of the CPU of GET /plants,
 * README "Performance"). A directive given as a function would depend on the request: refused.
 * helmet's only removal (X-Powered-By) is Express's `x-powered-by` setting, switched off in
 * configureApp.
 */
export function securityHeaders(options: HelmetOptions = HELMET_OPTIONS): HeaderList {
  const csp = options.contentSecurityPolicy;
  if (typeof csp === 'object' && Object.values(csp.directives ?? {}).some((v) => typeof v === 'function' || (Array.isArray(v) && v.some((s) => typeof s === 'function')))) {
    throw new Error('securityHeaders: a CSP directive that depends on the request cannot be computed once');
  }
  const headers = new Map<string, string>();
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void headers.set(name, String(value)),
    removeHeader: () => undefined,
  };
  let failure: Error | undefined;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    // helmet passes an Error here only for a directive it cannot use.
    if (error) failure = error instanceof Error ? error : new Error('helmet refused its options');
  });
  if (failure) throw failure;
  return [...headers];
}
