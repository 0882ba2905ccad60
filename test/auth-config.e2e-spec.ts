import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

function start(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN], { env: { PATH: process.env.PATH, NODE_ENV: 'test', ...env }, timeout: 20_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('settings of tokens, limits and single sign-on', () => {
  it.each([
    [{ TOKEN_CACHE_SECONDS: '6' }, 'TOKEN_CACHE_SECONDS=6: TOKEN_CACHE_SECONDS must not be greater than 5'],
    [{ TOKEN_DEFAULT_TTL_DAYS: '-1' }, 'TOKEN_DEFAULT_TTL_DAYS=-1: TOKEN_DEFAULT_TTL_DAYS must not be less than 0'],
    [{ AUTH_FAILURE_LIMIT_PER_MINUTE: 'many' }, 'AUTH_FAILURE_LIMIT_PER_MINUTE="many": AUTH_FAILURE_LIMIT_PER_MINUTE must be an integer number'],
    [{ TRUST_PROXY: 'yes please' }, 'TRUST_PROXY must be true, false, a hop count or a comma list of addresses'],
    [{ REDIS_URL: '127.0.0.1:6379' }, 'REDIS_URL must look like redis://host:6379'],
    [{ OIDC_ISSUER: 'login.example.com' }, 'OIDC_ISSUER must be an http(s) URL'],
    [{ OIDC_ISSUER: 'https://login.example.com' }, 'OIDC_AUDIENCE must be set when OIDC_ISSUER is set'],
  ])('a bad value stops the server, naming the variable: %j', async (env, message) => {
    const server = await start(env);
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(message);
  });
});
