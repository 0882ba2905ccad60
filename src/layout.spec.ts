import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

/**
 * The "Where things live" map of docs/development.md, held to the tree: every folder it names
 * exists, every folder of src/ is named, folders import downwards only (by the floors it lists),
 * and the TypeORM CLI's data source lists every entity.
 */
describe('where things live', () => {
  const root = new URL('..', import.meta.url).pathname;
  const src = join(root, 'src');
  const manual = readFileSync(join(root, 'docs/development.md'), 'utf8');
  const section = manual.slice(manual.indexOf('## Where things live'));
  const map = section.slice(section.indexOf('```\n') + 4, section.indexOf('\n```', section.indexOf('```\n') + 4));
  /** The folders the map names under src/ ("  name/   what it owns"). */
  const named = map
    .slice(map.indexOf('src/\n'), map.indexOf('\ntest/'))
    .split('\n')
    .flatMap((line) => /^ {2}([a-z-]+)\/\s/.exec(line)?.[1] ?? []);
  const floors = /^Floors: (.+)$/m
    .exec(section)![1]
    .split(' · ')
    .map((floor) => floor.split(', '));
  const floorOf = new Map(floors.flatMap((folders, level) => folders.map((folder) => [folder, level] as const)));

  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
    });
  /** The folder of src/ a file belongs to; undefined for the wiring files at the top. */
  const folderOf = (file: string) => {
    const [first, ...rest] = relative(src, file).split('/');
    return rest.length > 0 ? first : undefined;
  };

  it('names every folder of src/, and every folder it names exists', () => {
    const folders = readdirSync(src).filter((name) => statSync(join(src, name)).isDirectory());
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((folder) => !existsSync(join(src, folder)))).toEqual([]);
    expect(folders.filter((folder) => !named.includes(folder))).toEqual([]);
  });

  it('puts every folder on one floor', () => {
    expect([...named].sort()).toEqual([...floorOf.keys()].sort());
  });

  it('has no folder importing from its own floor or above', () => {
    const upwards: string[] = [];
    for (const file of sources(src)) {
      const from = folderOf(file);
      if (!from) continue;
      for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const to = folderOf(resolve(dirname(file), specifier));
        if (!to || to === from) continue;
        if (floorOf.get(to)! >= floorOf.get(from)!) upwards.push(`${relative(root, file)} imports ${specifier}`);
      }
    }
    expect(upwards).toEqual([]);
  });

  it('would catch an import upwards', () => {
    // The check above on a made-up case, so that it cannot pass by matching nothing.
    expect(floorOf.get('database')!).toBeLessThan(floorOf.get('stores')!);
    expect(floorOf.get('tokens')).toBe(floorOf.get('stores'));
    expect(folderOf(resolve(src, 'database', '../stores/store.entity.js'))).toBe('stores');
  });

  it('lists every entity in the data source of the TypeORM CLI', () => {
    const dataSource = readFileSync(join(src, 'data-source.ts'), 'utf8');
    const entities = sources(src).filter((file) => file.endsWith('.entity.ts'));
    expect(entities.length).toBeGreaterThanOrEqual(4);
    const missing = entities.filter((file) => !dataSource.includes(`'./${relative(src, file).replace(/\.ts$/, '.js')}'`));
    expect(missing.map((file) => basename(file))).toEqual([]);
  });
});
