import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { eastMetres, loadRoads, LOAD_ROADS, northMetres, RIVER_ROADS as FIXTURE, roadsDatabase, run, seconds } from './support/roads.js';

/**
 * scripts/load-roads.sh on the machine's PostgreSQL with PostGIS and pgRouting: the fixture
 * test/fixtures/river-roads.osm (a river with one bridge, a one-way street, a road linked to
 * nothing) loaded with osm2pgrouting's car profile, its lengths and times against values worked
 * out by hand, and pgRouting's routes over it; a reload swapped in whole, a failed one leaving the
 * network as it was.
 */
/** The fixture's intersections and ends, as OpenStreetMap node ids (ways_vertices_pgr.osm_id). */
const N = { n1: 1, n2: 2, n4: 4, n12: 12, n14: 14, n21: 21, n22: 22, n31: 31, n41: 41 } as const;

describe('scripts/load-roads.sh: a road network for ROUTER=pgrouting', () => {
  let url: string;
  let db: pg.Client;
  let drop: () => Promise<void>;
  let dir: string;

  const load = (file: string, ...extra: string[]) => loadRoads(file, url, ...extra);
  /** The cost (s) and length (m) of the fastest route between two OSM nodes, or undefined when there is none. */
  async function route(from: number, to: number, schema = 'roads'): Promise<{ seconds: number; metres: number } | undefined> {
    const { rows } = await db.query<{ seconds: number | null; metres: number | null }>(
      `WITH v AS (SELECT (SELECT id FROM ${schema}.ways_vertices_pgr WHERE osm_id = $1) AS a, (SELECT id FROM ${schema}.ways_vertices_pgr WHERE osm_id = $2) AS b)
       SELECT max(p.agg_cost + p.cost) AS seconds, sum(w.length_m) AS metres
       FROM v, pgr_dijkstra('SELECT gid AS id, source, target, cost_s AS cost, reverse_cost_s AS reverse_cost FROM ${schema}.ways', v.a, v.b, true) p
       JOIN ${schema}.ways w ON w.gid = p.edge`,
      [from, to],
    );
    return rows[0].seconds === null ? undefined : { seconds: Number(rows[0].seconds), metres: Number(rows[0].metres) };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'roads-spec-'));
    ({ url, client: db, drop } = await roadsDatabase('roads_spec'));
  });
  afterAll(async () => {
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads the extract into osm2pgrouting’s standard tables, in the schema roads, with the extensions it needs', async () => {
    const { stdout } = await load(FIXTURE);
    expect(stdout).toMatch(/^loaded 10 ways and 11 vertices into roads_spec_\w+, schema roads, in \d+ s$/m);
    const { rows: extensions } = await db.query<{ extname: string }>("SELECT extname FROM pg_extension WHERE extname IN ('postgis', 'pgrouting') ORDER BY 1");
    expect(extensions.map((e) => e.extname)).toEqual(['pgrouting', 'postgis']);
    const { rows: columns } = await db.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = 'roads' AND table_name = 'ways'",
    );
    expect(columns.map((c) => c.column_name)).toEqual(expect.arrayContaining(['source', 'target', 'cost_s', 'reverse_cost_s', 'length_m', 'the_geom']));
    // Nothing left of the staging schema; the river is no road.
    const { rows: schemas } = await db.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'roads%' ORDER BY 1");
    expect(schemas.map((s) => s.nspname)).toEqual(['roads']);
    await expect(db.query("SELECT count(*)::int AS n FROM roads.ways WHERE name = 'Plant River'")).resolves.toMatchObject({ rows: [{ n: 0 }] });
  });

  it('measures each road piece and its time at 60 km/h as worked out by hand, the one-way street one way only', async () => {
    const { rows } = await db.query<{ osm_id: string; length_m: number; cost_s: number; reverse_cost_s: number }>(
      'SELECT osm_id, length_m, cost_s, reverse_cost_s FROM roads.ways ORDER BY osm_id, length_m',
    );
    const pieces = rows.map((r) => [Number(r.osm_id), r.length_m, r.cost_s, r.reverse_cost_s]);
    const expected: Array<[osmId: number, metres: number, oneWay?: true]> = [
      [101, northMetres(39.99, 0.02)], // West Road, n1 - n2
      [101, northMetres(40.02, 0.04)], // n2 - n4 (n3 is no intersection: one piece)
      [102, northMetres(39.99, 0.02)], // East Road, n11 - n12
      [102, northMetres(40.02, 0.04)], // n12 - n14
      [103, eastMetres(40, 0.015)], // Bridge Street, n2 - n21
      [104, eastMetres(40, 0.01)], // the bridge, n21 - n22
      [105, eastMetres(40, 0.015)], // n22 - n12
      [106, eastMetres(40.04, 0.02), true], // One Way Street, n14 → n31
      [107, 2 * northMetres(40.05, 0.02) + eastMetres(40.06, 0.02)], // Loop Road, n31 - n32 - n33 - n14
      [108, eastMetres(40.1, 0.02)], // Island Lane
    ];
    expect(pieces).toHaveLength(expected.length);
    expected.forEach(([osmId, metres, oneWay], i) => {
      const [id, length, cost, reverse] = pieces[i];
      expect(id).toBe(osmId);
      expect(Math.abs(length - metres) / metres).toBeLessThan(0.001);
      expect(cost).toBeCloseTo(seconds(length), 6);
      expect(reverse).toBeCloseTo(oneWay ? -seconds(length) : seconds(length), 6);
    });
  });

  it('routes over the bridge, around the one-way street, and not at all to the road linked to nothing', async () => {
    // n4 (west bank, 40.04) to n14 (east bank, 40.04): 0.04° east in a straight line, but down to the bridge and back up.
    const overBridge = 2 * northMetres(40.02, 0.04) + 2 * eastMetres(40, 0.015) + eastMetres(40, 0.01);
    const across = await route(N.n4, N.n14);
    expect(Math.abs(across!.metres - overBridge) / overBridge).toBeLessThan(0.001);
    expect(across!.seconds).toBeCloseTo(seconds(across!.metres), 3);
    expect(eastMetres(40.04, 0.04) / overBridge).toBeLessThan(0.3);

    const oneWay = await route(N.n14, N.n31);
    const back = await route(N.n31, N.n14);
    expect(Math.abs(oneWay!.metres - eastMetres(40.04, 0.02)) / eastMetres(40.04, 0.02)).toBeLessThan(0.001);
    const loop = 2 * northMetres(40.05, 0.02) + eastMetres(40.06, 0.02);
    expect(Math.abs(back!.metres - loop) / loop).toBeLessThan(0.001);
    expect(back!.seconds / oneWay!.seconds).toBeGreaterThan(3.5);

    await expect(route(N.n4, N.n41)).resolves.toBeUndefined();
  });

  it('swaps a new extract in whole, and leaves the network as it was when a load fails', async () => {
    // The bridge closed: the same extract without its three Bridge Street ways.
    const noBridge = join(dir, 'no-bridge.osm');
    writeFileSync(noBridge, readFileSync(FIXTURE, 'utf8').replace(/ {2}<way id="10[345]"[\s\S]*?<\/way>\n/g, ''));
    const { stdout } = await load(noBridge);
    // West and East Road are one piece each now (n2 and n12 joined nothing else).
    expect(stdout).toMatch(/loaded 5 ways and 7 vertices/);
    await expect(route(N.n4, N.n14)).resolves.toBeUndefined();
    await expect(route(N.n14, N.n31)).resolves.toBeDefined();

    const noRoads = join(dir, 'river-only.osm');
    writeFileSync(noRoads, readFileSync(FIXTURE, 'utf8').replace(/ {2}<way id="10[1-8]"[\s\S]*?<\/way>\n/g, ''));
    await expect(load(noRoads)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('has no road') as string });
    await expect(db.query('SELECT count(*)::int AS n FROM roads.ways')).resolves.toMatchObject({ rows: [{ n: 5 }] });
    const { rows: schemas } = await db.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'roads%' ORDER BY 1");
    expect(schemas.map((s) => s.nspname)).toEqual(['roads']);
  });

  it('reads a .osm.pbf extract through osmium, into a schema of its choice', async () => {
    const pbf = join(dir, 'river-roads.osm.pbf');
    await run('osmium', ['cat', '--overwrite', '--no-progress', FIXTURE, '-o', pbf]);
    const { stdout } = await load(pbf, '--schema', 'state_roads');
    expect(stdout).toContain('keeping the highways of');
    expect(stdout).toMatch(/loaded 10 ways and 11 vertices into \w+, schema state_roads/);
    const across = await route(N.n4, N.n14, 'state_roads');
    expect(across).toBeDefined();
  });

  it('refuses what it cannot load, naming why', async () => {
    await expect(load(join(dir, 'missing.osm'))).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('cannot read') as string });
    await expect(run(LOAD_ROADS, [FIXTURE, 'mysql://root@127.0.0.1/x'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('postgres://user[:password]@host[:port]/database') as string,
    });
    await expect(load(FIXTURE, '--schema', 'Roads; DROP')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('--schema must be') as string });
    await expect(run(LOAD_ROADS, [FIXTURE])).rejects.toMatchObject({ code: 2 });
  });
});
