import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { sqlConstants, writesIn as writesOf, type Writes, writerSources } from '../../test/support/source-writes.js';

/**
 * Where plants and their change events are written. A plant written anywhere else would have no
 * event (or an event with no plant), and nothing would say so, so the tree is held to this list:
 *
 * - the plants table: only by the outbox's plant writer (OutboxService.createPlant and deletePlant,
 *   which run the write with its event whether events are on or off), given the statements of
 *   plants/plants.service.ts (INSERT_PLANT, DELETE_PLANT) by that file and by
 *   plants/idempotent-creates.service.ts (INSERT_PLANT, in the transaction that stores the key);
 *   and by the trigger probe of database/plant-event-triggers.ts, a row no token can name, in a
 *   transaction rolled back;
 * - the plant events: asked of the outbox (createPlant, deletePlant) by those two files of plants/
 *   alone; event_outbox rows are written by events/outbox.service.ts and by the plants table's
 *   triggers (database/plant-event-triggers.ts), and deleted by the relay once published
 *   (events/outbox-relay.ts).
 *
 * The files are read by TypeScript's parser (test/support/source-writes.ts, as the store
 * catalogue's door spec): SQL counts in strings only, a TypeORM write by its call. Migrations are
 * left out: they run before any writer.
 */
describe('plants and their events are written in known places only', () => {
  const root = new URL('../..', import.meta.url).pathname;
  const src = join(root, 'src');

  const PLANTS: Writes = { tables: ['plants', 'event_outbox'], entities: ['Plant'], events: ['createPlant', 'deletePlant'] };
  const writesIn = (file: string, text: string, statements?: ReadonlySet<string>) => writesOf(file, text, PLANTS, statements);
  /** The constants of a file holding SQL that writes plants (INSERT_PLANT …): a file that imports one runs a plant write. */
  const plantStatements = (file: string, text: string) => sqlConstants(file, text, ['plants']);

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
    expect(writesIn('s', 'await this.outbox.deletePlant(team, id, actor, write);')).toEqual(['s: the event deletePlant']);
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
    const files = new Map(writerSources(src).map((path) => [relative(root, path), readFileSync(path, 'utf8')]));
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
      'src/plants/idempotent-creates.service.ts: runs INSERT_PLANT',
      'src/plants/idempotent-creates.service.ts: the event createPlant',
      'src/plants/plants.service.ts: SQL writing plants',
      'src/plants/plants.service.ts: the event createPlant',
      'src/plants/plants.service.ts: the event deletePlant',
    ]);
  });
});
