import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The "Where things live" map of docs/development.md, held to the tree: every folder it names
 * exists, every folder of src/ is named, folders import downwards only (by the floors it lists,
 * the files at the top of src/ above them all), the entry points sit at the top and nothing
 * imports them, no files import each other in a cycle, and the TypeORM CLI's data source lists
 * every entity.
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

  const within = (file: string, specifier: string, dir: string) => !relative(dir, resolve(dirname(file), specifier)).startsWith('..');
  /**
   * Every module a file imports or re-exports, as written: static, side-effect (`import './x.js'`),
   * dynamic (`await import('./x.js')`) and `require('./x.js')`, read by TypeScript, so comments and
   * strings do not count.
   */
  const specifiers = (text: string) => ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => fileName);
  /**
   * The relative imports of a file of src/ that reach a folder on its own floor or above, or a file
   * at the top of src/: those wire the floors together (settings.ts, app.module.ts) or start the
   * process, so they are above every folder.
   */
  const upwardImports = (file: string, text: string) => {
    const from = folderOf(file);
    if (!from) return [];
    return specifiers(text).filter((specifier) => {
      if (!specifier.startsWith('.')) return false;
      if (!within(file, specifier, src)) return false;
      const to = folderOf(resolve(dirname(file), specifier));
      return to === undefined || (to !== from && floorOf.get(to)! >= floorOf.get(from)!);
    });
  };

  it('has no folder importing from its own floor or above', () => {
    const upwards = sources(src).flatMap((file) => upwardImports(file, readFileSync(file, 'utf8')).map((s) => `${relative(root, file)} imports ${s}`));
    expect(upwards).toEqual([]);
  });

  it('would catch an import upwards of every kind', () => {
    // The check above on made-up files, so that it cannot pass by matching nothing: database/ is
    // below stores/, tokens/ on the same floor as stores/.
    expect(floorOf.get('database')!).toBeLessThan(floorOf.get('stores')!);
    expect(floorOf.get('tokens')).toBe(floorOf.get('stores'));
    const inDatabase = join(src, 'database', 'x.ts');
    const up = '../stores/store.entity.js';
    expect(upwardImports(inDatabase, `import { Store } from '${up}';`)).toEqual([up]);
    expect(upwardImports(inDatabase, `import type { Store } from "${up}";`)).toEqual([up]);
    expect(upwardImports(inDatabase, `import '${up}';`)).toEqual([up]);
    expect(upwardImports(inDatabase, `export { Store } from '${up}';`)).toEqual([up]);
    expect(upwardImports(inDatabase, `const { Store } = await import('${up}');`)).toEqual([up]);
    expect(upwardImports(inDatabase, `const { Store } = require('${up}');`)).toEqual([up]);
    expect(upwardImports(join(src, 'tokens', 'x.ts'), `import { Store } from '${up}';`)).toEqual([up]);
    // A file at the top of src/ is above every folder.
    expect(upwardImports(inDatabase, "import { loadSettings } from '../settings.js';")).toEqual(['../settings.js']);
    // Downwards, within the folder, a package, or in a comment or a string: allowed.
    expect(
      upwardImports(join(src, 'stores', 'x.ts'), "import { a } from '../database/a.js';\nimport { b } from './b.js';\nimport { c } from 'typeorm';"),
    ).toEqual([]);
    expect(upwardImports(inDatabase, `// import '${up}';\nconst text = "import '${up}'";`)).toEqual([]);
  });

  /** The files of src/ a file imports (of every kind, type-only included), by path. */
  const importsOf = (file: string, text: string) =>
    specifiers(text)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));

  /**
   * Each cycle of imports among `files` (path to text), as "a.ts → b.ts → a.ts": one per import
   * that closes one, found by walking the imports depth first. Type-only imports count: they leave
   * nothing at run time, but two files that name each other's types can only be read, changed and
   * moved together, and a type import is one edit away from a value import whose cycle would load
   * one of the two half-initialised.
   */
  const importCycles = (files: Map<string, string>) => {
    const graph = new Map([...files].map(([file, text]) => [file, importsOf(file, text).filter((to) => files.has(to))]));
    const cycles: string[] = [];
    const done = new Set<string>();
    const path: string[] = [];
    const visit = (file: string) => {
      path.push(file);
      for (const next of graph.get(file)!) {
        if (path.includes(next)) cycles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(src, f)).join(' → '));
        else if (!done.has(next)) visit(next);
      }
      path.pop();
      done.add(file);
    };
    for (const file of [...graph.keys()].sort()) if (!done.has(file)) visit(file);
    return cycles;
  };

  it('has no files of src/ importing each other in a cycle, type-only imports included', () => {
    const files = new Map(sources(src).map((file) => [file, readFileSync(file, 'utf8')]));
    expect(files.size).toBeGreaterThan(100);
    expect(importCycles(files)).toEqual([]);
  });

  it('would catch a cycle of imports', () => {
    // The check above on made-up files, so that it cannot pass by matching nothing.
    const made = (texts: Record<string, string>) => new Map(Object.entries(texts).map(([name, text]) => [join(src, name), text]));
    expect(importCycles(made({ 'stores/a.ts': "import type { B } from './b.js';", 'stores/b.ts': "import { a } from './a.js';" }))).toEqual([
      'stores/a.ts → stores/b.ts → stores/a.ts',
    ]);
    expect(
      importCycles(
        made({
          'a.ts': "export * from './geo/b.js';",
          'geo/b.ts': "const c = await import('./c.js');",
          'geo/c.ts': "import '../a.js';",
          'd.ts': "import './a.js';",
        }),
      ),
    ).toEqual(['a.ts → geo/b.ts → geo/c.ts → a.ts']);
    expect(importCycles(made({ 'a.ts': "import { a } from './a.js';" }))).toEqual(['a.ts → a.ts']);
    // Two ways down to one file are not a cycle.
    expect(importCycles(made({ 'a.ts': "import './b.js';\nimport './c.js';", 'b.ts': "import './c.js';", 'c.ts': "import { x } from 'typeorm';" }))).toEqual(
      [],
    );
  });

  /**
   * The files of src/ a process starts from: what package.json's scripts, the image, compose.yaml,
   * the Kubernetes manifests and the command line's launcher run (`dist/<name>.js`).
   */
  const entryPoints = () => {
    const runners = [
      'package.json',
      'Dockerfile',
      'compose.yaml',
      'scripts/cli.mjs',
      ...readdirSync(join(root, 'deploy/kubernetes')).map((name) => `deploy/kubernetes/${name}`),
    ];
    const named = runners.flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/\bdist\/([\w./-]+)\.js\b/g)].map(([, name]) => join(src, `${name}.ts`)),
    );
    return [...new Set(named)].sort();
  };

  it('keeps the entry points at the top of src/, imported by no file, each starting with the Node check', () => {
    const entries = entryPoints();
    expect(entries.map((file) => relative(src, file))).toEqual(
      expect.arrayContaining(['cli.ts', 'data-source.ts', 'instrumentation.ts', 'main.ts', 'migrate.ts']),
    );
    // In a folder, an entry point imports upwards (settings.ts, node-version.ts) or runs from under a floor it does not own.
    expect(entries.filter((file) => !existsSync(file) || folderOf(file) !== undefined).map((file) => relative(src, file))).toEqual([]);
    // Importing one would run it: a second start of the process from inside it.
    const importers = sources(src).flatMap((file) =>
      importsOf(file, readFileSync(file, 'utf8'))
        .filter((to) => entries.includes(to))
        .map((to) => `${relative(src, file)} imports ${relative(src, to)}`),
    );
    expect(importers).toEqual([]);
    // node-version.ts stops an old Node before any other module loads: only as the first import.
    const late = entries.filter((file) => specifiers(readFileSync(file, 'utf8'))[0] !== './node-version.js').map((file) => relative(src, file));
    expect(late).toEqual([]);
  });

  const shared = join(src, 'shared');
  const web = join(src, 'console', 'web');
  const allFiles = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? allFiles(join(dir, name)) : name.endsWith('.ts') ? [join(dir, name)] : []));

  /** What a file of shared/ may not import: anything outside shared/, and any package (its specs: fast-check only). */
  const sharedBreaches = (file: string, text: string) =>
    specifiers(text).filter((specifier) =>
      specifier.startsWith('.') ? !within(file, specifier, shared) : !(file.endsWith('.spec.ts') && specifier === 'fast-check'),
    );
  /** Packages that only run in Node or only mean something to the server. */
  const serverOnly = (specifier: string) =>
    specifier.startsWith('node:') ||
    builtinModules.includes(specifier.split('/')[0]) ||
    /^(@nestjs\/|typeorm$|class-validator$|class-transformer$|express$|reflect-metadata$)/.test(specifier);
  /** What a file of console/web/ may not import: the server's folders (shared/ aside) and its packages. */
  const consoleBreaches = (file: string, text: string) =>
    specifiers(text).filter((specifier) =>
      specifier.startsWith('.')
        ? !within(file, specifier, web) && !within(file, specifier, shared) && resolve(dirname(file), specifier) !== join(root, 'clients/typescript/schema.js')
        : serverOnly(specifier),
    );

  it('keeps shared/ free of everything outside it: no other folder, no package', () => {
    const files = allFiles(shared);
    expect(files.length).toBeGreaterThanOrEqual(8);
    expect(files.flatMap((file) => sharedBreaches(file, readFileSync(file, 'utf8')).map((s) => `${relative(root, file)} imports ${s}`))).toEqual([]);
  });

  it("compiles shared/ with ECMAScript's globals alone: no Node, no DOM", () => {
    // The console's tsconfig cannot tell: Jest's types bring Node's in. Here `process`, `Buffer` or
    // `document` is "cannot find name", and a package is "cannot find module".
    const files = allFiles(shared).filter((file) => !file.endsWith('.spec.ts'));
    const program = ts.createProgram(files, {
      noEmit: true,
      strict: true,
      types: [],
      lib: ['lib.es2023.d.ts'],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${relative(root, d.file?.fileName ?? '')}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(errors).toEqual([]);
  });

  it('lets the console import only its own folder, shared/ and browser packages', () => {
    const files = allFiles(web);
    expect(files.flatMap((file) => consoleBreaches(file, readFileSync(file, 'utf8')).map((s) => `${relative(root, file)} imports ${s}`))).toEqual([]);
  });

  it('lets the console declare no name that shared/ exports (import it instead of copying it)', () => {
    const exported = allFiles(shared)
      .filter((file) => !file.endsWith('.spec.ts'))
      .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/^export (?:const|function|class|type|interface) (\w+)/gm)].map(([, name]) => name));
    expect(exported).toEqual(expect.arrayContaining(['EARTH_RADIUS_MILES', 'WEEKDAYS', 'unguardCell']));
    const copies = allFiles(web).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/^\s*(?:export )?(?:const|let|function|class|type|interface) (\w+)/gm)]
        .filter(([, name]) => exported.includes(name))
        .map(([, name]) => `${relative(root, file)} declares ${name}`),
    );
    expect(copies).toEqual([]);
  });

  it('would catch shared/ or the console reaching out', () => {
    // The checks above on made-up files, so that they cannot pass by matching nothing.
    const inShared = join(shared, 'x.ts');
    expect(sharedBreaches(inShared, "import { a } from './a.js';\nimport type { B } from '../stores/store.entity.js';")).toEqual(['../stores/store.entity.js']);
    expect(sharedBreaches(inShared, "import { readFileSync } from 'node:fs';\nexport { b } from '@nestjs/common';")).toEqual(['node:fs', '@nestjs/common']);
    expect(sharedBreaches(inShared, "const m = await import('typeorm');")).toEqual(['typeorm']);
    expect(sharedBreaches(join(shared, 'x.spec.ts'), "import fc from 'fast-check';")).toEqual([]);
    const inConsole = join(web, 'x.ts');
    expect(consoleBreaches(inConsole, "import { a } from './a.js';\nimport { b } from '../../shared/b.js';\nimport { html } from 'htm/preact';")).toEqual([]);
    expect(consoleBreaches(inConsole, "import { c } from '../../geo/geo.js';\nimport 'fs';\nimport { d } from 'typeorm';")).toEqual([
      '../../geo/geo.js',
      'fs',
      'typeorm',
    ]);
  });

  it('lists every entity in the data source of the TypeORM CLI', () => {
    const dataSource = readFileSync(join(src, 'data-source.ts'), 'utf8');
    const entities = sources(src).filter((file) => file.endsWith('.entity.ts'));
    expect(entities.length).toBeGreaterThanOrEqual(4);
    const missing = entities.filter((file) => !dataSource.includes(`'./${relative(src, file).replace(/\.ts$/, '.js')}'`));
    expect(missing.map((file) => basename(file))).toEqual([]);
  });
});
