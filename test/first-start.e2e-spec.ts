import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestNats } from './support/nats.js';
import { freePort, startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, engine, type TestDatabase } from './support/test-app.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const INSTRUMENTATION = fileURLToPath(new URL('../dist/instrumentation.js', import.meta.url));
const FRAMEWORK_WIRING = ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'];
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** The log is written in batches (up to a second after the line): wait for the last line of the start. */
async function startOutput(server: ServerProcess): Promise<string> {
  for (let i = 0; i < 100 && !server.output().includes('change events: '); i++) await new Promise((r) => setTimeout(r, 50));
  return server.output();
}

/**
 * What a newcomer sees on the first `npm start`: at the default log level, the
 * URL, the docs, the demo token with a curl line that uses it, where the data lives and where the
 * change events go, without Nest's report of every module and route (that is debug level). JSON
 * lines when stdout is not a terminal; human-readable lines on a terminal (LOG_FORMAT=auto) or
 * with LOG_FORMAT=pretty, where the curl line pastes as printed.
 */
describe('the first start, as printed', () => {
  if (engine !== 'sqlite') {
    it('is the embedded default only (the demo seed never runs on MySQL)', () => {
      expect(engine).toBe('mysql');
    });
    return;
  }

  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await database.drop();
  });

  it('in JSON (stdout not a terminal): the URL, /docs, the demo token with a curl line, the data file, change events off, and no framework wiring', async () => {
    const server = await startServer(database, { DEMO_SEED: 'true', LOG_LEVEL: 'log', NODE_ENV: 'production' });
    try {
      const lines = (await startOutput(server)).split('\n').filter((line) => line.trim() !== '');
      // Every line is JSON: LOG_FORMAT=auto writes JSON to a pipe.
      for (const line of lines) expect(line.startsWith('{')).toBe(true);
      const messages = lines.map((line) => JSON.parse(line) as { context?: string; msg?: string });
      const text = messages.map((m) => m.msg ?? '').join('\n');
      const port = new URL(server.url).port;
      const token = /pst_[0-9A-Za-z]{49}/.exec(text)?.[0];
      expect(token).toBeDefined();
      expect(text).toContain(`curl -H "Authorization: Bearer ${token}" http://localhost:${port}/plants`);
      expect(text).toContain(`listening on http://127.0.0.1:${port}: http://localhost:${port}`);
      expect(text).toContain(`API docs (Swagger UI): http://localhost:${port}/docs, operator's console: http://localhost:${port}/console`);
      expect(text).toContain(`data: embedded SQLite database ${join(database.env.DATA_DIR, 'plant-store.sqlite')}`);
      expect(text).toContain('change events: off (EVENTS_NATS_URL not set)');
      expect(text).toContain("geocoder: off (GEOCODER not set), searches measure from the ZIP code's point");
      expect(text).toContain('router: off (ROUTER not set), travel_mode answers in straight-line order');
      expect(messages.filter((m) => FRAMEWORK_WIRING.includes(m.context ?? ''))).toEqual([]);
      // At a glance: the start fits on one screen.
      expect(messages.length).toBeLessThanOrEqual(10);
    } finally {
      await server.stop();
    }
  });

  it('on a terminal (LOG_FORMAT=auto): one human-readable line each, the curl line as it pastes, no JSON', async () => {
    // `script` (util-linux) gives the service a terminal for stdout, as `npm start` in a shell has.
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'production',
      DEMO_SEED: 'true',
      LOG_LEVEL: 'log',
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: '0',
      SHUTDOWN_DRAIN_MS: '0',
      ...database.env,
    };
    delete env.DATABASE_URL;
    delete env.LOG_FORMAT;
    const child = spawn('script', ['-qec', `'${process.execPath}' --import '${INSTRUMENTATION}' '${MAIN}'`, '/dev/null'], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for (let i = 0; i < 400 && !output.includes('change events: '); i++) await new Promise((r) => setTimeout(r, 50));
      const screen = output.replace(ANSI, '').replace(/\r/g, '');
      const lines = screen.split('\n').filter((line) => line.trim() !== '');
      expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
      const token = /pst_[0-9A-Za-z]{49}/.exec(screen)?.[0];
      expect(token).toBeDefined();
      // Printed as typed: no \" escapes, so a copy of the line from `curl` on runs as is.
      expect(screen).toContain(`Try: curl -H "Authorization: Bearer ${token}" http://localhost:${port}/plants\n`);
      expect(screen).not.toContain('\\"');
      expect(screen).toMatch(new RegExp(`\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: Main: listening on http://127.0.0.1:${port}: http://localhost:${port}\\n`));
      expect(screen).toContain('INFO: Main: change events: off (EVENTS_NATS_URL not set)');
      expect(lines.length).toBeLessThanOrEqual(10);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('with LOG_FORMAT=pretty and EVENTS_NATS_URL: human-readable lines to a pipe too, naming the broker and the stream (never its password)', async () => {
    const nats = await TestNats.create();
    const url = new URL(nats.url);
    const server = await startServer(database, {
      DEMO_SEED: 'true',
      LOG_LEVEL: 'log',
      NODE_ENV: 'production',
      LOG_FORMAT: 'pretty',
      EVENTS_NATS_URL: nats.url,
      EVENTS_STREAM: 'FIRSTSTART',
    });
    const withPassword = await startServer(database, {
      LOG_LEVEL: 'log',
      LOG_FORMAT: 'pretty',
      EVENTS_NATS_URL: `nats://user:s3cret@${url.host}`,
      EVENTS_STREAM: 'FIRSTSTART',
    }).catch((error: Error) => error);
    try {
      const screen = await startOutput(server);
      expect(screen.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
      expect(screen).toMatch(/Try: curl -H "Authorization: Bearer pst_[0-9A-Za-z]{49}" http:\/\/localhost:\d+\/plants\n/);
      expect(screen).toContain(`INFO: Main: change events: publishing to ${nats.url} stream FIRSTSTART`);
      // The broker refuses the credentials it does not know, or accepts them: either way the start line hides the password.
      const other = withPassword instanceof Error ? withPassword.message : await startOutput(withPassword);
      expect(other).not.toContain('s3cret');
      if (!(withPassword instanceof Error)) expect(other).toContain(`change events: publishing to nats://user:***@${url.host} stream FIRSTSTART`);
    } finally {
      await server.stop();
      if (!(withPassword instanceof Error)) await withPassword.stop();
      await nats.close();
    }
  });
});
