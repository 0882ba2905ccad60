import { join } from 'node:path';
import { startServer } from './support/server.js';
import { createTestDatabase, engine } from './support/test-app.js';

/**
 * What a newcomer sees on the first `npm start` (issue 21): at the default log level, the URL,
 * the docs, the demo token with a curl line that uses it, and where the data lives, without
 * Nest's report of every module and route (that is debug level).
 */
describe('the first start, as printed', () => {
  if (engine !== 'sqlite') {
    it('is the embedded default only (the demo seed never runs on MySQL)', () => {
      expect(engine).toBe('mysql');
    });
    return;
  }

  it('shows the URL, /docs, the demo token with a curl line and the data file, and no framework wiring', async () => {
    const database = await createTestDatabase();
    const server = await startServer(database, { DEMO_SEED: 'true', LOG_LEVEL: 'log', NODE_ENV: 'production' });
    try {
      // The log is written in batches (up to a second after the line): wait for the last line of the start.
      for (let i = 0; i < 100 && !server.output().includes('embedded SQLite database'); i++) await new Promise((r) => setTimeout(r, 50));
      const messages = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { context?: string; msg?: string });
      const text = messages.map((m) => m.msg ?? '').join('\n');
      const port = new URL(server.url).port;
      const token = /pst_[0-9A-Za-z]{49}/.exec(text)?.[0];
      expect(token).toBeDefined();
      expect(text).toContain(`curl -H "Authorization: Bearer ${token}" http://localhost:${port}/plants`);
      expect(text).toContain(`listening on http://127.0.0.1:${port}: http://localhost:${port}`);
      expect(text).toContain(`API docs (Swagger UI): http://localhost:${port}/docs`);
      expect(text).toContain(`data: embedded SQLite database ${join(database.env.DATA_DIR, 'plant-store.sqlite')}`);
      expect(messages.filter((m) => ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'].includes(m.context ?? ''))).toEqual([]);
      // At a glance: the start fits on one screen.
      expect(messages.length).toBeLessThanOrEqual(10);
    } finally {
      await server.stop();
      await database.drop();
    }
  });
});
