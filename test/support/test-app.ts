import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsoleLogger, type LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import mysql from 'mysql2/promise';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { TokensService } from '../../src/tokens/tokens.service.js';
import { conformingAgent, openApiDocument } from './openapi.js';

declare const E2E_ENGINE: 'sqlite' | 'mysql';
export const engine: 'sqlite' | 'mysql' = E2E_ENGINE;

/** A fresh, empty database of the engine under test, and the environment that selects it. */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-e2e-'));
    return { env: { DATA_DIR: dir }, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  const base = new URL(process.env.TEST_DATABASE_URL as string);
  const name = `${base.pathname.slice(1)}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const connection = await mysql.createConnection({
      host: base.hostname,
      port: Number(base.port || 3306),
      user: decodeURIComponent(base.username),
      password: decodeURIComponent(base.password),
    });
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };
  await admin(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, drop: () => admin(`DROP DATABASE IF EXISTS \`${name}\``) };
}

const MANAGED_ENV = [
  'ADMIN_TOKEN_FILE',
  'EVENTS_NATS_URL',
  'EVENTS_STREAM',
  'EVENTS_OUTBOX_MAX_ROWS',
  'EVENTS_RELAY_INTERVAL_MS',
  'DATABASE_URL',
  'DATA_DIR',
  'DB_POOL_SIZE',
  'DEMO_SEED',
  'DOCS_ENABLED',
  'CONSOLE_ENABLED',
  'MIGRATIONS_RUN',
  'LOG_LEVEL',
  'NODE_ENV',
  'CORS_ORIGINS',
  'BODY_LIMIT_BYTES',
  'TRUST_PROXY',
];

export interface TestApp {
  app: NestExpressApplication;
  http: ReturnType<typeof request>;
  dataSource: DataSource;
  database: TestDatabase;
  /** Issues a token through the real service, the way the CLI does. */
  tokenFor(team: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real AppModule and the real HTTP pipeline (configureApp), on a fresh database of
 * the engine under test. `database` may be passed to start a second instance on it.
 */
export async function createTestApp(options: { env?: Record<string, string>; database?: TestDatabase; logger?: LoggerService | false } = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  for (const key of MANAGED_ENV) delete process.env[key];
  Object.assign(process.env, { NODE_ENV: 'test', DEMO_SEED: 'false', ...database.env, ...options.env });
  const moduleRef = await Test.createTestingModule({ imports: [AppModule.forRoot()] }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: options.logger ?? ['fatal', 'error'] });
  try {
    configureApp(app, { docs: process.env.DOCS_ENABLED !== 'false' });
    await app.init();
  } catch (error) {
    // A start-up that fails (a test of a bad setting) closes what it opened: the database
    // connection, and the data source name @nestjs/typeorm registers for the process, or the
    // next app of the file would be told that name is taken.
    await app.close().catch(() => undefined);
    if (!options.database) await database.drop();
    throw error;
  }
  const dataSource = app.get<DataSource>(getDataSourceToken());
  return {
    app,
    // Every response is checked against the service's OpenAPI document (test/support/openapi.ts).
    http: conformingAgent(request(app.getHttpServer()), openApiDocument()),
    dataSource,
    database,
    tokenFor: async (team) => (await app.get(TokensService).create({ team })).token,
    close: async () => {
      await app.close();
      if (!options.database) await database.drop();
    },
  };
}

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The port of the app's HTTP server, started on a free one if it is not listening yet (supertest starts it per request). */
export async function listeningPort(app: NestExpressApplication): Promise<number> {
  const server = app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * A request written in `chunks` with node:http, for what supertest cannot send: without a
 * Content-Length header in `headers` the body goes chunked. Resolves with the status and the body as text.
 */
export async function sendChunks(
  app: NestExpressApplication,
  { method, path, headers, chunks }: { method: string; path: string; headers: Record<string, string>; chunks: (string | Buffer)[] },
): Promise<{ status?: number; body: string }> {
  const port = await listeningPort(app);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, host: '127.0.0.1', method, path, headers });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/**
 * An app's error lines kept for the test to read rather than printed: for a test that causes a 5xx
 * on purpose (the exception filter logs each at error level). Otherwise the tests' default logger
 * (fatal and error only).
 */
export class ErrorCapture extends ConsoleLogger {
  readonly errors: string[] = [];
  constructor() {
    super('', { logLevels: ['fatal', 'error'] });
  }
  error(message: unknown) {
    this.errors.push(String(message));
  }
}
