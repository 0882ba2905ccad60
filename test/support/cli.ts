import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './test-app.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built command line (`node dist/cli.js …`) against a test database. */
export function runCli(database: TestDatabase, args: string[], extraEnv: Record<string, string> = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'test', DEMO_SEED: 'false', ...database.env, ...extraEnv };
  if (!database.env.DATABASE_URL) delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** A new token of `team`, made by the command line as an operator would. */
export async function createToken(database: TestDatabase, team: string): Promise<string> {
  const created = await runCli(database, ['tokens', 'create', '--team', team]);
  expect(created.code).toBe(0);
  return created.stdout.trim();
}
