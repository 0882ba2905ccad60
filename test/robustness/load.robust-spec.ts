import { openApiDocument } from '../support/openapi.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { importStores, storesCsv } from '../support/stores.js';
import { createTestApp, engine, type TestApp } from '../support/test-app.js';
import { lostWrites, plantCount, runTraffic, SEEDED_PLANTS, seedPlants, unexpectedWrites, type Query } from '../support/traffic.js';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 5);
const TEAMS = ['acme', 'globex', 'initech'];
const CONNECTIONS_PER_TEAM = 4;

/** Mixed traffic of three teams against the service as its own process (loopback only). */
describe(`load (${SECONDS} s, ${engine})`, () => {
  let t: TestApp;
  let server: ServerProcess;
  let query: Query;

  beforeAll(async () => {
    t = await createTestApp();
    await importStores(
      t,
      storesCsv([
        { code: 'S1', name: 'Chelsea', lat: 40.7506, lng: -73.9973 },
        { code: 'S2', name: 'Garment', lat: 40.7547, lng: -73.9934, zip: '10018' },
      ]),
    );
    query = (sql, params) => t.dataSource.query(sql, params);
    await seedPlants(query, TEAMS);
    server = await startServer(t.database);
  });
  afterAll(async () => {
    await server?.stop();
    await t?.close();
  });

  it('answers every request without a 5xx or a socket error, and keeps every acknowledged write', async () => {
    const teams = await Promise.all(TEAMS.map(async (team) => ({ team, token: await t.tokenFor(team) })));
    const result = await runTraffic({ url: server.url, teams, seconds: SECONDS, connectionsPerTeam: CONNECTIONS_PER_TEAM, document: await openApiDocument() });
    console.info(`load ${engine}: ${result.requests} requests, ${JSON.stringify(result.statuses)}`);

    expect(result.errors).toBe(0);
    expect(result.timeouts).toBe(0);
    expect(result.nonConforming).toEqual([]);
    const statuses = Object.values(result.statuses).flatMap((byStatus) => Object.keys(byStatus).map(Number));
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    // Every kind of traffic got through, and each as it should.
    expect(Object.keys(result.statuses).sort()).toEqual(['create', 'delete', 'invalid', 'list', 'nearest']);
    expect(Object.keys(result.statuses.create)).toEqual(['201']);
    expect(Object.keys(result.statuses.list)).toEqual(['200']);
    expect(Object.keys(result.statuses.nearest)).toEqual(['200']);
    expect(Object.keys(result.statuses.invalid)).toEqual(['400']);
    expect(result.statuses.delete[204]).toBeGreaterThan(0);

    await expect(lostWrites(query, result)).resolves.toEqual([]);
    // Nothing else was written either: every plant there and every one gone is accounted for by an
    // acknowledged write or by one still in flight when autocannon stopped (at most one per
    // connection), whose answer it does not report.
    await expect(unexpectedWrites(query, result, CONNECTIONS_PER_TEAM)).resolves.toEqual([]);
    for (const team of TEAMS) {
      const count = await plantCount(query, team);
      expect(count).toBeGreaterThanOrEqual(SEEDED_PLANTS + result.created.get(team)!.size - result.deleted.get(team)!.size - CONNECTIONS_PER_TEAM);
    }
  });
});
