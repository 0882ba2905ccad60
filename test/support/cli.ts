import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './test-app.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const CLI_HANG_MS = 300_000;

/** Runs the built command line (`node dist/cli.js …`) against a test database. */
export function runCli(database: TestDatabase, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test', DEMO_SEED: 'false', ...database.env, ...extraEnv };
  if (!database.env.DATABASE_URL) delete env.DATABASE_URL;
  return new Promise((resolve) => {
    // Only a bound on a hang, the test's own timeout being the usual limit: under a parallel test
    // run five processes starting on one database took the command line past 30 s.
    execFile(process.execPath, [CLI, ...args], { env, timeout: CLI_HANG_MS }, (error, stdout, stderr) => {
      const killed = error?.killed ? `\n[runCli: killed after ${CLI_HANG_MS} ms]` : '';
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr: stderr + killed });
    });
  });
}

/** A new token of `team`, made by the command line as an operator would. */
export async function createToken(database: TestDatabase, team: string): Promise<string> {
  const created = await runCli(database, ['tokens', 'create', '--team', team]);
  expect(created.code).toBe(0);
  return created.stdout.trim();
}
