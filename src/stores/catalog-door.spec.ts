import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writesIn as writesOf, type Writes, writerSources } from '../../test/support/source-writes.js';

/**
 * The store catalogue has one door for writes (StoreCatalog.write in store-catalog.ts): it bumps
 * `store_catalog.version`, writes the change event and tells the index. A writer that went
 * around it would leave every other instance searching a stale index with no error anywhere, so
 * the tree is read for writes of the catalogue's tables, and for the change event, anywhere else.
 * Migrations are left out: they change the schema and its data before any writer runs.
 */
describe('the store catalogue is written through one door', () => {
  const root = new URL('../..', import.meta.url).pathname;
  const src = join(root, 'src');
  const DOOR = 'src/stores/store-catalog.ts';

  /** The catalogue's tables and entities, and its change event. */
  const CATALOGUE: Writes = {
    tables: ['store_catalog', 'stores', 'store_changes', 'holidays', 'services'],
    entities: ['Store', 'Holiday', 'Service'],
    events: ['storesChanged'],
  };
  const writesIn = (file: string, text: string) => writesOf(file, text, CATALOGUE);

  it('finds the writes where they are: in the door', () => {
    // The patterns are live: the door itself writes each table and the event.
    expect(writesIn(DOOR, readFileSync(join(root, DOOR), 'utf8'))).toEqual([
      `${DOOR}: SQL writing holidays`,
      `${DOOR}: SQL writing services`,
      `${DOOR}: SQL writing store_catalog`,
      `${DOOR}: SQL writing store_changes`,
      `${DOOR}: TypeORM writing Store`,
      `${DOOR}: the event storesChanged`,
    ]);
    expect(writesIn('sample', "await manager.query('UPDATE stores SET name = ? WHERE id = ?')")).toEqual(['sample: SQL writing stores']);
    expect(writesIn('sample', "await manager.query('DELETE FROM holidays WHERE date = ?')")).toEqual(['sample: SQL writing holidays']);
    expect(writesIn('sample', 'await this.dataSource.getRepository(Store).save(store)')).toEqual(['sample: TypeORM writing Store']);
    expect(writesIn('sample', "await manager.createQueryBuilder(Store, 's').delete().where('id = 1').execute()")).toEqual(['sample: TypeORM writing Store']);
    // A repository held under a name of its own, injected or taken once, then written through.
    const injected =
      'class S {\n  constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}\n  gone() { return this.stores.delete(7); }\n}';
    expect(writesIn('sample', injected)).toEqual(['sample: a repository (stores) writing Store']);
    const built = "const repo = dataSource.getRepository(Holiday);\nawait repo.createQueryBuilder('h').update().set({ name: 'x' }).execute();";
    expect(writesIn('sample', built)).toEqual(['sample: a repository (repo) writing Holiday']);
    // SQL in a comment is not a write; reading through a repository is not either.
    expect(writesIn('sample', '// never UPDATE stores here\nconst sql = `SELECT code FROM stores WHERE code = ?`;')).toEqual([]);
    expect(
      writesIn(
        'sample',
        'class S {\n  constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}\n  all() { return this.stores.find(); }\n}',
      ),
    ).toEqual([]);
  });

  it('finds no write of the catalogue in any other file of src/', () => {
    const files = writerSources(src).map((path) => relative(root, path));
    expect(files).toContain(DOOR);
    const elsewhere = files.filter((file) => file !== DOOR).flatMap((file) => writesIn(file, readFileSync(join(root, file), 'utf8')));
    expect(elsewhere).toEqual([]);
  });
});
