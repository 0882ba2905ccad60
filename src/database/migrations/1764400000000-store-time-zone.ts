import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';
import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';

const PAGE = 1000;

/**
 * The zone at a point, as geo/time-zones.ts finds it (geo-tz's comprehensive data, a bounded cache
 * of its cells), written out here: a migration stays as it was run, whatever later becomes of the
 * service's own code, and the database folder sits below geo/.
 */
function zoneFinder(): (lat: number, lng: number) => string {
  const geoTz = createRequire(import.meta.url)('geo-tz/all') as typeof import('geo-tz/all');
  geoTz.setCache({ store: new LRUCache<string, object>({ max: 64 }) });
  return (lat, lng) => geoTz.find(lat, lng)[0];
}

/**
 * Each store's IANA time zone, which its hours are in (the search's `open_at`). The column comes
 * with an empty default so that it can be added to a full table, every existing store gets the
 * zone at its coordinates (offline, geo-tz as in geo/time-zones.ts: the look-ups take about 0.3 s per 100,000 stores), and
 * the default goes again: from now on every write names the zone.
 */
export class StoreTimeZone1764400000000 implements MigrationInterface {
  name = 'StoreTimeZone1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn('stores', new TableColumn({ name: 'time_zone', type: 'varchar', length: '64', default: "''" }));
    const zoneOf = zoneFinder();
    for (let after = 0; ;) {
      const page: Array<{ id: number | string; lat: number | string; lng: number | string }> = await queryRunner.query(
        'SELECT id, lat, lng FROM stores WHERE id > ? ORDER BY id LIMIT ?',
        [after, PAGE],
      );
      // One UPDATE per zone on the page: a page of stores spans a few zones.
      const byZone = new Map<string, number[]>();
      for (const { id, lat, lng } of page) {
        const zone = zoneOf(Number(lat), Number(lng));
        const ids = byZone.get(zone);
        if (ids) ids.push(Number(id));
        else byZone.set(zone, [Number(id)]);
      }
      for (const [zone, ids] of byZone)
        await queryRunner.query(`UPDATE stores SET time_zone = ? WHERE id IN (${ids.map(() => '?').join(',')})`, [zone, ...ids]);
      if (page.length < PAGE) break;
      after = Number(page[page.length - 1].id);
    }
    await queryRunner.changeColumn('stores', 'time_zone', new TableColumn({ name: 'time_zone', type: 'varchar', length: '64' }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('stores', 'time_zone');
  }
}
