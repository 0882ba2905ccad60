import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import type { StoreInput } from './stores.js';

/**
 * Road networks for the drive-time specs: scripts/load-roads.sh on the machine's PostgreSQL (with
 * PostGIS and pgRouting), and the lengths of test/fixtures/river-roads.osm worked out by hand.
 */
export const LOAD_ROADS = fileURLToPath(new URL('../../scripts/load-roads.sh', import.meta.url));
export const RIVER_ROADS = fileURLToPath(new URL('../fixtures/river-roads.osm', import.meta.url));
export const POSTGRES = { host: '127.0.0.1', port: 5432, user: 'postgres' };
export const run = promisify(execFile);

/** Stores at the places of test/fixtures/river-roads.osm (see its comment): the drive-time specs' catalogue. */
export const RIVER_STORES: StoreInput[] = [
  { code: 'EAST', name: 'East Bank (n13)', lat: 40.02, lng: -99.98 },
  { code: 'WEST', name: 'West Road South (n1)', lat: 39.98, lng: -100.02 },
  { code: 'ONEWAY', name: 'One Way End (n31)', lat: 40.04, lng: -99.96 },
  { code: 'LOOP', name: 'Loop Corner (n14)', lat: 40.04, lng: -99.98 },
  { code: 'ISLAND', name: 'Island Lane', lat: 40.1, lng: -99.89 },
  // Five miles from the nearest road: no road reaches it within ROUTER_SNAP_MILES.
  { code: 'FIELD', name: 'Middle of a Field', lat: 40.02, lng: -100.12 },
].map((store) => ({ ...store, city: 'McCook', state: 'NE', zip: '69001' }));

/** A database of its own on the machine's PostgreSQL; `drop` ends every connection to it. */
export async function roadsDatabase(prefix: string): Promise<{ name: string; url: string; client: pg.Client; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ ...POSTGRES, database: 'postgres' });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const client = new pg.Client({ ...POSTGRES, database: name });
  await client.connect();
  return {
    name,
    url: `postgres://${POSTGRES.user}@${POSTGRES.host}:${POSTGRES.port}/${name}`,
    client,
    drop: async () => {
      await client.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** scripts/load-roads.sh `file` into the database at `url`. */
export const loadRoads = (file: string, url: string, ...extra: string[]) => run(LOAD_ROADS, [file, url, ...extra], { env: { ...process.env, PGPASSWORD: '' } });

/**
 * Lengths on the WGS84 ellipsoid, as PostGIS's geography measures them: along a meridian, the
 * meridional radius of curvature M times the angle; along a parallel, the prime vertical radius N
 * times cos(latitude) times the angle. Short arcs (a few km) at one latitude: exact to well under 0.1 %.
 */
const A = 6_378_137;
const E2 = 0.00669437999014;
const rad = (degrees: number) => (degrees * Math.PI) / 180;
export const northMetres = (lat: number, degrees: number) => ((A * (1 - E2)) / (1 - E2 * Math.sin(rad(lat)) ** 2) ** 1.5) * rad(degrees);
export const eastMetres = (lat: number, degrees: number) => (A / Math.sqrt(1 - E2 * Math.sin(rad(lat)) ** 2)) * Math.cos(rad(lat)) * rad(degrees);
/** Every road of the fixture is 60 km/h: seconds for a length in metres. */
export const seconds = (metres: number) => metres / (60 / 3.6);
