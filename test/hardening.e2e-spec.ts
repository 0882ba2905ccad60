import { bearer, createTestApp, type TestApp } from './support/test-app.js';

describe('HTTP hardening', () => {
  describe('defaults', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(() => t.close());

    it("sends an API's security headers on API answers and errors, and no document's", async () => {
      for (const res of [await t.http.get('/health/live'), await t.http.get('/plants'), await t.http.get('/nowhere'), await t.http.get('/docsx')]) {
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['x-frame-options']).toBe('DENY');
        expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
        expect(res.headers['content-security-policy']).toBe("default-src 'none';frame-ancestors 'none'");
        expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
        for (const header of ['x-powered-by', 'x-xss-protection', 'x-dns-prefetch-control', 'x-download-options', 'referrer-policy', 'origin-agent-cluster'])
          expect(res.headers[header]).toBeUndefined();
      }
    });

    it("sends helmet's page headers on the docs' pages and files", async () => {
      for (const path of ['/docs', '/docs/', '/docs/swagger-ui.css', '/docs-json', '/docs/events.yaml']) {
        const res = await t.http.get(path);
        expect(res.status).toBe(200);
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
        expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
        expect(res.headers['referrer-policy']).toBe('no-referrer');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
      }
    });

    it('keeps Swagger UI working under the CSP: its scripts are files of its own, not inline', async () => {
      const page = await t.http.get('/docs');
      expect(page.status).toBe(200);
      const csp = page.headers['content-security-policy'];
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('upgrade-insecure-requests');
      const scripts = [...page.text.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
      expect(scripts.length).toBeGreaterThan(0);
      for (const attributes of scripts) {
        const src = /src="\.\/docs\/([^"]+)"/.exec(attributes)?.[1];
        expect(src).toBeDefined();
        const file = await t.http.get(`/docs/${src}`);
        expect(file.status).toBe(200);
      }
    });

    it('answers no CORS headers when CORS_ORIGINS is unset', async () => {
      const res = await t.http.get('/health/live').set('Origin', 'https://shop.example.com');
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await t.http.options('/plants').set({ Origin: 'https://shop.example.com', 'Access-Control-Request-Method': 'POST' });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('refuses a body over 16 KiB by default', async () => {
      const token = await t.tokenFor('acme');
      const res = await t.http
        .post('/plants')
        .set(bearer(token))
        .send({ name: 'x'.repeat(16_400) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: 413, message: 'request body exceeds the limit of 16384 bytes' });
    });
  });

  describe('configured', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: { CORS_ORIGINS: 'https://shop.example.com, http://localhost:8080', BODY_LIMIT_BYTES: '100' } });
    });
    afterAll(() => t.close());

    it('allows exactly the listed origins (CORS_ORIGINS)', async () => {
      const allowed = await t.http.get('/health/live').set('Origin', 'http://localhost:8080');
      expect(allowed.headers['access-control-allow-origin']).toBe('http://localhost:8080');
      expect(allowed.headers['access-control-expose-headers']?.split(',')).toEqual(
        expect.arrayContaining(['Location', 'Link', 'X-Request-Id', 'RateLimit-Policy', 'RateLimit', 'Retry-After']),
      );

      const preflight = await t.http.options('/plants').set({
        Origin: 'https://shop.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,idempotency-key',
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('https://shop.example.com');
      expect(preflight.headers['access-control-allow-headers']).toContain('authorization');
      expect(preflight.headers['access-control-allow-headers']).toContain('idempotency-key');

      const other = await t.http.get('/health/live').set('Origin', 'https://evil.example.com');
      expect(other.status).toBe(200);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('applies BODY_LIMIT_BYTES, and writes nothing', async () => {
      const token = await t.tokenFor('acme');
      const small = await t.http.post('/plants').set(bearer(token)).send({ name: 'Fern' });
      expect(small.status).toBe(201);
      const large = await t.http
        .post('/plants')
        .set(bearer(token))
        .send({ name: 'x'.repeat(120) });
      expect(large.status).toBe(413);
      expect(large.body).toEqual({ error: 413, message: 'request body exceeds the limit of 100 bytes' });
      const rows: { name: string }[] = await t.dataSource.query('SELECT name FROM plants');
      expect(rows.map((r) => r.name)).toEqual(['Fern']);
    });
  });
});
