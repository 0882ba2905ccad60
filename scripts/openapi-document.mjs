// The OpenAPI document the built service publishes at /docs-json, made without starting a
// server: Nest's preview mode scans the modules without creating providers, so no database
// is opened. Shared by client:generate and docs:lint (both build first).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../dist/app.module.js';
import { buildOpenApiDocument } from '../dist/app.setup.js';

export async function openApiDocument() {
  const app = await NestFactory.create(AppModule.forRoot(), { preview: true, logger: false, bodyParser: false });
  try {
    // Through JSON, as /docs-json sends it (no undefined fields, no class instances).
    return JSON.parse(JSON.stringify(buildOpenApiDocument(app)));
  } finally {
    await app.close();
  }
}
