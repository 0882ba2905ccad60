import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createToken, runCli } from './support/cli.js';
import { requestCounts, scrape, valueOf, type Sample } from './support/metrics.js';
import { freePort, startServer, type ServerProcess } from './support/server.js';
import { storesCsv } from './support/stores.js';
import { createTestDatabase, engine, type TestDatabase } from './support/test-app.js';

const TIMEOUT = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Scrapes until `done` holds (the metrics of a response are counted when its connection reports it closed), at most ~5 s. */
async function scrapeUntil(url: string, done: (samples: Sample[]) => boolean): Promise<Sample[]> {
  let samples = await scrape(url);
  for (let i = 0; i < 100 && !done(samples); i++) {
    await sleep(50);
    samples = await scrape(url);
  }
  return samples;
}

describe('Prometheus metrics (GET /metrics on METRICS_PORT)', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let token: string;
  let metricsUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    token = await createToken(database, 'acme');
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    server = await startServer(database, {
      METRICS_PORT: String(metricsPort),
      STORE_INDEX_REFRESH_MS: '250',
      TRUST_PROXY: '1',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '2',
    });
  }, TIMEOUT);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  }, TIMEOUT);

  it(
    "answers on METRICS_PORT without a token, in Prometheus text format with Node's own metrics, and never on the public port",
    async () => {
      const res = await fetch(metricsUrl);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      // The metric families the answer declares (`# TYPE name type`): the GC histogram has samples only after a collection.
      const families = new Set([...(await res.text()).matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]));
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_eventloop_lag_p99_seconds',
        'nodejs_gc_duration_seconds',
        'nodejs_heap_size_used_bytes',
        'http_server_request_duration_seconds',
        'plant_store_search_index_stores',
        'plant_store_token_cache_lookups_total',
      ]) {
        expect(families).toContain(name);
      }

      const metricsBase = metricsUrl.replace(/\/metrics$/, '');
      expect((await fetch(`${metricsBase}/`)).status).toBe(404);
      expect((await fetch(`${metricsBase}/plants`)).status).toBe(404);
      expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405);

      const publicAnonymous = await server.http.get('/metrics');
      expect(publicAnonymous.status).toBe(404);
      const publicWithToken = await server.http.get('/metrics').set('Authorization', `Bearer ${token}`);
      expect(publicWithToken.status).toBe(404);
      expect(publicWithToken.text).not.toContain('http_server_request_duration_seconds');
    },
    TIMEOUT,
  );

  it(
    'counts every request once in http_server_request_duration_seconds, by method, route template and status',
    async () => {
      const before = requestCounts(await scrape(metricsUrl));
      const cacheBefore = await scrape(metricsUrl);
      const auth = { Authorization: `Bearer ${token}` };
      const statuses: number[] = [];
      for (const id of [101, 102, 103])
        statuses.push(
          (
            await server.http
              .post('/plants')
              .set(auth)
              .send({ id, name: `Fern ${id}` })
          ).status,
        );
      statuses.push((await server.http.post('/plants').set(auth).send({ id: 101, name: 'again' })).status);
      statuses.push((await server.http.get('/plants?limit=2').set(auth)).status);
      statuses.push((await server.http.get('/plants').set(auth)).status);
      statuses.push((await server.http.delete('/plants/102').set(auth)).status);
      statuses.push((await server.http.delete('/plants/999').set(auth)).status);
      statuses.push((await server.http.delete('/plants/998').set(auth)).status);
      statuses.push((await server.http.get('/plants')).status);
      statuses.push((await server.http.get('/nowhere/123').set(auth)).status);
      statuses.push((await server.http.get('/nowhere/456')).status);
      statuses.push((await server.http.put('/plants/5').set(auth)).status);
      expect(statuses).toEqual([201, 201, 201, 409, 200, 200, 204, 404, 404, 401, 404, 404, 405]);
      const expected = new Map([
        ['POST /plants 201', 3],
        ['POST /plants 409', 1],
        ['GET /plants 200', 2],
        ['DELETE /plants/:id 204', 1],
        ['DELETE /plants/:id 404', 2],
        ['GET /plants 401', 1],
        ['GET unmatched 404', 2],
        // A 405 has the template of the path's route, not `unmatched`.
        ['PUT /plants/:id 405', 1],
      ]);
      const delta = (samples: Sample[]) => {
        const after = requestCounts(samples);
        return new Map([...after].map(([key, n]) => [key, n - (before.get(key) ?? 0)]).filter(([, n]) => n !== 0) as Array<[string, number]>);
      };
      const samples = await scrapeUntil(metricsUrl, (s) => [...delta(s).values()].reduce((a, b) => a + b, 0) >= 13);
      expect(Object.fromEntries(delta(samples))).toEqual(Object.fromEntries(expected));
      // Route templates only: a raw path would make a series per plant id.
      for (const s of samples.filter((x) => x.name.startsWith('http_server_request_duration_seconds'))) {
        expect(s.labels.http_route).toMatch(/^(unmatched|\/[a-z/:-]*)$/);
      }
      // The +Inf bucket counts every request too, and the sum is a duration.
      expect(
        valueOf(samples, 'http_server_request_duration_seconds_bucket', {
          http_request_method: 'POST',
          http_route: '/plants',
          http_response_status_code: '201',
          le: '+Inf',
        }),
      ).toBe(
        valueOf(samples, 'http_server_request_duration_seconds_count', {
          http_request_method: 'POST',
          http_route: '/plants',
          http_response_status_code: '201',
        }),
      );
      expect(
        valueOf(samples, 'http_server_request_duration_seconds_sum', { http_request_method: 'POST', http_route: '/plants', http_response_status_code: '201' }),
      ).toBeGreaterThan(0);

      // Nine requests to an endpoint carried a well-formed token (a path that is no endpoint is
      // answered before authentication): each was a cache hit, a miss or shared a miss's read, only one of them.
      const lookups = (s: Sample[]) =>
        (valueOf(s, 'plant_store_token_cache_lookups_total', { result: 'hit' }) ?? 0) +
        (valueOf(s, 'plant_store_token_cache_lookups_total', { result: 'miss' }) ?? 0) +
        (valueOf(s, 'plant_store_token_cache_lookups_total', { result: 'shared' }) ?? 0);
      expect(lookups(samples) - lookups(cacheBefore)).toBe(9);
      expect(valueOf(samples, 'plant_store_token_cache_lookups_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'plant_store_token_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
    },
    TIMEOUT,
  );

  it(
    'moves the plant_store_ gauges: stores in the search index and its age follow an import by the command line',
    async () => {
      const before = await scrape(metricsUrl);
      expect(valueOf(before, 'plant_store_search_index_stores')).toBe(0);
      expect(valueOf(before, 'plant_store_redis_fallback_active')).toBe(0);
      if (engine === 'mysql') {
        // mysql2's pool, read through the fields metrics.ts relies on: a rename shows here.
        expect(valueOf(before, 'plant_store_db_pool_connections_max')).toBe(10);
        expect(valueOf(before, 'plant_store_db_pool_connections_in_use')! + valueOf(before, 'plant_store_db_pool_connections_idle')!).toBeGreaterThanOrEqual(1);
        expect(valueOf(before, 'plant_store_db_pool_requests_waiting')).toBe(0);
      } else {
        // One synchronous SQLite connection: nothing pooled, nothing reported.
        expect(before.filter((s) => s.name.startsWith('plant_store_db_pool_'))).toEqual([]);
      }

      const file = join(mkdtempSync(join(tmpdir(), 'plant-store-metrics-')), 'stores.csv');
      writeFileSync(
        file,
        storesCsv([
          { code: 'M-1', name: 'One' },
          { code: 'M-2', name: 'Two' },
          { code: 'M-3', name: 'Three' },
        ]),
      );
      const importedAt = Date.now();
      const imported = await runCli(database, ['locations', 'import', file]);
      expect(imported.code).toBe(0);
      const after = await scrapeUntil(metricsUrl, (s) => valueOf(s, 'plant_store_search_index_stores') === 3);
      expect(valueOf(after, 'plant_store_search_index_stores')).toBe(3);
      // The index took the import's change: its age is younger than the import.
      expect(valueOf(after, 'plant_store_search_index_age_seconds')).toBeLessThanOrEqual((Date.now() - importedAt) / 1000);
    },
    TIMEOUT,
  );

  it(
    'counts rate-limit rejections by kind',
    async () => {
      const before = valueOf(await scrape(metricsUrl), 'plant_store_rate_limit_rejections_total', { kind: 'auth_failures' }) ?? 0;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push((await server.http.get('/plants').set({ Authorization: `Bearer pst_${'A'.repeat(49)}`, 'X-Forwarded-For': '203.0.113.9' })).status);
      }
      expect(statuses).toEqual([401, 401, 429]);
      const after = await scrapeUntil(metricsUrl, (s) => valueOf(s, 'plant_store_rate_limit_rejections_total', { kind: 'auth_failures' }) === before + 1);
      expect(valueOf(after, 'plant_store_rate_limit_rejections_total', { kind: 'auth_failures' })).toBe(before + 1);
      expect(
        valueOf(after, 'http_server_request_duration_seconds_count', { http_request_method: 'GET', http_route: '/plants', http_response_status_code: '429' }),
      ).toBe(1);
    },
    TIMEOUT,
  );
});

