import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificates, type Certificates } from '../../test/support/certificates.js';
import { validateSettings } from '../config/environment.js';
import { DatabaseSettings } from './database.config.js';
import { tlsOptions } from './database-tls.js';

const URL = 'mysql://app:s3cret@db.example.com:3306/plantstore';

describe('database TLS settings', () => {
  let certs: Certificates;

  beforeAll(() => {
    certs = makeCertificates();
  });

  afterAll(() => certs.remove());

  const validate = (env: Record<string, string>) => validateSettings(DatabaseSettings, env);
  const invalid = (env: Record<string, string>) => () => validate(env);

  it('is off by default', () => {
    expect(validate({ DATABASE_URL: URL }).DATABASE_TLS).toBe('off');
  });

  it('accepts verify-full with a CA file, and a client certificate with its key', () => {
    const env = validate({
      DATABASE_URL: URL,
      DATABASE_TLS: 'verify-full',
      DATABASE_TLS_CA_FILE: certs.ca,
      DATABASE_TLS_CERT_FILE: certs.clientCert,
      DATABASE_TLS_KEY_FILE: certs.clientKey,
    });
    expect(env.DATABASE_TLS).toBe('verify-full');
    // Each file read once, here: what the connection uses (database-tls.ts) is this content.
    expect(env.DATABASE_TLS_CA_FILE?.path).toBe(certs.ca);
    expect(env.DATABASE_TLS_CA_FILE?.content).toEqual(readFileSync(certs.ca));
    expect(env.DATABASE_TLS_KEY_FILE?.content).toEqual(readFileSync(certs.clientKey));
  });

  it('reads each file once, while validating: the connection gets the content that was checked, whatever the file holds later', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-tls-'));
    try {
      const copy = (from: string, name: string) => {
        writeFileSync(join(dir, name), readFileSync(from));
        return join(dir, name);
      };
      const files = {
        DATABASE_TLS_CA_FILE: copy(certs.ca, 'ca.pem'),
        DATABASE_TLS_CERT_FILE: copy(certs.clientCert, 'c.pem'),
        DATABASE_TLS_KEY_FILE: copy(certs.clientKey, 'c.key'),
      };
      const settings = validate({ DATABASE_URL: URL, DATABASE_TLS: 'verify-full', ...files });
      for (const file of Object.values(files)) rmSync(file);
      expect(tlsOptions(settings)).toMatchObject({
        ca: readFileSync(certs.ca, 'utf8'),
        cert: readFileSync(certs.clientCert, 'utf8'),
        key: readFileSync(certs.clientKey, 'utf8'),
        verifyIdentity: true,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts verify-ca without a CA file (Node trusts its public CAs then), by IP address too', () => {
    expect(validate({ DATABASE_URL: 'mysql://app@10.1.2.3:3306/db', DATABASE_TLS: 'verify-ca' }).DATABASE_TLS).toBe('verify-ca');
  });

  it('rejects an unknown mode, naming the variable', () => {
    expect(invalid({ DATABASE_URL: URL, DATABASE_TLS: 'true' })).toThrow('DATABASE_TLS="true": DATABASE_TLS must be off, verify-ca or verify-full');
    expect(invalid({ DATABASE_URL: URL, DATABASE_TLS: 'required' })).toThrow('DATABASE_TLS must be off, verify-ca or verify-full');
  });

  it('rejects TLS without a MySQL DATABASE_URL', () => {
    expect(invalid({ DATABASE_TLS: 'verify-full' })).toThrow('DATABASE_TLS="verify-full": DATABASE_TLS applies to MySQL only: set DATABASE_URL');
  });

  it('rejects verify-full by IP address, which mysql2 cannot check', () => {
    expect(invalid({ DATABASE_URL: 'mysql://app@127.0.0.1:3306/db', DATABASE_TLS: 'verify-full' })).toThrow(
      'DATABASE_TLS=verify-full checks the host name of DATABASE_URL',
    );
    expect(invalid({ DATABASE_URL: 'mysql://app@[::1]:3306/db', DATABASE_TLS: 'verify-full' })).toThrow('DATABASE_TLS=verify-full checks the host name');
  });

  it('rejects a TLS file while DATABASE_TLS is off, rather than ignoring it', () => {
    expect(invalid({ DATABASE_URL: URL, DATABASE_TLS_CA_FILE: certs.ca })).toThrow(
      'DATABASE_TLS_CA_FILE is set but DATABASE_TLS is off: set DATABASE_TLS=verify-full (or verify-ca)',
    );
  });

  it('rejects a CA file that cannot be read, or is no certificate, naming the variable', () => {
    const tls = { DATABASE_URL: URL, DATABASE_TLS: 'verify-full' };
    expect(invalid({ ...tls, DATABASE_TLS_CA_FILE: '/nonexistent/ca.pem' })).toThrow(
      'DATABASE_TLS_CA_FILE="/nonexistent/ca.pem": DATABASE_TLS_CA_FILE: cannot read the file (ENOENT',
    );
    expect(invalid({ ...tls, DATABASE_TLS_CA_FILE: certs.clientKey })).toThrow('DATABASE_TLS_CA_FILE: not a PEM certificate');
  });

  it('rejects a client certificate without its key, and a key without its certificate', () => {
    const tls = { DATABASE_URL: URL, DATABASE_TLS: 'verify-full', DATABASE_TLS_CA_FILE: certs.ca };
    expect(invalid({ ...tls, DATABASE_TLS_CERT_FILE: certs.clientCert })).toThrow('DATABASE_TLS_KEY_FILE must be set when DATABASE_TLS_CERT_FILE is set');
    expect(invalid({ ...tls, DATABASE_TLS_KEY_FILE: certs.clientKey })).toThrow('DATABASE_TLS_CERT_FILE must be set when DATABASE_TLS_KEY_FILE is set');
  });

  it('rejects a key that does not belong to the certificate, and a certificate file holding a key', () => {
    const tls = { DATABASE_URL: URL, DATABASE_TLS: 'verify-full' };
    expect(invalid({ ...tls, DATABASE_TLS_CERT_FILE: certs.clientCert, DATABASE_TLS_KEY_FILE: certs.serverKey })).toThrow(
      'DATABASE_TLS_KEY_FILE is not the private key of the certificate in DATABASE_TLS_CERT_FILE',
    );
    expect(invalid({ ...tls, DATABASE_TLS_CERT_FILE: certs.clientKey, DATABASE_TLS_KEY_FILE: certs.clientKey })).toThrow(
      'DATABASE_TLS_CERT_FILE: not a PEM certificate',
    );
  });

  it('rejects an encrypted key with a reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-key-'));
    try {
      const encrypted = join(dir, 'encrypted.key');
      writeFileSync(
        encrypted,
        '-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n',
      );
      expect(invalid({ DATABASE_URL: URL, DATABASE_TLS: 'verify-full', DATABASE_TLS_CERT_FILE: certs.clientCert, DATABASE_TLS_KEY_FILE: encrypted })).toThrow(
        'DATABASE_TLS_KEY_FILE: the private key is encrypted',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the password of DATABASE_URL out of the error message', () => {
    let message = '';
    try {
      validate({ DATABASE_URL: 'mysql://app:s3cret@db.example.com:3306/plantstore?ssl=true' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('DATABASE_URL="mysql://app:***@db.example.com:3306/plantstore?ssl=true": DATABASE_URL must look like');
    expect(message).toContain('without ?options; TLS is set with DATABASE_TLS');
    expect(message).not.toContain('s3cret');
  });
});
