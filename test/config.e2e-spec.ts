import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

function run(file: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [dist(file), ...args], { env: { PATH: process.env.PATH, NODE_ENV: 'test', ...env }, timeout: 20_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('configuration', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT="abc": PORT must be an integer number'],
    [{ PORT: '70000' }, 'PORT=70000: PORT must not be greater than 65535'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE=0: DB_POOL_SIZE must not be less than 1'],
    [{ DATABASE_URL: 'postgres://u@h/db' }, 'DATABASE_URL="postgres://u@h/db": DATABASE_URL must look like mysql://'],
    [{ DATABASE_URL: 'mysql://u@h:3306/db?ssl=true' }, 'without ?options'],
    [{ DOCS_ENABLED: 'maybe' }, 'DOCS_ENABLED="maybe": DOCS_ENABLED must be a boolean value'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": LOG_LEVEL must be one of the following values'],
  ])('a bad value stops the server and the CLI, naming the variable: %j', async (env, message) => {
    const server = await run('main.js', env);
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(message);
    const cli = await run('cli.js', env, ['tokens', 'list']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(message);
  });
});
