import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createToken } from './support/cli.js';
import { startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, engine, type TestDatabase } from './support/test-app.js';

const TIMEOUT = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const INSTRUMENTATION = fileURLToPath(new URL('../dist/instrumentation.js', import.meta.url));

/** A span as OTLP/JSON carries it (ids in hex). */
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}
const SPAN_KIND_SERVER = 2;
const attribute = (span: Span, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
};

/** An OTLP/HTTP receiver (JSON encoding), collecting every span exported to it. */
async function otlpReceiver(): Promise<{ url: string; spans: Span[]; close: () => Promise<void> }> {
  const spans: Span[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const payload = JSON.parse(body) as { resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: Span[] }> }> };
        for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, spans, close: () => new Promise((r) => server.close(() => r())) };
}

/** Whether a span started after dist/instrumentation.js ran in a fresh process with `env` is recorded (an SDK) or not (the API's no-op). */
async function spanAfterBootstrap(env: Record<string, string>): Promise<string> {
  const script = "import { trace } from '@opentelemetry/api'; console.log(trace.getTracer('probe').startSpan('probe').isRecording() ? 'recording' : 'no-op');";
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const key of Object.keys(childEnv)) if (key.startsWith('OTEL_') && !(key in env)) delete childEnv[key];
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', INSTRUMENTATION, '--input-type=module', '-e', script], {
    env: childEnv,
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  return stdout.trim();
}

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    token = await createToken(database, 'acme');
    receiver = await otlpReceiver();
    server = await startServer(database, {
      LOG_LEVEL: 'log',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_SERVICE_NAME: 'plant-store-e2e',
    });
  }, TIMEOUT);

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await database?.drop();
  }, TIMEOUT);

  async function spansOf(traceId: string, done: (spans: Span[]) => boolean): Promise<Span[]> {
    for (let i = 0; i < 100; i++) {
      const found = receiver.spans.filter((s) => s.traceId === traceId);
      if (done(found)) return found;
      await sleep(100);
    }
    return receiver.spans.filter((s) => s.traceId === traceId);
  }

  const logLines = () =>
    server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it(
    "continues the caller's traceparent with a server span named by the route, a child span per SQL query, and the ids in the request's log lines",
    async () => {
      const traceId = randomBytes(16).toString('hex');
      const callerSpanId = randomBytes(8).toString('hex');
      const res = await server.http
        .post('/plants')
        .set({ Authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${callerSpanId}-01`, 'X-Request-Id': 'traced-create-1' })
        .send({ id: 7, name: 'Fern' });
      expect(res.status).toBe(201);

      const isServer = (s: Span) => s.kind === SPAN_KIND_SERVER;
      const sql = (s: Span) => attribute(s, 'db.system') === 'mysql' || attribute(s, 'db.system.name') === 'mysql';
      const spans = await spansOf(traceId, (found) => found.some(isServer) && (engine !== 'mysql' || found.some(sql)));
      const serverSpans = spans.filter(isServer);
      expect(serverSpans).toHaveLength(1);
      const [request] = serverSpans;
      expect(request.name).toBe('POST /plants');
      expect(request.parentSpanId).toBe(callerSpanId);
      expect(attribute(request, 'http.route')).toBe('/plants');
      expect(Number(attribute(request, 'http.response.status_code') ?? attribute(request, 'http.status_code'))).toBe(201);
      if (engine === 'mysql') {
        // The token look-up and the INSERT, each a child of the request's span.
        const queries = spans.filter(sql);
        expect(queries.length).toBeGreaterThanOrEqual(2);
        for (const query of queries) expect(query.parentSpanId).toBe(request.spanId);
        expect(queries.some((q) => /INSERT/i.test(String(attribute(q, 'db.query.text') ?? attribute(q, 'db.statement'))))).toBe(true);
      }

      // The request's line and its audit line carry its reqId, trace id and server span id.
      let lines: Array<Record<string, unknown>> = [];
      for (let i = 0; i < 100; i++) {
        lines = logLines().filter((l) => l.reqId === 'traced-create-1');
        if (lines.length >= 2) break;
        await sleep(50);
      }
      expect(lines.map((l) => l.msg ?? l.event).sort()).toEqual(['plant.created', 'request completed']);
      for (const line of lines) expect(line).toMatchObject({ reqId: 'traced-create-1', traceId, spanId: request.spanId });
    },
    TIMEOUT,
  );

  it(
    'names a span by its route template, not by the path',
    async () => {
      const res = await server.http.delete('/plants/7').set({ Authorization: `Bearer ${token}`, 'X-Request-Id': 'traced-delete-1' });
      expect(res.status).toBe(204);
      let line: Record<string, unknown> | undefined;
      for (let i = 0; i < 100 && !line; i++) {
        line = logLines().find((l) => l.reqId === 'traced-delete-1' && l.msg === 'request completed');
        if (!line) await sleep(50);
      }
      expect(typeof line?.traceId).toBe('string');
      const spans = await spansOf(line!.traceId as string, (found) => found.some((s) => s.kind === SPAN_KIND_SERVER));
      const request = spans.find((s) => s.kind === SPAN_KIND_SERVER)!;
      expect(request.name).toBe('DELETE /plants/:id');
      // A new trace: no caller span.
      expect(request.parentSpanId ?? '').toBe('');
      expect(request.spanId).toBe(line!.spanId);
    },
    TIMEOUT,
  );

  it(
    'loads no SDK and exports nothing without OTEL_EXPORTER_OTLP_ENDPOINT',
    async () => {
      expect(await spanAfterBootstrap({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })).toBe('recording');
      expect(await spanAfterBootstrap({ OTEL_SERVICE_NAME: 'plant-store-e2e', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBe('no-op');

      const untraced = await startServer(database, { LOG_LEVEL: 'log', OTEL_SERVICE_NAME: 'plant-store-e2e', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
      try {
        const res = await untraced.http.get('/plants').set({
          Authorization: `Bearer ${token}`,
          traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`,
          'X-Request-Id': 'untraced-1',
        });
        expect(res.status).toBe(200);
        let line: Record<string, unknown> | undefined;
        for (let i = 0; i < 100 && !line; i++) {
          line = untraced
            .output()
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l.reqId === 'untraced-1');
          if (!line) await sleep(50);
        }
        expect(line).toMatchObject({ reqId: 'untraced-1', status: 200 });
        expect(line).not.toHaveProperty('traceId');
        expect(line).not.toHaveProperty('spanId');
      } finally {
        await untraced.stop();
      }
    },
    TIMEOUT,
  );
});
