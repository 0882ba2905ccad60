import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestNats } from './support/nats.js';
import { queryDatabase } from './support/schema.js';
import { startServer, type ServerProcess } from './support/server.js';
import { createTestDatabase, engine, type TestDatabase } from './support/test-app.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One ```sh block of the README, with the line its fence opens on. */
interface ShellBlock {
  line: number;
  code: string;
}

function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  let open: ShellBlock | undefined;
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (!fenced && /^```/.test(text)) {
      fenced = true;
      if (/^```(sh|bash|shell)\s*$/.test(text)) open = { line: i + 1, code: '' };
    } else if (fenced && /^```\s*$/.test(text)) {
      fenced = false;
      if (open) blocks.push(open);
      open = undefined;
    } else if (open) {
      open.code += `${text}\n`;
    }
  });
  return blocks;
}

/**
 * The blocks that are not run, and why: each rule names what it skips, and the spec checks that
 * exactly the blocks expected are skipped (no block is left out silently).
 */
const SKIP_RULES: { rule: string; matches: (code: string) => boolean }[] = [
  {
    // The test has started a fresh service itself, and is itself part of `npm test`.
    rule: 'a block that starts the service (`npm start`) or runs the tests (`npm test`): the quick start',
    matches: (code) => /^\s*(npm install && )?npm (start|test)\b/m.test(code),
  },
];

/**
 * How a block is run, as written but for two substitutions: the service's port
 * (`localhost:3000` → `localhost:<spare port>`) and the NATS server (`nats://127.0.0.1:4222` →
 * the test's own). All blocks run in order in one bash (`set -euo pipefail`), so that a variable
 * set in one block (`TOKEN`, `AUTH`, `ADMIN`, `ID`) is there in the next, as in a reader's shell;
 * in a scratch directory whose entries link to the repository's (so `npm run cli` works and a
 * `stores.csv` the README writes lands there), with `DATA_DIR` set to the service's (the command
 * line acts on the service's database, as it does beside `npm start`). `curl` fails on an HTTP
 * error (`--fail-with-body`): a README request that answers 4xx/5xx fails its block.
 */
function script(blocks: ShellBlock[], port: number, natsUrl: string): string {
  const lines = ['set -euo pipefail', 'curl() { command curl --fail-with-body "$@"; }', 'trap \'echo "@@failed: line $LINENO: $BASH_COMMAND" >&2\' ERR'];
  blocks.forEach((block, i) => {
    lines.push(`echo "@@block ${i} README.md:${block.line}" >&2`, `printf '\\n@@block ${i}\\n'`);
    lines.push(block.code.replaceAll('localhost:3000', `localhost:${port}`).replaceAll('nats://127.0.0.1:4222', natsUrl));
  });
  lines.push('echo "@@done" >&2');
  return lines.join('\n');
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Each block's stdout, by index in the list run. */
  outputs: string[];
}

function runBlocks(source: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', source], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => {
      // stdout is "\n@@block <i>\n<its output>" per block (a newline first: an answer may end without one): [before, i, output, i, output, …].
      const parts = stdout.split(/^@@block (\d+)\n/m);
      const outputs: string[] = [];
      for (let i = 1; i + 1 < parts.length; i += 2) outputs[Number(parts[i])] = parts[i + 1];
      if (parts.length % 2 === 0) outputs[Number(parts[parts.length - 1])] = '';
      resolve({ code, stdout, stderr, outputs });
    });
  });
}

/** A scratch working directory that looks like the repository (each top-level entry linked). */
function scratchCheckout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-readme-'));
  for (const entry of readdirSync(ROOT)) {
    if (['.git', 'data', 'artifacts', 'stores.csv', '.env'].includes(entry)) continue;
    symlinkSync(join(ROOT, entry), join(dir, entry));
  }
  return dir;
}

function blockEnv(database: TestDatabase): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...database.env, NODE_ENV: 'test' };
  for (const key of Object.keys(env)) if (key.startsWith('EVENTS_') || key.startsWith('OTEL_') || key === 'DATABASE_URL' || key === 'PORT') delete env[key];
  return env;
}

