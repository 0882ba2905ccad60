import { execFile } from 'node:child_process';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { makeCertificates, type Certificates } from './support/certificates.js';
import { startMariaDb, type MariaDb } from './support/mariadb.js';
import { startServer, type ServerProcess } from './support/server.js';
import type { TestDatabase } from './support/test-app.js';

/**
 * TLS to MySQL: a MariaDB of the test's own that refuses unencrypted connections
 * (require_secure_transport=ON) with certificates made by openssl, reached by the built
 * server, the command line and the TypeORM CLI. The engine under test does not matter here,
 * so jest.config.js runs this file in the e2e-sqlite project only.
 */
const TIMEOUT = 120_000;
const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
const TYPEORM = fileURLToPath(new URL('../node_modules/typeorm/cli.js', import.meta.url));
const NO_DATABASE: TestDatabase = { env: {}, drop: () => Promise.resolve() };
/** startServer takes DATABASE_URL from its database argument only. */
const at = (url: string): TestDatabase => ({ env: { DATABASE_URL: url }, drop: () => Promise.resolve() });

/** Runs a built entry point with only the given environment; resolves with its exit code and stderr. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env.PATH, NODE_ENV: 'test', LOG_LEVEL: 'warn', PORT: '0', METRICS_PORT: '0', ...env }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('TLS to the database', () => {
  let certs: Certificates;
  let db: MariaDb;
  let admin: mysql.Connection;
  /** The service's database user, reached by the host name the server certificate lists. */
  let url: string;
  let tls: Record<string, string>;
  /** The files the server serves: a test may swap them and FLUSH SSL. */
  let served: { cert: string; key: string };
  const serve = async (cert: string, key: string) => {
    copyFileSync(cert, served.cert);
    copyFileSync(key, served.key);
    await admin.query('FLUSH SSL');
  };

  beforeAll(async () => {
    certs = makeCertificates();
    served = { cert: join(certs.dir, 'served.pem'), key: join(certs.dir, 'served.key') };
    copyFileSync(certs.serverCert, served.cert);
    copyFileSync(certs.serverKey, served.key);
    db = await startMariaDb({ tls: { ca: certs.ca, ...served }, grantTables: true, performanceSchema: true });
    admin = await mysql.createConnection({ socketPath: db.socket, user: 'root' });
    await admin.query("CREATE USER 'service'@'%' IDENTIFIED BY 'service-password'");
    await admin.query("GRANT ALL ON plantstore.* TO 'service'@'%'");
    // A user that must present a client certificate of this CA, with this subject.
    await admin.query("CREATE USER 'certified'@'%' REQUIRE SUBJECT '/CN=plant-store' AND ISSUER '/CN=Plant Store Test CA'");
    await admin.query("GRANT ALL ON plantstore.* TO 'certified'@'%'");
    url = `mysql://service:service-password@localhost:${db.port}/plantstore`;
    tls = { DATABASE_URL: url, DATABASE_TLS: 'verify-full', DATABASE_TLS_CA_FILE: certs.ca };
  }, TIMEOUT);

  afterAll(async () => {
    await admin?.end();
    await db?.destroy();
    certs?.remove();
  }, TIMEOUT);

  /** TLS cipher of every session of `user` on the server (performance_schema): '' for an unencrypted one. */
  async function ciphersOf(user: string): Promise<string[]> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(
      `SELECT s.VARIABLE_VALUE AS cipher FROM performance_schema.threads t
         JOIN performance_schema.status_by_thread s ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher'
        WHERE t.PROCESSLIST_USER = ?`,
      [user],
    );
    return rows.map((r) => String(r.cipher));
  }

  async function storedPlants(): Promise<Array<[number, string]>> {
    const [rows] = await admin.query<mysql.RowDataPacket[]>('SELECT id, name FROM plantstore.plants ORDER BY id');
    return rows.map((r) => [Number(r.id), String(r.name)]);
  }

  describe('with the right CA (verify-full), the URL read from a file', () => {
    let server: ServerProcess;
    let env: Record<string, string>;

    beforeAll(async () => {
      // The way Kubernetes mounts a secret: a file, here with a trailing newline.
      const urlFile = join(certs.dir, 'database-url');
      writeFileSync(urlFile, `${url}\n`);
      env = { DATABASE_URL_FILE: urlFile, DATABASE_TLS: 'verify-full', DATABASE_TLS_CA_FILE: certs.ca };
      server = await startServer(NO_DATABASE, env);
    }, TIMEOUT);

    afterAll(async () => {
      await server?.stop();
    }, TIMEOUT);

    it('serves plants, over encrypted sessions only', async () => {
      const issued = await run([dist('cli.js'), 'tokens', 'create', '--team', 'acme'], env);
      expect(issued.code).toBe(0);
      const auth = { Authorization: `Bearer ${issued.stdout.trim()}` };

      const created = await server.http.post('/plants').set(auth).send({ id: 1, name: 'Monstera' });
      expect(created.status).toBe(201);
      const listed = await server.http.get('/plants').set(auth);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual([{ name: 'Monstera' }]);
      expect(await storedPlants()).toEqual([[1, 'Monstera']]);

      const ciphers = await ciphersOf('service');
      expect(ciphers.length).toBeGreaterThan(0);
      for (const cipher of ciphers) expect(cipher).toMatch(/^TLS_|^ECDHE-/);
    });
  });

  it('runs the TypeORM CLI (npm run migration:run) over TLS too', async () => {
    const migrated = await run([TYPEORM, 'migration:run', '-d', dist('data-source.js')], tls);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    const refused = await run([TYPEORM, 'migration:run', '-d', dist('data-source.js')], { ...tls, DATABASE_TLS_CA_FILE: certs.otherCa });
    expect(refused.code).toBe(1);
    expect(`${refused.stdout}${refused.stderr}`).toContain("DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (");
  });

  it('refuses to start with the wrong CA at once, naming the setting, and so does the command line', async () => {
    // A long start-up timeout: a certificate error must not be retried like an unreachable database.
    const env = { ...tls, DATABASE_TLS_CA_FILE: certs.otherCa, DB_STARTUP_TIMEOUT_MS: '3600000' };
    const server = await run([dist('main.js')], env);
    expect(server.code).toBe(1);
    expect(server.stderr).toContain("DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (");
    expect(server.stderr).not.toMatch(/retrying/i);
    const cli = await run([dist('cli.js'), 'tokens', 'list'], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain("DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (");
  });

  it('without TLS settings cannot connect to a server that requires TLS, and says what to set', async () => {
    const server = await run([dist('main.js')], { DATABASE_URL: url, DB_STARTUP_TIMEOUT_MS: '3600000' });
    expect(server.code).toBe(1);
    expect(server.stderr).toContain("Access denied for user 'service'@'localhost'");
    expect(server.stderr).toContain('(if the database server requires TLS, set DATABASE_TLS=verify-full and DATABASE_TLS_CA_FILE)');
    expect(server.stderr).not.toMatch(/retrying/i);
  });

  it('checks the name in the certificate with verify-full only: an IP address is refused at boot, verify-ca accepts it', async () => {
    const byIp = `mysql://service:service-password@127.0.0.1:${db.port}/plantstore`;
    const refused = await run([dist('main.js')], { ...tls, DATABASE_URL: byIp });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('DATABASE_TLS=verify-full checks the host name of DATABASE_URL against the certificate');

    const server = await startServer(at(byIp), { ...tls, DATABASE_URL: byIp, DATABASE_TLS: 'verify-ca' });
    try {
      const ready = await server.http.get('/health/ready');
      expect(ready.status).toBe(200);
    } finally {
      await server.stop();
    }
    const wrongCa = await run([dist('main.js')], { ...tls, DATABASE_URL: byIp, DATABASE_TLS: 'verify-ca', DATABASE_TLS_CA_FILE: certs.otherCa });
    expect(wrongCa.code).toBe(1);
    expect(wrongCa.stderr).toContain("DATABASE_TLS_CA_FILE: the database server's certificate is not signed by this CA (");
  });

  it('with verify-full refuses a certificate that does not name the host of DATABASE_URL', async () => {
    await serve(certs.ipOnlyCert, certs.ipOnlyKey);
    try {
      const server = await run([dist('main.js')], tls);
      expect(server.code).toBe(1);
      expect(server.stderr).toContain(
        "DATABASE_TLS=verify-full: the database server's certificate does not name the host of DATABASE_URL (Hostname/IP does not match",
      );
      expect(server.stderr).toContain('Host: localhost.');
      // The same certificate is fine for verify-ca, which checks the signature only.
      const byIp = await startServer(at(`mysql://service:service-password@127.0.0.1:${db.port}/plantstore`), { ...tls, DATABASE_TLS: 'verify-ca' });
      try {
        expect((await byIp.http.get('/health/ready')).status).toBe(200);
      } finally {
        await byIp.stop();
      }
    } finally {
      await serve(certs.serverCert, certs.serverKey);
    }
  });

  describe('a user created REQUIRE SUBJECT … AND ISSUER …', () => {
    const certified = () => ({ ...tls, DATABASE_URL: `mysql://certified@localhost:${db.port}/plantstore` });

    it('is refused without a client certificate, with a hint', async () => {
      const server = await run([dist('main.js')], certified());
      expect(server.code).toBe(1);
      expect(server.stderr).toContain("Access denied for user 'certified'@'localhost'");
      expect(server.stderr).toContain('(if this user is created REQUIRE X509 or SUBJECT, set DATABASE_TLS_CERT_FILE and DATABASE_TLS_KEY_FILE)');
    });

    it('connects with the client certificate and key', async () => {
      const server = await startServer(at(certified().DATABASE_URL), {
        ...certified(),
        DATABASE_TLS_CERT_FILE: certs.clientCert,
        DATABASE_TLS_KEY_FILE: certs.clientKey,
      });
      try {
        const issued = await run([dist('cli.js'), 'tokens', 'create', '--team', 'green'], {
          ...certified(),
          DATABASE_TLS_CERT_FILE: certs.clientCert,
          DATABASE_TLS_KEY_FILE: certs.clientKey,
        });
        expect(issued.code).toBe(0);
        const created = await server.http
          .post('/plants')
          .set({ Authorization: `Bearer ${issued.stdout.trim()}` })
          .send({ id: 2, name: 'Calathea' });
        expect(created.status).toBe(201);
        expect(await storedPlants()).toContainEqual([2, 'Calathea']);
        const ciphers = await ciphersOf('certified');
        expect(ciphers.length).toBeGreaterThan(0);
        for (const cipher of ciphers) expect(cipher).not.toBe('');
      } finally {
        await server.stop();
      }
    });
  });

  it('refuses DATABASE_URL and DATABASE_URL_FILE together, naming both', async () => {
    const urlFile = join(certs.dir, 'database-url-2');
    writeFileSync(urlFile, url);
    const server = await run([dist('main.js')], { ...tls, DATABASE_URL_FILE: urlFile });
    expect(server.code).toBe(1);
    expect(server.stderr).toContain(`DATABASE_URL_FILE="${urlFile}": DATABASE_URL and DATABASE_URL_FILE are both set; set one of them`);
    expect(server.stderr).not.toContain('service-password');
  });
});
