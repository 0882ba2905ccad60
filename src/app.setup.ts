import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ErrorBody } from './common/error-body.js';
import { jsonBody } from './common/json-body.js';
import { requestContext } from './common/request-context.middleware.js';

export function buildOpenApiDocument(app: NestExpressApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Plant Store Service')
    .setDescription(
      'Store locations near a customer\'s US address, and a per-team plant catalogue. Every operation needs `Authorization: Bearer <token>`; every error body is `{"error": <status>, "message": <sentence>}`.',
    )
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque (pst_…)', description: 'An opaque token `pst_…` issued by `npm run cli -- tokens create`, or (when the service is configured for single sign-on) a JWT access token of the OIDC issuer.' })
    .build();
  return SwaggerModule.createDocument(app, config, { extraModels: [ErrorBody] });
}

/** Express's "trust proxy" from TRUST_PROXY (validated in environment.ts). */
export function trustProxy(value = 'false'): boolean | number | string {
  if (value === 'true' || value === 'false') return value === 'true';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * Everything the HTTP app needs beyond its modules; shared by main.ts and the e2e tests
 * so that the tests exercise the real pipeline.
 */
export function configureApp(app: NestExpressApplication, options: { docs: boolean }): void {
  app.set('trust proxy', trustProxy(process.env.TRUST_PROXY));
  app.disable('x-powered-by');
  app.use(requestContext);
  app.use(jsonBody);
  if (options.docs) {
    SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
  }
}