/**
 * Every shell block of the README runs as written, in order, against a fresh service on
 * the embedded default (a new DATA_DIR, the demo seed, spare ports) with change events on to a
 * nats-server of the test's own. Fails naming the block's line in README.md.
 */
describe('the README, block by block', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = shellBlocks(readme);
  const skipped = blocks.filter((b) => SKIP_RULES.some((r) => r.matches(b.code)));
  const run = blocks.filter((b) => !skipped.includes(b));

  it('skips only the blocks a listed rule names: the quick start (npm install && npm start, npm test)', () => {
    expect(skipped.map((b) => b.code.trim().split('\n')[0])).toEqual(['npm install && npm start']);
    // The first request, tokens, the store list and change events at least.
    expect(run.length).toBeGreaterThanOrEqual(4);
  });

  if (engine !== 'sqlite') {
    it('runs on the embedded default only (the README starts there)', () => {
      expect(engine).toBe('mysql');
    });
    return;
  }

  let database: TestDatabase;
  let nats: TestNats;
  let server: ServerProcess;
  let cwd: string;
  beforeAll(async () => {
    database = await createTestDatabase();
    nats = await TestNats.create();
    server = await startServer(database, { DEMO_SEED: 'true', EVENTS_NATS_URL: nats.url, EVENTS_RELAY_INTERVAL_MS: '200' });
    cwd = scratchCheckout();
  });
  afterAll(async () => {
    await server?.stop();
    await nats?.close();
    await database?.drop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it(`runs every other block as written, in order (README.md lines ${run.map((b) => b.line).join(', ')})`, async () => {
    const port = Number(new URL(server.url).port);
    const result = await runBlocks(script(run, port, nats.url), cwd, blockEnv(database));
    const failed = [...result.stderr.matchAll(/^@@block (\d+) README\.md:(\d+)$/gm)].pop();
    if (result.code !== 0) {
      throw new Error(
        `README.md block at line ${failed?.[2]} failed (exit ${result.code}):\n--- stdout\n${result.stdout.slice(-4000)}\n--- stderr\n${result.stderr.slice(-4000)}`,
      );
    }
    expect(result.stderr).toContain('@@done');

    const outputOf = (pattern: RegExp) => {
      const index = run.findIndex((b) => pattern.test(b.code));
      expect(index).toBeGreaterThanOrEqual(0);
      return result.outputs[index];
    };
    // A first request: the search answers with the store the README shows first.
    const firstShown = /"name": "([^"]+)"/.exec(readme.slice(readme.indexOf('```json')))?.[1];
    expect(outputOf(/locations\/nearest/)).toContain(`"name":"${firstShown}"`);
    // The store list: the header the README shows is the export's.
    const header = /^# (code,name,.*)$/m.exec(readme)?.[1];
    expect(outputOf(/admin\/stores\.csv -H/).split('\n')).toContain(header);
    // The store example replaced a demo store and deleted it: one store fewer than the demo's 391, no duplicate.
    const demoStores = readFileSync(join(ROOT, 'assets/demo-stores.csv'), 'utf8').trim().split('\n').length - 1;
    await expect(queryDatabase(database.env, ['SELECT COUNT(*) AS n FROM stores'])).resolves.toEqual([[{ n: demoStores - 1 }]]);
    // Change events: the plant the block creates reaches the fresh consumer.
    expect(outputOf(/events:next/)).toContain('Calathea');
  }, 180_000);

  it('fails, naming the block, when a block is broken (a request that answers 404)', async () => {
    const port = Number(new URL(server.url).port);
    const broken = [
      { line: 1, code: 'echo fine\n' },
      { line: 7, code: 'curl -s http://localhost:3000/no-such-route\necho "not reached"\n' },
    ];
    const result = await runBlocks(script(broken, port, nats.url), cwd, blockEnv(database));
    expect(result.code).not.toBe(0);
    expect([...result.stderr.matchAll(/^@@block (\d+) README\.md:(\d+)$/gm)].pop()?.[2]).toBe('7');
    expect(result.stdout).not.toContain('not reached');
  });
});
