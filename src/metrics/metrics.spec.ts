import type { DataSource } from 'typeorm';
import { Metrics } from './metrics.js';

/** A data source as TypeORM's MySQL driver shows it to Metrics: its type and mysql2's pool. */
const dataSource = (type: string): DataSource =>
  ({
    isInitialized: true,
    options: { type },
    driver: { pool: { _allConnections: [1, 2, 3], _freeConnections: [1], _connectionQueue: [], config: { connectionLimit: 10 } } },
  }) as unknown as DataSource;

describe('Metrics pool gauges', () => {
  // databaseOptions gives a mariadb:// URL the type 'mariadb', on the same mysql2 pool.
  it.each(['mysql', 'mariadb'])('reads the mysql2 pool of a %s data source', async (type) => {
    const registry = new Metrics(dataSource(type)).registry;
    const value = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
    expect(await value('plant_store_db_pool_connections_max')).toBe(10);
    expect(await value('plant_store_db_pool_connections_in_use')).toBe(2);
    expect(await value('plant_store_db_pool_connections_idle')).toBe(1);
    expect(await value('plant_store_db_pool_requests_waiting')).toBe(0);
  });

  it('has no pool gauges on the embedded SQLite database', () => {
    expect(new Metrics(dataSource('better-sqlite3')).registry.getSingleMetric('plant_store_db_pool_connections_max')).toBeUndefined();
  });
});
