/**
 * Driver errors, recognised once by their codes (never by a constraint's generated name).
 * MySQL/MariaDB: mysql2 `code`/`errno`; SQLite: better-sqlite3 `code`.
 */
export function driverError(error: unknown): { code?: string; errno?: number; sqlState?: string } {
  if (typeof error !== 'object' || error === null) return {};
  const e = error as { code?: unknown; errno?: unknown; driverError?: unknown };
  const inner = (typeof e.driverError === 'object' && e.driverError) || e;
  const { code, errno, sqlState } = inner as { code?: unknown; errno?: unknown; sqlState?: unknown };
  return {
    code: typeof code === 'string' ? code : undefined,
    errno: typeof errno === 'number' ? errno : undefined,
    sqlState: typeof sqlState === 'string' ? sqlState : undefined,
  };
}

export function isDuplicateKeyError(error: unknown): boolean {
  const { code, errno } = driverError(error);
  return code === 'ER_DUP_ENTRY' || errno === 1062 || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * A write that lost a conflict and was rolled back, worth another try: a deadlock (1213,
 * SQLSTATE 40001; also how Galera reports a transaction that failed certification against
 * a write committed on another node) or a lock wait timeout (1205). SQLITE_BUSY is not
 * here: better-sqlite3 has already waited busy_timeout for the lock.
 */
export function isRetryableLockError(error: unknown): boolean {
  const { code, errno, sqlState } = driverError(error);
  // 9007: TiDB's "Write conflict" in optimistic transactions (docs/deployment.md, "Other engines").
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT' || errno === 1213 || errno === 1205 || errno === 9007 || sqlState === '40001';
}

/** Tries of a write that keeps losing conflicts; the last failure goes to the caller (a 503). */
export const WRITE_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 10;
const BACKOFF_CAP_MS = 250;

/**
 * Runs a write (a statement or a whole transaction) again when it lost a conflict
 * (isRetryableLockError, or `retryOn` when given), up to `attempts` times, waiting a random
 * time up to 10, 20, 40 … ms (capped) in between: "full jitter", so that writers that
 * collided once do not collide again in step. Any other error, or the last one, is thrown.
 * `work` must be safe to run again from the start: each try is its own transaction.
 */
export async function retryWriteConflicts<T>(
  work: () => Promise<T>,
  { attempts = WRITE_ATTEMPTS, retryOn = isRetryableLockError }: { attempts?: number; retryOn?: (error: unknown) => boolean } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || !retryOn(error)) throw error;
      const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
    }
  }
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
  // Galera: the node is not in the primary component, or still joining (1047 "WSREP has not
  // yet prepared node for application use"; mysql2 names errno 1047 after its old meaning).
  'ER_UNKNOWN_COM_ERROR',
  // Galera: the commit could not be replicated (1180), e.g. the node left the cluster meanwhile.
  'ER_ERROR_DURING_COMMIT',
  // The server is going down (1053) or killed this session (1927): its node is leaving.
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  // The server is read-only (1290), e.g. a former writer right after a failover (Aurora).
  'ER_OPTION_PREVENTS_STATEMENT',
]);

/**
 * The database could not be reached or cannot serve right now (as opposed to rejecting a
 * query): the client gets 503. A write that still lost its conflicts after
 * retryWriteConflicts is one too: the database is busy, trying again later is the answer.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  const { code, errno } = driverError(error);
  if (code && UNAVAILABLE_CODES.has(code)) return true;
  if (errno === 1047 || errno === 1180 || isRetryableLockError(error)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Pool is closed|Queue limit reached|connect ETIMEDOUT|Connection lost|Can't add new command when connection is in closed state|database connection is not open/i.test(
    message,
  );
}