describe('METRICS_PORT at start-up', () => {
  let database: TestDatabase;
  let blocker: Server;

  beforeAll(async () => {
    database = await createTestDatabase();
  }, TIMEOUT);

  afterAll(async () => {
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
    await database?.drop();
  }, TIMEOUT);

  it(
    'stops start-up, naming METRICS_PORT, when the port is taken or invalid',
    async () => {
      const taken = await freePort();
      blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(taken, '127.0.0.1', resolve));
      await expect(startServer(database, { METRICS_PORT: String(taken) })).rejects.toThrow(
        `METRICS_PORT=${taken}: cannot listen on 127.0.0.1:${taken} (EADDRINUSE)`,
      );
      await expect(startServer(database, { METRICS_PORT: '65536' })).rejects.toThrow('METRICS_PORT=65536');
    },
    TIMEOUT,
  );

  it(
    'reports the in-memory fallback while Redis is unreachable',
    async () => {
      const metricsPort = await freePort();
      const server = await startServer(database, { METRICS_PORT: String(metricsPort), REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
      try {
        const samples = await scrapeUntil(`http://127.0.0.1:${metricsPort}/metrics`, (s) => valueOf(s, 'plant_store_redis_fallback_active') === 1);
        expect(valueOf(samples, 'plant_store_redis_fallback_active')).toBe(1);
      } finally {
        await server.stop();
      }
    },
    TIMEOUT,
  );

  if (engine === 'sqlite') {
    it(
      'counts the rows of an import run by the server (the demo seed of the embedded database)',
      async () => {
        const fresh = await createTestDatabase();
        const metricsPort = await freePort();
        const server = await startServer(fresh, { METRICS_PORT: String(metricsPort), DEMO_SEED: 'true' });
        try {
          const samples = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
          const stores = valueOf(samples, 'plant_store_search_index_stores')!;
          expect(stores).toBeGreaterThan(100);
          expect(valueOf(samples, 'plant_store_store_import_rows_total', { outcome: 'inserted' })).toBe(stores);
          expect(valueOf(samples, 'plant_store_store_import_rows_total', { outcome: 'updated' })).toBe(0);
        } finally {
          await server.stop();
          await fresh.drop();
        }
      },
      TIMEOUT,
    );
  }
});
