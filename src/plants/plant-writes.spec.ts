import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Where plants and their change events are written. A plant written anywhere else would have no
 * event (or an event with no plant), and nothing would say so, so the tree is held to this list:
 *
 * - the plants table: by the statements of plants/plants.service.ts (INSERT_PLANT, DELETE_PLANT,
 *   and its repository with events off), which plants/idempotent-creates.service.ts also runs
 *   (INSERT_PLANT, in the transaction that stores the key); and by the trigger probe of
 *   database/plant-event-triggers.ts, a row no token can name, in a transaction rolled back;
 * - the plant events: asked of the outbox (plantCreated, createPlant, deletePlant) by those two
 *   files of plants/ alone; event_outbox rows are written by events/outbox.service.ts and by the
 *   plants table's triggers (database/plant-event-triggers.ts), and deleted by the relay once
 *   published (events/outbox-relay.ts).
 *
 * The files are read by TypeScript, not by patterns over their text: SQL counts in strings only
 * (not in a comment that names it), and a TypeORM write by the call it is (a method of Plant's
 * repository or of a query builder of Plant). Migrations are left out: they run before any writer.
 */
describe('plants and their events are written in known places only', () => {
  const root = new URL('../..', import.meta.url).pathname;
  const src = join(root, 'src');

  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'migrations' ? [] : sources(path);
      return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
    });

  const sqlWriting = (table: string) => new RegExp(`\\b(UPDATE|INSERT\\s+(OR\\s+\\w+\\s+)?INTO|DELETE\\s+FROM|REPLACE\\s+INTO)\\s+[\`"]?${table}\\b`, 'i');
  const SQL: Array<[string, RegExp]> = [
    ['SQL writing plants', sqlWriting('plants')],
    ['SQL writing event_outbox', sqlWriting('event_outbox')],
  ];
  const WRITE_METHODS = new Set([
    'insert',
    'update',
    'delete',
    'save',
    'remove',
    'upsert',
    'clear',
    'softDelete',
    'softRemove',
    'restore',
    'increment',
    'decrement',
  ]);
  const PLANT_EVENTS = new Set(['plantCreated', 'createPlant', 'deletePlant']);

  /** The text of a string, or of each literal part of a template (`${…}` parts are not known here). */
  const stringText = (node: ts.Node) =>
    ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
      ? node.text
      : undefined;
  const isPlant = (node: ts.Node | undefined) => node !== undefined && ts.isIdentifier(node) && node.text === 'Plant';
  /** The calls and names a call's receiver is made of: `this.plants.manager.createQueryBuilder().insert()` → each step. */
  const chain = (node: ts.Expression): ts.Expression[] => {
    if (ts.isPropertyAccessExpression(node) || ts.isCallExpression(node) || ts.isNonNullExpression(node)) return [node, ...chain(node.expression)];
    return [node];
  };

  /** "file: what" for each kind of write `text` holds; `statements`: the names of other files' plant SQL constants, each use of which is a write. */
  const writesIn = (file: string, text: string, statements: ReadonlySet<string> = new Set()) => {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const found = new Set<string>();
    // The repositories of Plant the file holds: injected (`@InjectRepository(Plant) private plants`) or taken (`const r = x.getRepository(Plant)`).
    const repositories = new Set<string>();
    const collect = (node: ts.Node) => {
      if (ts.isParameter(node) && ts.isIdentifier(node.name)) {
        const injected = ts
          .getDecorators(node)
          ?.some((d) => ts.isCallExpression(d.expression) && d.expression.expression.getText() === 'InjectRepository' && isPlant(d.expression.arguments[0]));
        if (injected) repositories.add(node.name.text);
      }
      if (
        ts.isVariableDeclaration(node) &&
        ts.isIdentifier(node.name) &&
        node.initializer &&
        /\bgetRepository\(\s*Plant\s*\)$/.test(node.initializer.getText())
      )
        repositories.add(node.name.text);
      ts.forEachChild(node, collect);
    };
    collect(source);
    const visit = (node: ts.Node) => {
      const literal = stringText(node);
      if (literal !== undefined) for (const [what, pattern] of SQL) if (pattern.test(literal)) found.add(what);
      if (ts.isIdentifier(node) && statements.has(node.text)) found.add(`runs ${node.text}`);
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        if (PLANT_EVENTS.has(method)) found.add('a plant event');
        if ((WRITE_METHODS.has(method) || method === 'into') && isPlant(node.arguments[0])) found.add('TypeORM writing Plant');
        if (WRITE_METHODS.has(method)) {
          const steps = chain(node.expression.expression);
          const through =
            steps.find((step) => ts.isPropertyAccessExpression(step) && repositories.has(step.name.text)) ??
            steps.find((step) => ts.isIdentifier(step) && repositories.has(step.text));
          if (through) found.add(`a repository (${through.getText().replace(/^this\./, '')}) writing Plant`);
          const builder = steps.some(
            (step) => ts.isCallExpression(step) && /(createQueryBuilder|getRepository)$/.test(step.expression.getText()) && isPlant(step.arguments[0]),
          );
          if (builder) found.add('TypeORM writing Plant');
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return [...found].sort().map((what) => `${file}: ${what}`);
  };

  /** The names of the constants holding SQL that writes plants, in `file` (INSERT_PLANT …): a file that imports one runs a plant write. */
  const plantStatements = (file: string, text: string) => {
    const names: string[] = [];
    const visit = (node: ts.Node) => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && SQL[0][1].test(stringText(node.initializer) ?? ''))
        names.push(node.name.text);
      ts.forEachChild(node, visit);
    };
    visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
    return names;
  };

  it('finds each kind of write, and nothing in comments or reads', () => {
    expect(writesIn('s', "// never DELETE FROM plants here\nconst sql = 'SELECT name FROM plants WHERE team = ?';")).toEqual([]);
    expect(writesIn('s', 'await manager.query(`DELETE FROM plants WHERE team = ${team}`);')).toEqual(['s: SQL writing plants']);
    expect(writesIn('s', 'await q("INSERT INTO `event_outbox` (id) VALUES (?)");')).toEqual(['s: SQL writing event_outbox']);
    expect(writesIn('s', 'await manager.save(Plant, { team, id, name });')).toEqual(['s: TypeORM writing Plant']);
    expect(writesIn('s', 'await manager.createQueryBuilder().insert().into(Plant).values(p).execute();')).toEqual(['s: TypeORM writing Plant']);
    expect(writesIn('s', "await ds.createQueryBuilder(Plant, 'p').delete().where('id = 1').execute();")).toEqual(['s: TypeORM writing Plant']);
    expect(writesIn('s', 'await ds.getRepository(Plant).update({ id }, { name });')).toEqual(['s: TypeORM writing Plant']);
    const injected =
      'class S {\n  constructor(@InjectRepository(Plant) private readonly mine: Repository<Plant>) {}\n  gone() { return this.mine.delete({ id: 7 }); }\n}';
    expect(writesIn('s', injected)).toEqual(['s: a repository (mine) writing Plant']);
    const taken = "const repo = ds.getRepository(Plant);\nawait repo.createQueryBuilder('p').update().set({ name: 'x' }).execute();";
    expect(writesIn('s', taken)).toEqual(['s: a repository (repo) writing Plant']);
    expect(writesIn('s', 'await this.outbox.deletePlant(team, id, actor, write);')).toEqual(['s: a plant event']);
    expect(writesIn('s', 'await manager.query(INSERT_PLANT, [team, id, name, tag]);', new Set(['INSERT_PLANT']))).toEqual(['s: runs INSERT_PLANT']);
    // Reads through a repository, a builder or a query, and a repository of another entity, are not writes of plants.
    const reads =
      'class S {\n  constructor(@InjectRepository(Plant) private readonly plants: Repository<Plant>, @InjectRepository(Store) private readonly stores: Repository<Store>) {}\n' +
      "  a() { return this.plants.createQueryBuilder('p').select('MAX(p.id)').getRawOne(); }\n  b() { return this.plants.create({ id: 1 }); }\n  c() { return this.stores.delete(1); }\n}";
    expect(writesIn('s', reads)).toEqual([]);
    expect(plantStatements('s', "export const INSERT_PLANT = 'INSERT INTO plants (team) VALUES (?)';\nconst READ = 'SELECT 1 FROM plants';")).toEqual([
      'INSERT_PLANT',
    ]);
  });

  it('finds the writes of plants and their events in these places and no other', () => {
    const files = new Map(sources(src).map((path) => [relative(root, path), readFileSync(path, 'utf8')]));
    const declared = new Map([...files].flatMap(([file, text]) => plantStatements(file, text).map((name) => [name, file] as const)));
    expect([...declared]).toEqual([
      ['INSERT_PLANT', 'src/plants/plants.service.ts'],
      ['DELETE_PLANT', 'src/plants/plants.service.ts'],
    ]);
    const writes = [...files].flatMap(([file, text]) =>
      writesIn(file, text, new Set([...declared].filter(([, where]) => where !== file).map(([name]) => name))),
    );
    expect(writes).toEqual([
      'src/database/plant-event-triggers.ts: SQL writing event_outbox',
      'src/database/plant-event-triggers.ts: SQL writing plants',
      'src/events/outbox-relay.ts: SQL writing event_outbox',
      'src/events/outbox.service.ts: SQL writing event_outbox',
      'src/plants/idempotent-creates.service.ts: a plant event',
      'src/plants/idempotent-creates.service.ts: runs INSERT_PLANT',
      'src/plants/plants.service.ts: SQL writing plants',
      'src/plants/plants.service.ts: TypeORM writing Plant',
      'src/plants/plants.service.ts: a plant event',
      'src/plants/plants.service.ts: a repository (plants) writing Plant',
    ]);
  });
});
