import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

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

  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'migrations' ? [] : sources(path);
      return /\.tsx?$/.test(name) && !name.endsWith('.spec.ts') ? [path] : [];
    });

  /** Each way the code writes the catalogue's tables: SQL by table name, TypeORM by entity, and the change event of the catalogue. */
  const WRITES: Array<[string, RegExp]> = [
    ['SQL writing store_catalog', /\b(UPDATE|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+[`"]?store_catalog\b/i],
    ['SQL writing stores', /\b(UPDATE|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+[`"]?stores\b/i],
    ['SQL writing store_changes', /\b(UPDATE|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+[`"]?store_changes\b/i],
    ['SQL writing holidays', /\b(UPDATE|INSERT\s+(OR\s+\w+\s+)?INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+[`"]?holidays\b/i],
    [
      'TypeORM writing Store',
      /\.(insert|update|delete|save|remove|upsert|clear|softDelete|increment|decrement)\(\s*(Store|Holiday)\b|\.into\(\s*(Store|Holiday)\b|getRepository\(\s*(Store|Holiday)\s*\)\s*\.\s*(insert|update|delete|save|remove|upsert|clear)\b/,
    ],
    // A query builder of the entity that ends in a write: `createQueryBuilder(Store, 's').delete()`, or a repository's own builder.
    ['a query builder writing Store', /createQueryBuilder\(\s*(Store|Holiday)\b[^;]*?\.(delete|update|insert|softDelete)\(\)/s],
    ['the catalogue change event', /\.storesChanged\(/],
  ];

  /** The names a file gives repositories of the catalogue's entities: injected, or taken from a data source or manager. */
  const repositoriesIn = (text: string): string[] => [
    ...[...text.matchAll(/InjectRepository\(\s*(?:Store|Holiday)\s*\)\s*(?:(?:private|protected|public|readonly)\s+)*(\w+)/g)].map((m) => m[1]),
    ...[...text.matchAll(/(?:const|let)\s+(\w+)\s*=\s*[\w.()]*getRepository\(\s*(?:Store|Holiday)\s*\)/g)].map((m) => m[1]),
  ];

  /** "file: what" for each write found in `text`: by the patterns above, and through any repository of Store or Holiday it holds. */
  const writesIn = (file: string, text: string) => {
    const found = WRITES.filter(([, pattern]) => pattern.test(text)).map(([what]) => `${file}: ${what}`);
    for (const name of repositoriesIn(text)) {
      const through = new RegExp(
        `\\b${name}\\s*\\.\\s*(?:(?:insert|update|delete|save|remove|upsert|clear|softDelete|increment|decrement)\\(|createQueryBuilder\\([^;]*?\\.(?:delete|update|insert|softDelete)\\(\\))`,
        's',
      );
      if (through.test(text)) found.push(`${file}: a repository (${name}) writing the catalogue`);
    }
    return found;
  };

  it('finds the writes where they are: in the door', () => {
    // The patterns are live: the door itself writes each table and the event.
    expect(writesIn(DOOR, readFileSync(join(root, DOOR), 'utf8'))).toEqual([
      `${DOOR}: SQL writing store_catalog`,
      `${DOOR}: SQL writing store_changes`,
      `${DOOR}: SQL writing holidays`,
      `${DOOR}: TypeORM writing Store`,
      `${DOOR}: the catalogue change event`,
    ]);
    expect(writesIn('sample', "await manager.query('UPDATE stores SET name = ? WHERE id = ?')")).toEqual(['sample: SQL writing stores']);
    expect(writesIn('sample', "await manager.query('DELETE FROM holidays WHERE date = ?')")).toEqual(['sample: SQL writing holidays']);
    expect(writesIn('sample', 'await this.dataSource.getRepository(Store).save(store)')).toEqual(['sample: TypeORM writing Store']);
    expect(writesIn('sample', "await manager.createQueryBuilder(Store, 's').delete().where('id = 1').execute()")).toEqual([
      'sample: a query builder writing Store',
    ]);
    // A repository held under a name of its own, injected or taken once, then written through.
    const injected = 'constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}\n  gone() { return this.stores.delete(7); }';
    expect(writesIn('sample', injected)).toEqual(['sample: a repository (stores) writing the catalogue']);
    const built = "const repo = dataSource.getRepository(Holiday);\nawait repo.createQueryBuilder('h').update().set({ name: 'x' }).execute();";
    expect(writesIn('sample', built)).toEqual(['sample: a repository (repo) writing the catalogue']);
    // Reading through a repository is not writing.
    expect(
      writesIn('sample', 'constructor(@InjectRepository(Store) private readonly stores: Repository<Store>) {}\n  all() { return this.stores.find(); }'),
    ).toEqual([]);
  });

  it('finds no write of the catalogue in any other file of src/', () => {
    const files = sources(src).map((path) => relative(root, path));
    expect(files).toContain(DOOR);
    const elsewhere = files.filter((file) => file !== DOOR).flatMap((file) => writesIn(file, readFileSync(join(root, file), 'utf8')));
    expect(elsewhere).toEqual([]);
  });
});
