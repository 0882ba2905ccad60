import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Paths of PEM files made by openssl for one test file. */
export interface Certificates {
  dir: string;
  /** The CA that signed the server and client certificates. */
  ca: string;
  /** A second, unrelated CA: the wrong one. */
  otherCa: string;
  /** Server certificate and key for 127.0.0.1 and localhost. */
  serverCert: string;
  serverKey: string;
  /** Another server certificate of the same CA, naming 127.0.0.1 only (not localhost). */
  ipOnlyCert: string;
  ipOnlyKey: string;
  /** Client certificate (CN=plant-store) and key. */
  clientCert: string;
  clientKey: string;
  remove(): void;
}

/** A CA, a server and a client certificate signed by it, and an unrelated CA (P-256 keys: quick to make). */
export function makeCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

  const ca = (name: string, subject: string) =>
    openssl('req', '-x509', ...key, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`), '-days', '2', '-subj', subject);
  ca('ca', '/CN=Plant Store Test CA');
  ca('other-ca', '/CN=Unrelated Test CA');

  const signed = (name: string, subject: string, extensions: string) => {
    writeFileSync(file(`${name}.ext`), extensions);
    openssl('req', ...key, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${name}.pem`),
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
    );
  };
  signed('server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  signed('server-ip-only', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  signed('client', '/CN=plant-store', 'extendedKeyUsage=clientAuth\n');

  return {
    dir,
    ca: file('ca.pem'),
    otherCa: file('other-ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    ipOnlyCert: file('server-ip-only.pem'),
    ipOnlyKey: file('server-ip-only.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
