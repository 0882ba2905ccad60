/**
 * Driver errors, recognised once by their codes (never by a constraint's generated name).
 * MySQL/MariaDB: mysql2 `code`/`errno`; SQLite: better-sqlite3 `code`.
 */
function driverError(error: unknown): { code?: string; errno?: number } {
  if (typeof error !== 'object' || error === null) return {};
  const e = error as { code?: unknown; errno?: unknown; driverError?: unknown };
  const inner = (typeof e.driverError === 'object' && e.driverError) || e;
  const { code, errno } = inner as { code?: unknown; errno?: unknown };
  return { code: typeof code === 'string' ? code : undefined, errno: typeof errno === 'number' ? errno : undefined };
}

export function isDuplicateKeyError(error: unknown): boolean {
  const { code, errno } = driverError(error);
  return code === 'ER_DUP_ENTRY' || errno === 1062 || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/** Deadlocks and lock waits are worth one more try; the transaction was rolled back. */
export function isRetryableLockError(error: unknown): boolean {
  const { code } = driverError(error);
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT' || code === 'SQLITE_BUSY';
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'POOL_CLOSED',
  'POOL_ACQUIRE_TIMEOUT',
  'SQLITE_BUSY',
  // A failed TLS handshake (database-tls.ts): at start-up a certificate problem is fatal at once, later a 503.
  'HANDSHAKE_SSL_ERROR',
  'HANDSHAKE_NO_SSL_SUPPORT',
]);

/** The database could not be reached (as opposed to rejecting a query): the client gets 503. */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const { code } = driverError(error);
  if (code && UNAVAILABLE_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Pool is closed|Queue limit reached|connect ETIMEDOUT|Connection lost|Can't add new command when connection is in closed state|database connection is not open/i.test(message);
}
