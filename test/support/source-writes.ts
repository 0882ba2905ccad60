import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The files a door spec reads under `dir`: every .ts but the specs, migrations left out (they change the schema and its data before any writer runs). */
export function writerSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'migrations' ? [] : writerSources(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

/**
 * What a door spec looks for in a file of src/: SQL writing its `tables`, TypeORM writing its
 * `entities`, and calls of its `events` (the outbox's methods). The file is read by TypeScript's
 * parser, not by patterns over its text: SQL counts inside strings and template literals only (not
 * in a comment that names it), and a TypeORM write is a call: a write method given the entity, a
 * query builder or repository of the entity written through (injected, or taken from a data
 * source or manager), so that a read through the same repository is not one.
 */
export interface Writes {
  tables: string[];
  entities: string[];
  events: string[];
}

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

/** The text of a string, or of each literal part of a template (`${…}` parts are not known here). */
const stringText = (node: ts.Node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)
    ? node.text
    : undefined;

/** The calls and names a call's receiver is made of: `this.plants.manager.createQueryBuilder().insert()` → each step. */
const chain = (node: ts.Expression): ts.Expression[] =>
  ts.isPropertyAccessExpression(node) || ts.isCallExpression(node) || ts.isNonNullExpression(node) ? [node, ...chain(node.expression)] : [node];

export const sqlWriting = (table: string) => new RegExp(`\\b(UPDATE|INSERT\\s+(OR\\s+\\w+\\s+)?INTO|DELETE\\s+FROM|REPLACE\\s+INTO)\\s+[\`"]?${table}\\b`, 'i');

/**
 * "file: what" for each kind of write `text` holds, sorted: "SQL writing <table>", "TypeORM writing
 * <Entity>", "a repository (<name>) writing <Entity>", "the event <method>", and "runs <NAME>" for
 * each use of a name in `statements` (another file's constant holding such SQL).
 */
export function writesIn(file: string, text: string, { tables, entities, events }: Writes, statements: ReadonlySet<string> = new Set()): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const entity = (node: ts.Node | undefined) => (node !== undefined && ts.isIdentifier(node) && entities.includes(node.text) ? node.text : undefined);
  const repositories = new Map<string, string>();
  const collect = (node: ts.Node) => {
    if (ts.isParameter(node) && ts.isIdentifier(node.name)) {
      for (const decorator of ts.getDecorators(node) ?? []) {
        const call = decorator.expression;
        const of = ts.isCallExpression(call) && call.expression.getText() === 'InjectRepository' ? entity(call.arguments[0]) : undefined;
        if (of) repositories.set(node.name.text, of);
      }
    }
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && ts.isCallExpression(node.initializer)) {
      const call = node.initializer;
      const of = /\bgetRepository$/.test(call.expression.getText()) ? entity(call.arguments[0]) : undefined;
      if (of) repositories.set(node.name.text, of);
    }
    ts.forEachChild(node, collect);
  };
  collect(source);
  const visit = (node: ts.Node) => {
    const literal = stringText(node);
    if (literal !== undefined) for (const table of tables) if (sqlWriting(table).test(literal)) found.add(`SQL writing ${table}`);
    if (ts.isIdentifier(node) && statements.has(node.text)) found.add(`runs ${node.text}`);
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      if (events.includes(method)) found.add(`the event ${method}`);
      const given = WRITE_METHODS.has(method) || method === 'into' ? entity(node.arguments[0]) : undefined;
      if (given) found.add(`TypeORM writing ${given}`);
      if (WRITE_METHODS.has(method)) {
        for (const step of chain(node.expression.expression)) {
          const name = ts.isPropertyAccessExpression(step) ? step.name.text : ts.isIdentifier(step) ? step.text : undefined;
          if (name !== undefined && repositories.has(name)) found.add(`a repository (${name}) writing ${repositories.get(name)}`);
          const of =
            ts.isCallExpression(step) && /\b(createQueryBuilder|getRepository)$/.test(step.expression.getText()) ? entity(step.arguments[0]) : undefined;
          if (of) found.add(`TypeORM writing ${of}`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...found].sort().map((what) => `${file}: ${what}`);
}

/** The names of the constants of `file` whose string is SQL writing one of `tables` (INSERT_PLANT …). */
export function sqlConstants(file: string, text: string, tables: string[]): string[] {
  const names: string[] = [];
  const visit = (node: ts.Node) => {
    const sql = ts.isVariableDeclaration(node) && node.initializer ? stringText(node.initializer) : undefined;
    if (sql !== undefined && ts.isIdentifier((node as ts.VariableDeclaration).name) && tables.some((table) => sqlWriting(table).test(sql)))
      names.push(((node as ts.VariableDeclaration).name as ts.Identifier).text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return names;
}
