import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { type ConfigType } from '@nestjs/config';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import helmet, { type HelmetOptions } from 'helmet';
import type { Logger } from 'pino';
import { documentAdminProblems } from './common/api-errors.js';
import { documentResponseHeaders } from './common/api-headers.js';
import { AdminErrorBody, ErrorBody } from './common/error-body.js';
import { jsonBody } from './common/json-body.js';
import { requestContext } from './common/request-context.middleware.js';
import { serverConfig } from './common/server.config.js';
import { Metrics } from './metrics/metrics.js';
import { STORE_IMPORT_PATH } from './stores/admin-stores.controller.js';

/** The package.json fields the document's `info` is taken from. */
interface PackageInfo {
  license?: string;
  author?: string | { name?: string; email?: string; url?: string };
  homepage?: string;
}

/**
 * `info.license` and `info.contact` come from package.json (found beside dist/ and src/ alike),
 * so that they are written in one place. An npm author string is "Name <email> (url)".
 */
export function packageInfo(
  pkg: PackageInfo = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as PackageInfo,
): Pick<OpenAPIObject['info'], 'license' | 'contact'> {
  const author =
    typeof pkg.author === 'string'
      ? (/^(?<name>[^<(]*?)\s*(?:<(?<email>[^>]+)>)?\s*(?:\((?<url>[^)]+)\))?$/.exec(pkg.author.trim())?.groups ?? {})
      : (pkg.author ?? {});
  const contact = Object.fromEntries(
    Object.entries({ name: author.name || undefined, email: author.email, url: author.url ?? pkg.homepage }).filter(([, v]) => v),
  );
  return { ...(pkg.license ? { license: { name: pkg.license } } : {}), ...(Object.keys(contact).length ? { contact } : {}) };
}

export function buildOpenApiDocument(app: NestExpressApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Plant Store Service')
    .setDescription(
      'Store locations near a customer\'s US address, and a per-team plant catalogue. Every operation needs `Authorization: Bearer <token>`; every error body is `{"error": <status>, "message": <sentence>}`.',
    )
    .setVersion('1.0.0')
    // Relative: the document describes the host that serves it, whatever its name or port.
    .addServer('/', 'This service: the host serving this document.')
    .addTag('locations', "Store locations nearest to a customer's US ZIP code.")
    .addTag('plants', "The caller's team's plant catalogue: create, list (paged), delete.")
    .addTag('health', 'Probes for load balancers and orchestrators; no token needed.')
    .addTag(
      'admin',
      'For operators, not part of the Plant Store Service interface: tokens of every team and the store list. Needs a token with scope admin, which the other operations refuse.',
    )
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque (pst_…)',
      description:
        'An opaque token `pst_…` issued by `npm run cli -- tokens create`, or (when the service is configured for single sign-on) a JWT access token of the OIDC issuer.',
    });
  const config = builder.build();
  // DocumentBuilder starts with an empty contact; package.json may have none to give.
  delete config.info.contact;
  Object.assign(config.info, packageInfo());
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorBody, AdminErrorBody] });
  return documentResponseHeaders(documentAdminProblems(document));
}

/**
 * The pages a browser renders, Swagger UI under /docs and the console under /console: helmet's
 * defaults, whose CSP (scripts from 'self', inline styles) suits both. No upgrade-insecure-requests:
 * behind a TLS-terminating load balancer or on a private network the service is reached over plain
 * HTTP, and /docs must still load.
 */
const PAGE_HEADERS: HelmetOptions = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/**
 * Every other answer is JSON for a program: the headers OWASP's REST Security Cheat Sheet asks of
 * an API, stricter than the pages' (nothing may load from or frame an answer), plus
 * Cross-Origin-Resource-Policy against reads from other sites' pages. helmet's other seven
 * (opener policy, origin-agent cluster, referrer policy, DNS prefetch, IE download options, Flash
 * and PDF policies, the XSS auditor switch) govern documents a browser displays and do nothing on
 * JSON; they were a third of each answer's headers (docs/performance.md, "Decisions the figures rest on").
 */
const API_HEADERS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

/** Paths of the pages a browser renders (their assets included); every other path answers JSON. */
const PAGE_PATH = /^\/(?:docs|console)(?:[/.?-]|$)/;

/** helmet's headers: the pages' set on the pages, the API's on everything else. */
function securityHeaders() {
  const pages = helmet(PAGE_HEADERS);
  const api = helmet(API_HEADERS);
  return (req: Request, res: Response, next: (error?: unknown) => void): void => (PAGE_PATH.test(req.url) ? pages : api)(req, res, next);
}

/** Express's "trust proxy" from TRUST_PROXY (validated in common/server.config.ts). */
export function trustProxy(value = 'false'): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** The AsyncAPI document of the change events (lint: `npm run docs:lint:events`). */
const ASYNCAPI_FILE = fileURLToPath(new URL('../assets/asyncapi.yaml', import.meta.url));

/**
 * GET (and HEAD) /locations/nearest: a 405 with `Allow: POST`, token or not (contract §1), as before
 * store pages, rather than the page of a store coded "nearest" (GET /locations/{code} would take it,
 * after the token check). Paths match as Express matches them: any case, a trailing slash allowed.
 */
function nearestIsPostOnly(req: Request, res: Response, next: () => void): void {
  if ((req.method === 'GET' || req.method === 'HEAD') && req.path.toLowerCase().replace(/\/$/, '') === '/locations/nearest') {
    res.setHeader('Allow', 'POST');
    res.status(405).json({ error: 405, message: `method ${req.method} is not allowed on ${req.path}` });
    return;
  }
  next();
}

/**
 * Everything the HTTP app needs beyond its modules; shared by main.ts and the e2e tests
 * so that the tests exercise the real pipeline. `requestLog` (main.ts) adds the per-request log
 * line, `metrics` (main.ts, when METRICS_PORT is set) the request-duration histogram.
 */
export function configureApp(app: NestExpressApplication, options: { docs: boolean; requestLog?: Logger; metrics?: boolean }): void {
  const server = app.get<ConfigType<typeof serverConfig>>(serverConfig.KEY);
  app.set('trust proxy', trustProxy(server.TRUST_PROXY));
  app.disable('x-powered-by');
  // Every response says Cache-Control: no-store (contract §1), so an ETag would never be used;
  // Express would otherwise hash every body to make one.
  app.set('etag', false);
  const durations = options.metrics ? app.get(Metrics).httpDuration : undefined;
  app.use(requestContext({ log: options.requestLog, durations }));
  app.use(securityHeaders());
  app.use(nearestIsPostOnly);
  const corsOrigins = server.CORS_ORIGINS;
  // CORS stays off (no Access-Control-* headers at all) unless origins are listed.
  if (corsOrigins)
    app.enableCors({
      origin: corsOrigins.split(',').map((o) => o.trim()),
      exposedHeaders: ['Location', 'Link', 'X-Request-Id', 'RateLimit-Policy', 'RateLimit', 'Retry-After', 'Customer-Position', 'ETag'],
      maxAge: 600,
    });
  app.use(jsonBody(server.BODY_LIMIT_BYTES, [`POST ${STORE_IMPORT_PATH}`]));
  if (options.docs) {
    SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
    // The change events, beside the OpenAPI document: an AsyncAPI 3 document, public like it.
    const events = readFileSync(ASYNCAPI_FILE);
    app.use('/docs/events.yaml', (req: Request, res: Response, next: () => void) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return next();
      res.type('application/yaml').send(events);
    });
  }
}
