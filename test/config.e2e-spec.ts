import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

/** Runs a built entry point to its exit; the timeout only stops one that hangs (a start on two busy cores can take seconds). */
function run(file: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [dist(file), ...args],
      { env: { PATH: process.env.PATH, NODE_ENV: 'test', PORT: '0', METRICS_PORT: '0', ...env }, timeout: 45_000 },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    );
  });
}

describe('configuration', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT="abc": PORT must be an integer number'],
    [{ PORT: '70000' }, 'PORT=70000: PORT must not be greater than 65535'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT=70000: METRICS_PORT must not be greater than 65535'],
    [{ METRICS_PORT: 'off' }, 'METRICS_PORT="off": METRICS_PORT must be an integer number'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE=0: DB_POOL_SIZE must not be less than 1'],
    [{ DATABASE_URL: 'postgres://u@h/db' }, 'DATABASE_URL="postgres://u@h/db": DATABASE_URL must look like mysql://'],
    [{ DATABASE_URL: 'mysql://u@h:3306/db?ssl=true' }, 'without ?options; TLS is set with DATABASE_TLS'],
    [{ DATABASE_URL: 'mysql://u:pw@db.example.com:3306/db', DATABASE_TLS: 'on' }, 'DATABASE_TLS="on": DATABASE_TLS must be off, verify-ca or verify-full'],
    [
      { DATABASE_URL: 'mysql://u:pw@db.example.com:3306/db', DATABASE_TLS: 'verify-full', DATABASE_TLS_CA_FILE: '/nonexistent/ca.pem' },
      'DATABASE_TLS_CA_FILE="/nonexistent/ca.pem": DATABASE_TLS_CA_FILE: cannot read the file (ENOENT',
    ],
    [
      { DATABASE_URL: 'mysql://u:pw@db.example.com:3306/db', DATABASE_TLS: 'verify-full', DATABASE_TLS_CERT_FILE: '/nonexistent/client.pem' },
      'DATABASE_TLS_KEY_FILE=undefined: DATABASE_TLS_KEY_FILE must be set when DATABASE_TLS_CERT_FILE is set',
    ],
    [{ DATABASE_URL_FILE: '/nonexistent/database-url' }, 'DATABASE_URL_FILE="/nonexistent/database-url": cannot read the file (ENOENT'],
    [{ DATABASE_URL: 'mysql://u:pw@h:3306/db', DATABASE_URL_FILE: '/dev/null' }, 'DATABASE_URL and DATABASE_URL_FILE are both set; set one of them'],
    [{ DOCS_ENABLED: 'maybe' }, 'DOCS_ENABLED="maybe": DOCS_ENABLED must be a boolean value'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": LOG_LEVEL must be one of the following values'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY="yes": TRUST_PROXY must be true, false, a hop count or a comma list of addresses'],
    [{ CORS_ORIGINS: 'shop.example.com' }, 'CORS_ORIGINS="shop.example.com": CORS_ORIGINS must be a comma list of origins'],
    [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS="*": CORS_ORIGINS must be a comma list of origins'],
    [{ BODY_LIMIT_BYTES: '16kb' }, 'BODY_LIMIT_BYTES="16kb": BODY_LIMIT_BYTES must be an integer number'],
    [{ BODY_LIMIT_BYTES: '1' }, 'BODY_LIMIT_BYTES=1: BODY_LIMIT_BYTES must not be less than 2'],
    [{ SHUTDOWN_DRAIN_MS: '-1' }, 'SHUTDOWN_DRAIN_MS=-1: SHUTDOWN_DRAIN_MS must not be less than 0'],
    [{ SHUTDOWN_GRACE_MS: '10s' }, 'SHUTDOWN_GRACE_MS="10s": SHUTDOWN_GRACE_MS must be an integer number'],
    [{ DB_CONNECT_TIMEOUT_MS: '50' }, 'DB_CONNECT_TIMEOUT_MS=50: DB_CONNECT_TIMEOUT_MS must not be less than 100'],
    [{ DB_QUERY_TIMEOUT_MS: '1.5' }, 'DB_QUERY_TIMEOUT_MS="1.5": DB_QUERY_TIMEOUT_MS must be an integer number'],
    [{ DB_STARTUP_TIMEOUT_MS: 'forever' }, 'DB_STARTUP_TIMEOUT_MS="forever": DB_STARTUP_TIMEOUT_MS must be an integer number'],
    [{ TOKEN_CACHE_SECONDS: '6' }, 'TOKEN_CACHE_SECONDS=6: TOKEN_CACHE_SECONDS must not be greater than 5'],
    [{ TOKEN_DEFAULT_TTL_DAYS: '-1' }, 'TOKEN_DEFAULT_TTL_DAYS=-1: TOKEN_DEFAULT_TTL_DAYS must not be less than 0'],
    [{ AUTH_FAILURE_LIMIT_PER_MINUTE: 'many' }, 'AUTH_FAILURE_LIMIT_PER_MINUTE="many": AUTH_FAILURE_LIMIT_PER_MINUTE must be an integer number'],
    [{ REDIS_URL: '127.0.0.1:6379' }, 'REDIS_URL must look like redis://host:6379'],
    [{ OIDC_ISSUER: 'login.example.com' }, 'OIDC_ISSUER must be an http(s) URL'],
    [{ OIDC_ISSUER: 'https://login.example.com' }, 'OIDC_AUDIENCE must be set when OIDC_ISSUER is set'],
    // One for each namespace not named above (logging, tokens, plants, stores, events, geo).
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT="xml": LOG_FORMAT must be one of the following values'],
    [{ ADMIN_TOKEN_FILE: '/nonexistent/admin-token' }, 'ADMIN_TOKEN_FILE="/nonexistent/admin-token": ADMIN_TOKEN_FILE: cannot read the file (ENOENT'],
    [{ IDEMPOTENCY_CLEANUP_INTERVAL_MS: '10' }, 'IDEMPOTENCY_CLEANUP_INTERVAL_MS=10: IDEMPOTENCY_CLEANUP_INTERVAL_MS must not be less than 1000'],
    [{ STORE_IMPORT_MAX_PRUNE_PERCENT: '101' }, 'STORE_IMPORT_MAX_PRUNE_PERCENT=101: STORE_IMPORT_MAX_PRUNE_PERCENT must not be greater than 100'],
    [{ DEMO_SEED: 'yes' }, 'DEMO_SEED="yes": DEMO_SEED must be a boolean value'],
    [{ EVENTS_NATS_URL: 'http://nats:4222' }, 'EVENTS_NATS_URL="http://nats:4222": EVENTS_NATS_URL must look like nats://host:4222'],
    [{ GEOCODER: 'google' }, 'GEOCODER="google": GEOCODER must be off, postgis, census, nominatim or pelias'],
    [{ GEOCODER: 'census' }, 'GEOCODER_URL=undefined: GEOCODER_URL must be set for GEOCODER=census'],
    [
      { GEOCODER: 'postgis', GEOCODER_URL: 'https://u:secret@gis.example.com' },
      'GEOCODER_URL="https://u:***@gis.example.com": GEOCODER_URL must be a PostgreSQL URL',
    ],
  ])('a bad value stops the server and the CLI, naming the variable: %j', async (env, message) => {
    const server = await run('main.js', env);
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(message);
    const cli = await run('cli.js', env, ['tokens', 'list']);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(message);
  });

  it('names every bad value, one line each, whichever feature it belongs to', async () => {
    const { code, stderr } = await run('main.js', { PORT: 'abc', GEOCODER_TIMEOUT_MS: '5', EVENTS_STREAM: 'a b' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'Invalid configuration:',
      '  PORT="abc": PORT must be an integer number',
      '  EVENTS_STREAM="a b": EVENTS_STREAM must be 1 to 64 letters, digits, _ or -',
      '  GEOCODER_TIMEOUT_MS=5: GEOCODER_TIMEOUT_MS must not be less than 100',
    ]);
  });
});
