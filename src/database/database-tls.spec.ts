import { SettingFile } from '../config/environment.js';
import { isDatabaseUnavailableError } from './database-errors.js';
import { explainConnectionError, isTlsConfigurationError } from './database-tls.js';

/** What mysql2 hands over when the TLS handshake fails: Node's message, its own code. */
const handshake = (message: string) => Object.assign(new Error(message), { code: 'HANDSHAKE_SSL_ERROR', fatal: true });
const withCa = { DATABASE_TLS: 'verify-full' as const, DATABASE_TLS_CA_FILE: new SettingFile('/run/secrets/db-ca.pem') };
const message = (error: unknown) => (error as Error).message;

describe('explainConnectionError', () => {
  it('names DATABASE_TLS_CA_FILE when the server certificate is not signed by that CA', () => {
    for (const reason of ['self-signed certificate in certificate chain', 'unable to get local issuer certificate', 'unable to verify the first certificate']) {
      const explained = explainConnectionError(handshake(reason), withCa);
      expect(message(explained)).toBe(`DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (${reason})`);
      expect((explained as { code: string }).code).toBe('HANDSHAKE_SSL_ERROR');
    }
  });

  it('points to DATABASE_TLS_CA_FILE when no public CA vouches for the server', () => {
    expect(message(explainConnectionError(handshake('self-signed certificate in certificate chain'), { DATABASE_TLS: 'verify-full' }))).toBe(
      "DATABASE_TLS: the database server's certificate is not signed by a public CA that Node trusts (self-signed certificate in certificate chain); set DATABASE_TLS_CA_FILE to the CA bundle of your database",
    );
  });

  it('says when the certificate does not name the host, and when it expired', () => {
    expect(
      message(
        explainConnectionError(
          handshake("Hostname/IP does not match certificate's altnames: Host: db.internal. is not in the cert's altnames: DNS:localhost"),
          withCa,
        ),
      ),
    ).toMatch(
      /^DATABASE_TLS=verify-full: the database server's certificate does not name the host of DATABASE_URL \(.*\); connect by a name the certificate lists, or use DATABASE_TLS=verify-ca$/,
    );
    expect(message(explainConnectionError(handshake('certificate has expired'), withCa))).toBe(
      "DATABASE_TLS_CA_FILE: the database server's certificate is outside its validity period (certificate has expired)",
    );
  });

  it('names the client certificate when the server refuses it or asks for one', () => {
    const refused = handshake('error:0A000418:SSL routines::tlsv1 alert unknown ca');
    expect(
      message(
        explainConnectionError(refused, { ...withCa, DATABASE_TLS_CERT_FILE: new SettingFile('/c.pem'), DATABASE_TLS_KEY_FILE: new SettingFile('/c.key') }),
      ),
    ).toMatch(/^DATABASE_TLS_CERT_FILE: the database server does not accept this client certificate/);
    expect(message(explainConnectionError(handshake('ssl/tls alert certificate required'), withCa))).toMatch(
      /^DATABASE_TLS_CERT_FILE: the database server asks for a client certificate .*; set DATABASE_TLS_CERT_FILE and DATABASE_TLS_KEY_FILE$/,
    );
  });

  it('says when the server offers no TLS at all', () => {
    const error = Object.assign(new Error('Server does not support secure connection'), { code: 'HANDSHAKE_NO_SSL_SUPPORT' });
    expect(message(explainConnectionError(error, withCa))).toBe(
      'DATABASE_TLS: the database server does not offer TLS (Server does not support secure connection)',
    );
  });

  it('suggests DATABASE_TLS when a server that requires TLS refuses a plain connection', () => {
    const mysql8 = Object.assign(new Error('Connections using insecure transport are prohibited while --require_secure_transport=ON.'), {
      code: 'ER_SECURE_TRANSPORT_REQUIRED',
      errno: 3159,
    });
    expect(message(explainConnectionError(mysql8, { DATABASE_TLS: 'off' }))).toMatch(
      /^DATABASE_TLS: the database server accepts encrypted connections only \(Connections using insecure transport/,
    );
    const mariadb = Object.assign(new Error("Access denied for user 'app'@'localhost' (using password: NO)"), { code: 'ER_ACCESS_DENIED_ERROR', errno: 1045 });
    expect(message(explainConnectionError(mariadb, { DATABASE_TLS: 'off' }))).toBe(
      "Access denied for user 'app'@'localhost' (using password: NO) (if the database server requires TLS, set DATABASE_TLS=verify-full and DATABASE_TLS_CA_FILE)",
    );
    expect(message(explainConnectionError(mariadb, withCa))).toMatch(
      /\(if this user is created REQUIRE X509 or SUBJECT, set DATABASE_TLS_CERT_FILE and DATABASE_TLS_KEY_FILE\)$/,
    );
  });

  it('leaves other errors as they are', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
    expect(explainConnectionError(refused, withCa)).toBe(refused);
    const wrapped = { message: 'Query failed', driverError: Object.assign(new Error('Table x'), { code: 'ER_NO_SUCH_TABLE', errno: 1146 }) };
    expect(explainConnectionError(wrapped, { DATABASE_TLS: 'off' })).toBe(wrapped);
  });
});

describe('isTlsConfigurationError', () => {
  it('is true for certificate problems, false for a connection dropped during the handshake', () => {
    expect(isTlsConfigurationError(handshake('self-signed certificate in certificate chain'))).toBe(true);
    expect(isTlsConfigurationError(explainConnectionError(handshake('unable to get local issuer certificate'), withCa))).toBe(true);
    expect(isTlsConfigurationError(handshake('Client network socket disconnected before secure TLS connection was established'))).toBe(false);
    expect(isTlsConfigurationError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(false);
  });
});

describe('a failed handshake while running', () => {
  it('is the database being unavailable (503), like a refused connection', () => {
    expect(isDatabaseUnavailableError(handshake('certificate has expired'))).toBe(true);
    expect(isDatabaseUnavailableError(Object.assign(new Error('Server does not support secure connection'), { code: 'HANDSHAKE_NO_SSL_SUPPORT' }))).toBe(true);
  });
});
