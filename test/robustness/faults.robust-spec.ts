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
import { lostWrites, runTraffic, seedPlants, type Query, type TrafficResult } from '../support/traffic.js';

const TEAMS = ['acme', 'globex'];
const CONNECTIONS_PER_TEAM = 3;
/** Requests in flight at any moment: at most one per connection. */
const IN_FLIGHT = TEAMS.length * CONNECTIONS_PER_TEAM;
/** The most the traffic may run: it stops when the phases below are done, counted in answers. */
const SECONDS = 120;
/** Bounds a hang of one phase only: a loaded machine is slower, not wrong. */
const PHASE_MS = 90_000;

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
    let live!: TrafficResult;
    let phasesDone!: () => void;
    const stop = new Promise<void>((resolve) => (phasesDone = resolve));
    const traffic = runTraffic({
      url: server.url,
      teams,
      seconds: SECONDS,
      connectionsPerTeam: CONNECTIONS_PER_TEAM,
      document: await openApiDocument(),
      stop,
      live: (result) => (live = result),
    });
    const until = async (what: string, check: () => boolean | Promise<boolean>) => {
      const deadline = Date.now() + PHASE_MS;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`not within ${PHASE_MS} ms: ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const ready = async () => (await server.http.get('/health/ready')).status;

    // Each phase lasts a number of answers. Phase boundaries are positions in the list of answers;
    // the answers of the requests in flight at a boundary (one per connection) are left out of the
    // phase after it, since either side may have served them.
    await until('200 answers on a healthy database', () => live.timeline.length >= 200);
    await db.stop();
    await until('/health/ready answering 503', async () => (await ready()) === 503);
    const outageFrom = live.timeline.length + IN_FLIGHT;
    await until('50 answers of 503 during the outage', () => live.timeline.slice(outageFrom).filter((r) => r.status === 503).length >= 50);
    const outageTo = live.timeline.length;
    await db.start();
    await until('/health/ready answering 200 again', async () => (await ready()) === 200);
    // A grace of answers, as the pool replaces the connections that died with the database.
    const afterFrom = live.timeline.length + 100;
    await until('200 answers after the recovery and its grace', () => live.timeline.length >= afterFrom + 200);
    phasesDone();
    const result = await traffic;
    const outage = result.timeline.slice(outageFrom, outageTo);
    const after = result.timeline.slice(afterFrom);
    console.info(
      `faults: ${result.requests} requests, ${JSON.stringify(result.statuses)}; ${outage.length} answers during the outage, ${after.length} after the recovery`,
    );

    // The traffic never broke: answered, documented, no 5xx but 503; no request waited past
    // autocannon's timeout (10 s), which bounds a hang.
    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.nonConforming).toEqual([]);
    expect(result.timeline.filter((r) => r.status >= 500 && r.status !== 503)).toEqual([]);

    // During the outage: 503s, for every kind of request that needs the database. A search needs
    // none while its token is in the token cache: it is answered from the in-memory store index
    // (docs/operations.md, "Store search at chain scale"), and stays correct.
    expect(outage.filter((r) => r.status !== 503 && r.kind !== 'invalid' && !(r.kind === 'nearest' && r.status === 200))).toEqual([]);
    expect(outage.filter((r) => r.kind !== 'nearest' && r.kind !== 'invalid' && r.status === 503).length).toBeGreaterThan(0);

    // After the restart, the same service process answers normally again.
    expect(after.length).toBeGreaterThanOrEqual(200);
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
