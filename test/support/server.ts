import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import { conformingAgent, openApiDocument } from './openapi.js';
import type { TestDatabase } from './test-app.js';

const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));
const INSTRUMENTATION = fileURLToPath(new URL('../../dist/instrumentation.js', import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  http: ReturnType<typeof request>;
  process: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux's /proc). */
export function listensOn(pid: number, port: number): boolean {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set(
    readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[1] === local && fields[3] === '0A')
      .map((fields) => `socket:[${fields[9]}]`),
  );
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * Another instance of the service as its own process, started as in the image
 * (`node --import ./dist/instrumentation.js dist/main.js`) on the same database: what several
 * containers behind a load balancer are. Passport's strategies are process-wide, so a second
 * instance must not live in the test's process. Metrics are off (METRICS_PORT=0) unless `env`
 * sets a port: instances run side by side. `readyWithinMs` only bounds the wait for a start that
 * hangs, so that the test fails showing the server's output: on two busy cores, with spec files
 * running side by side, a sound start can take tens of seconds (still below the tests' 60 s).
 */
export async function startServer(database: TestDatabase, env: Record<string, string> = {}, { readyWithinMs = 45_000 } = {}): Promise<ServerProcess> {
  // A port the caller picked for metrics is free now too, and listen(0) may hand it out again.
  let port = await freePort();
  while (String(port) === env.METRICS_PORT) port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DEMO_SEED: 'false',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DRAIN_MS: '0',
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: '0',
    ...database.env,
    ...env,
  };
  if (!database.env.DATABASE_URL) delete childEnv.DATABASE_URL;
  // Tracing only where a test asks for it, whatever the developer's shell exports.
  for (const key of Object.keys(childEnv)) if (key.startsWith('OTEL_') && !(key in env)) delete childEnv[key];
  const child = spawn(process.execPath, ['--import', INSTRUMENTATION, MAIN], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${url}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    // The answer must be this process's: a spare port is spare only until something listens on
    // it, and another test run's server can take it while this one fails to start.
    if (ready && listensOn(child.pid!, port)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    // Every response is checked against the service's OpenAPI document (test/support/openapi.ts).
    http: conformingAgent(request(url), openApiDocument()),
    process: child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
