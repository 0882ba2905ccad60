import type { SslOptions } from 'mysql2';
import type { DatabaseSettings } from './database.config.js';

export type TlsSettings = Pick<DatabaseSettings, 'DATABASE_TLS' | 'DATABASE_TLS_CA_FILE' | 'DATABASE_TLS_CERT_FILE' | 'DATABASE_TLS_KEY_FILE'>;

/**
 * mysql2's `ssl` option for DATABASE_TLS (the files were read and checked at boot, database.config.ts).
 * mysql2 verifies the certificate chain by default but not the server's name: verify-full
 * asks for that with `verifyIdentity`. Without a CA file, Node's public CAs (and
 * NODE_EXTRA_CA_CERTS) are trusted.
 */
export function tlsOptions(env: TlsSettings): SslOptions | undefined {
  if (env.DATABASE_TLS === 'off') return undefined;
  return {
    rejectUnauthorized: true,
    verifyIdentity: env.DATABASE_TLS === 'verify-full',
    ca: env.DATABASE_TLS_CA_FILE?.content?.toString('utf8'),
    cert: env.DATABASE_TLS_CERT_FILE?.content?.toString('utf8'),
    key: env.DATABASE_TLS_KEY_FILE?.content?.toString('utf8'),
    minVersion: 'TLSv1.2',
  };
}

/** mysql2 reports every failed TLS handshake with this code (the TLS error's own code is overwritten; its message stays). */
const HANDSHAKE_ERRORS = new Set(['HANDSHAKE_SSL_ERROR', 'HANDSHAKE_NO_SSL_SUPPORT']);

// OpenSSL's verification messages (Node's error messages) that mean "not signed by a CA we trust".
const UNTRUSTED =
  /self[- ]signed certificate|unable to get local issuer certificate|unable to verify the first certificate|unable to get issuer certificate|certificate signature failure|unable to decode issuer public key|certificate chain too long|invalid CA certificate|unsuitable certificate purpose/i;
const EXPIRED = /certificate has expired|certificate is not yet valid/i;
const WRONG_NAME = /Hostname\/IP does not match certificate's altnames|ERR_TLS_CERT_ALTNAME_INVALID/i;
// The server refused our client certificate (TLS alert), or wanted one.
const CLIENT_CERT_REFUSED =
  /alert (unknown ca|bad certificate|certificate unknown|certificate required|unsupported certificate|certificate revoked|certificate expired)/i;

function code(error: unknown): { code?: string; errno?: number; message: string } {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; errno?: unknown; message?: unknown; driverError?: unknown };
  const inner = (typeof e.driverError === 'object' && e.driverError ? e.driverError : e) as typeof e;
  return {
    code: typeof inner.code === 'string' ? inner.code : undefined,
    errno: typeof inner.errno === 'number' ? inner.errno : undefined,
    message: typeof inner.message === 'string' ? inner.message : String(error),
  };
}

// The connection dropped during the handshake: the network or a starting server, not the settings.
const DROPPED = /socket disconnected|socket hang up|ECONNRESET|EPIPE|ETIMEDOUT/i;

/** A TLS handshake that failed for a reason of the settings or certificates: retrying will not help. */
export function isTlsConfigurationError(error: unknown): boolean {
  const { code: c, message } = code(error);
  return c !== undefined && HANDSHAKE_ERRORS.has(c) && !DROPPED.test(message);
}

/**
 * A connection error reworded so that it names the setting to change, or the error itself when
 * TLS has nothing to do with it. Used where the service, the command line and the TypeORM CLI
 * first connect.
 */
export function explainConnectionError(error: unknown, env: TlsSettings): unknown {
  const { code: c, errno, message } = code(error);
  const explained = (text: string) => Object.assign(new Error(text, { cause: error }), { code: c, errno });
  if (c === 'HANDSHAKE_NO_SSL_SUPPORT') return explained(`DATABASE_TLS: the database server does not offer TLS (${message})`);
  if (c === 'HANDSHAKE_SSL_ERROR') {
    const caSetting = env.DATABASE_TLS_CA_FILE ? 'DATABASE_TLS_CA_FILE' : 'DATABASE_TLS';
    if (UNTRUSTED.test(message)) {
      return explained(
        env.DATABASE_TLS_CA_FILE
          ? `DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (${message})`
          : `DATABASE_TLS: the database server's certificate is not signed by a public CA that Node trusts (${message}); set DATABASE_TLS_CA_FILE to the CA bundle of your database`,
      );
    }
    if (EXPIRED.test(message)) return explained(`${caSetting}: the database server's certificate is outside its validity period (${message})`);
    if (WRONG_NAME.test(message)) {
      return explained(
        `DATABASE_TLS=verify-full: the database server's certificate does not name the host of DATABASE_URL (${message}); connect by a name the certificate lists, or use DATABASE_TLS=verify-ca`,
      );
    }
    if (CLIENT_CERT_REFUSED.test(message)) {
      return explained(
        env.DATABASE_TLS_CERT_FILE
          ? `DATABASE_TLS_CERT_FILE: the database server does not accept this client certificate (${message})`
          : `DATABASE_TLS_CERT_FILE: the database server asks for a client certificate (${message}); set DATABASE_TLS_CERT_FILE and DATABASE_TLS_KEY_FILE`,
      );
    }
    return explained(`DATABASE_TLS: the TLS handshake with the database server failed (${message})`);
  }
  // MySQL 8 (3159) and MariaDB (4036) with require_secure_transport=ON.
  if (env.DATABASE_TLS === 'off' && (errno === 3159 || errno === 4036)) {
    return explained(
      `DATABASE_TLS: the database server accepts encrypted connections only (${message}); set DATABASE_TLS=verify-full and DATABASE_TLS_CA_FILE`,
    );
  }
  // MariaDB answers a plain connection under require_secure_transport with "access denied".
  if (env.DATABASE_TLS === 'off' && errno === 1045) {
    return explained(`${message} (if the database server requires TLS, set DATABASE_TLS=verify-full and DATABASE_TLS_CA_FILE)`);
  }
  // A user created REQUIRE X509 without a client certificate is "access denied" as well.
  if (env.DATABASE_TLS !== 'off' && !env.DATABASE_TLS_CERT_FILE && errno === 1045) {
    return explained(`${message} (if this user is created REQUIRE X509 or SUBJECT, set DATABASE_TLS_CERT_FILE and DATABASE_TLS_KEY_FILE)`);
  }
  return error;
}
