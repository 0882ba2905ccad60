import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { runCli } from '../support/cli.js';
import { startMariaDb, type MariaDb } from '../support/mariadb.js';
import { openApiDocument } from '../support/openapi.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { storesCsv } from '../support/stores.js';
import type { TestDatabase } from '../support/test-app.js';
import { lostWrites, runTraffic, seedPlants, type Query } from '../support/traffic.js';

const TEAMS = ['acme', 'globex'];
const BEFORE_MS = 2500; // traffic on a healthy database first
const OUTAGE_MS = 3000;
const SECONDS = 10;
/** "Fail fast": an answer well before any client or load balancer would give up (contract §5). */
const FAST_MS = 3000;

/**
 * The database goes away in the middle of mixed traffic and comes back: a mariadbd of the
 * test's own, on a spare port and data directory, is stopped and started again.
 */
describe('database outage under load', () => {
  let db: MariaDb;
  let database: TestDatabase;
  let server: ServerProcess;
  let connection: mysql.Connection;
  let query: Query;
  let teams: Array<{ team: string; token: string }>;

  beforeAll(async () => {
    db = await startMariaDb();
    database = { env: { DATABASE_URL: db.url }, drop: () => db.destroy() };
    server = await startServer(database); // applies the migrations
    teams = [];
    for (const team of TEAMS) teams.push({ team, token: (await runCli(database, ['tokens', 'create', '--team', team])).stdout.trim() });
    const dir = mkdtempSync(join(tmpdir(), 'plant-store-faults-'));
    writeFileSync(join(dir, 'stores.csv'), storesCsv([{ code: 'S1', name: 'Chelsea', lat: 40.7506, lng: -73.9973 }]));
    await expect(runCli(database, ['locations', 'import', join(dir, 'stores.csv')])).resolves.toMatchObject({ code: 0 });
    rmSync(dir, { recursive: true });
    const open = async () => {
      connection = await mysql.createConnection(db.url);
    };
    await open();
    query = async (sql, params) => {
      const [rows] = await connection.query(sql, params);
      return rows as Array<Record<string, unknown>>;
    };
    await seedPlants(query, TEAMS);
    await connection.end();
  });
  afterAll(async () => {
    await server?.stop();
    await db?.destroy();
  });

  it('answers 503 with the Error body while the database is down, loses no acknowledged write, and recovers without a restart', async () => {
    const started = Date.now();
    const traffic = runTraffic({ url: server.url, teams, seconds: SECONDS, connectionsPerTeam: 3, document: await openApiDocument() });

    await new Promise((r) => setTimeout(r, BEFORE_MS));
    await db.stop();
    const downAt = Date.now() - started;
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    const readyDuringOutage = await server.http.get('/health/ready');
    await new Promise((r) => setTimeout(r, OUTAGE_MS / 2));
    const upFrom = Date.now() - started;
    await db.start();
    const upAt = Date.now() - started;
    const result = await traffic;
    const outage = result.timeline.filter((r) => r.at > downAt + 500 && r.at < upFrom);
    const unavailable = result.timeline.filter((r) => r.status === 503);
    console.info(
      `faults: ${result.requests} requests, ${JSON.stringify(result.statuses)}; down ${downAt}-${upAt} ms; ` +
        `${outage.length} responses during the outage, slowest 503 ${Math.max(0, ...unavailable.map((r) => r.latencyMs))} ms`,
    );

    // The traffic never broke: answered, documented, no 5xx but 503.
    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.nonConforming).toEqual([]);
    expect(result.timeline.filter((r) => r.status >= 500 && r.status !== 503)).toEqual([]);
    expect(readyDuringOutage.status).toBe(503);

    // During the outage: fast 503s, for every kind of request that needs the database. A
    // search needs none while its token is in the token cache: it is answered from the
    // in-memory store index (docs/operations.md, "Store search at chain scale"), and stays correct.
    expect(outage.length).toBeGreaterThan(0);
    expect(outage.filter((r) => r.status !== 503 && r.kind !== 'invalid' && !(r.kind === 'nearest' && r.status === 200))).toEqual([]);
    expect(outage.filter((r) => r.kind !== 'nearest' && r.kind !== 'invalid' && r.status === 503).length).toBeGreaterThan(0);
    expect(unavailable.filter((r) => r.latencyMs > FAST_MS)).toEqual([]);

    // After the restart, the same service process answers normally again.
    const after = result.timeline.filter((r) => r.at > upAt + 1500);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((r) => r.status >= 500)).toEqual([]);
    expect(server.process.exitCode).toBeNull();
    const create = await server.http.post('/plants').set('Authorization', `Bearer ${teams[0].token}`).send({ id: 999_999_999, name: 'after the outage' });
    expect(create.status).toBe(201);

    // Every acknowledged write survived the outage.
    connection = await mysql.createConnection(db.url);
    try {
      await expect(lostWrites(query, result)).resolves.toEqual([]);
      await expect(query("SELECT name FROM plants WHERE team = 'acme' AND id = 999999999")).resolves.toEqual([{ name: 'after the outage' }]);
    } finally {
      await connection.end();
    }
  });
});
