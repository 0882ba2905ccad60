import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToken } from './support/cli.js';
import { freePort, startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, type TestDatabase } from './support/test-app.js';

const TIMEOUT = 120_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

/**
 * A real Prometheus (the Debian package's binary, installed by .ci/run) scraping a running
 * instance every second, asked over its HTTP API what an operator's dashboard would ask.
 */
describe('a real Prometheus scraping the service', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let prometheus: ChildProcess;
  let prometheusOutput = '';
  let dir: string;
  let api: string;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    token = await createToken(database, 'acme');
    const metricsPort = await freePort();
    server = await startServer(database, { METRICS_PORT: String(metricsPort) });

    dir = mkdtempSync(join(tmpdir(), 'plant-store-prometheus-'));
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: plant-store',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${metricsPort}']`,
        '',
      ].join('\n'),
    );
    const port = await freePort();
    api = `http://127.0.0.1:${port}/api/v1`;
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (chunk) => (prometheusOutput += chunk));
    prometheus.stderr!.on('data', (chunk) => (prometheusOutput += chunk));
    for (let i = 0; ; i++) {
      if (prometheus.exitCode !== null) throw new Error(`prometheus exited with ${prometheus.exitCode}:\n${prometheusOutput}`);
      if (
        await fetch(`http://127.0.0.1:${port}/-/ready`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 300) throw new Error(`prometheus not ready:\n${prometheusOutput}`);
      await sleep(100);
    }
  }, TIMEOUT);

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await server?.stop();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, TIMEOUT);

  async function query(promql: string): Promise<VectorResult[]> {
    const res = await fetch(`${api}/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; data: { resultType: string; result: VectorResult[] } };
    expect(body.status).toBe('success');
    expect(body.data.resultType).toBe('vector');
    return body.data.result;
  }

  it(
    'scrapes the instance and answers the request rate by route',
    async () => {
      const auth = { Authorization: `Bearer ${token}` };
      // Requests spread over several scrapes, so that rate() has samples to work with; they go on
      // until Prometheus answers a rate above zero for both routes. Under CI's load a scrape can be
      // late or fail, and a rate needs two samples with requests between them: waiting for the series
      // alone once found both samples taken after the requests, and a rate of 0.
      let plants = 0;
      let deletes = 0;
      const promql = 'sum by (http_route) (rate(http_server_request_duration_seconds_count[1m]))';
      let rates: VectorResult[] = [];
      const positive = (route: string) => rates.some((r) => r.metric.http_route === route && Number(r.value[1]) > 0);
      for (const until = Date.now() + 60_000; Date.now() < until;) {
        for (let i = 0; i < 10; i++) {
          expect((await server.http.get('/plants?limit=5').set(auth)).status).toBe(200);
          plants++;
          expect((await server.http.delete('/plants/4242').set(auth)).status).toBe(404);
          deletes++;
          await sleep(100);
        }
        rates = await query(promql);
        if (positive('/plants') && positive('/plants/:id')) break;
      }
      expect(plants).toBeGreaterThan(0);
      const byRoute = Object.fromEntries(rates.map((r) => [r.metric.http_route, Number(r.value[1])]));
      expect(byRoute['/plants']).toBeGreaterThan(0);
      expect(byRoute['/plants/:id']).toBeGreaterThan(0);
      // Every series is a route template (or the one value of unmatched requests), never a raw path.
      for (const route of Object.keys(byRoute)) expect(['/plants', '/plants/:id', '/health/ready', 'unmatched']).toContain(route);

      // The target is up, and the counters Prometheus holds are the instance's.
      const up = await query('up{job="plant-store"}');
      expect(up.map((r) => r.value[1])).toEqual(['1']);
      const counted = await query('sum(http_server_request_duration_seconds_count{http_route="/plants/:id", http_response_status_code="404"})');
      expect(Number(counted[0].value[1])).toBeLessThanOrEqual(deletes);
      expect(Number(counted[0].value[1])).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
