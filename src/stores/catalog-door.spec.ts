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
    [
      'TypeORM writing Store',
      /\.(insert|update|delete|save|remove|upsert|clear|softDelete|increment|decrement)\(\s*Store\b|\.into\(\s*Store\b|getRepository\(\s*Store\s*\)\s*\.\s*(insert|update|delete|save|remove|upsert|clear)\b/,
    ],
    ['the catalogue change event', /\.storesChanged\(/],
  ];

  /** "file: what" for each write found in `text`. */
  const writesIn = (file: string, text: string) => WRITES.filter(([, pattern]) => pattern.test(text)).map(([what]) => `${file}: ${what}`);

  it('finds the writes where they are: in the door', () => {
    // The patterns are live: the door itself writes each table and the event.
    expect(writesIn(DOOR, readFileSync(join(root, DOOR), 'utf8'))).toEqual([
      `${DOOR}: SQL writing store_catalog`,
      `${DOOR}: SQL writing store_changes`,
      `${DOOR}: TypeORM writing Store`,
      `${DOOR}: the catalogue change event`,
    ]);
    expect(writesIn('sample', "await manager.query('UPDATE stores SET name = ? WHERE id = ?')")).toEqual(['sample: SQL writing stores']);
    expect(writesIn('sample', 'await this.dataSource.getRepository(Store).save(store)')).toEqual(['sample: TypeORM writing Store']);
  });

  it('finds no write of the catalogue in any other file of src/', () => {
    const files = sources(src).map((path) => relative(root, path));
    expect(files).toContain(DOOR);
    const elsewhere = files.filter((file) => file !== DOOR).flatMap((file) => writesIn(file, readFileSync(join(root, file), 'utf8')));
    expect(elsewhere).toEqual([]);
  });
});
