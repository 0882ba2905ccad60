import { ConflictException } from '@nestjs/common';
import { Plant } from '../../src/plants/plant.entity.js';
import { MAX_PLANT_ID } from '../../src/plants/plant-id.js';
import { PlantsModule } from '../../src/plants/plants.module.js';
import { PlantsService } from '../../src/plants/plants.service.js';
import { newMediumContext, type MediumContext } from './medium.factory.js';

const NO_ID_LEFT = new ConflictException(`no plant id is left above ${MAX_PLANT_ID}; give an id explicitly`);

describe(PlantsService.name, () => {
  let ctx: MediumContext;
  let sut: PlantsService;
  const rows = (team: string) => ctx.dataSource.getRepository(Plant).find({ where: { team }, order: { id: 'ASC' } });
  const ids = async (team: string) => (await rows(team)).map((plant) => plant.id);

  beforeAll(async () => {
    ctx = await newMediumContext(PlantsModule);
    sut = ctx.module.get(PlantsService);
  });
  afterAll(() => ctx.close());
  beforeEach(() => ctx.dataSource.getRepository(Plant).clear());

  describe('create without an id', () => {
    it("takes the team's highest id + 1 (not the first gap), each team counting on its own, and returns the stored plant", async () => {
      await sut.create('acme', { id: 3, name: 'three' });
      await sut.create('acme', { id: 10, name: 'ten' });
      await expect(sut.create('acme', { name: 'next', tag: 'fern' })).resolves.toEqual({ team: 'acme', id: 11, name: 'next', tag: 'fern' });
      await expect(sut.create('rival', { name: 'first' })).resolves.toEqual({ team: 'rival', id: 1, name: 'first', tag: null });
      await expect(rows('acme')).resolves.toMatchObject([{ id: 3 }, { id: 10 }, { id: 11, name: 'next', tag: 'fern' }]);
      await expect(rows('rival')).resolves.toMatchObject([{ id: 1, name: 'first', tag: null }]);
    });

    it('gives the id of a deleted highest plant to the next create', async () => {
      for (const name of ['a', 'b', 'c']) await sut.create('acme', { name });
      await sut.remove('acme', 3);
      await expect(sut.create('acme', { name: 'd' })).resolves.toMatchObject({ id: 3, name: 'd' });
      await expect(rows('acme')).resolves.toMatchObject([
        { id: 1, name: 'a' },
        { id: 2, name: 'b' },
        { id: 3, name: 'd' },
      ]);
    });

    it('assigns 2^53 - 1 itself, then refuses with ConflictException and writes nothing', async () => {
      await sut.create('acme', { id: MAX_PLANT_ID - 1, name: 'second last' });
      await expect(sut.create('acme', { name: 'last' })).resolves.toMatchObject({ id: MAX_PLANT_ID });
      await expect(sut.create('acme', { name: 'one more' })).rejects.toThrow(NO_ID_LEFT);
      await expect(ids('acme')).resolves.toEqual([MAX_PLANT_ID - 1, MAX_PLANT_ID]);
      // Another team is not concerned.
      await expect(sut.create('rival', { name: 'first' })).resolves.toMatchObject({ id: 1 });
    });

    it("goes on assigning after a refusal: the team's queue is not left blocked", async () => {
      await sut.create('acme', { id: MAX_PLANT_ID, name: 'last' });
      const refused = await Promise.allSettled([sut.create('acme', { name: 'x' }), sut.create('acme', { name: 'y' })]);
      expect(refused).toEqual([
        { status: 'rejected', reason: NO_ID_LEFT },
        { status: 'rejected', reason: NO_ID_LEFT },
      ]);
      await sut.remove('acme', MAX_PLANT_ID);
      await expect(sut.create('acme', { name: 'again' })).resolves.toMatchObject({ id: 1, name: 'again' });
      await expect(rows('acme')).resolves.toMatchObject([{ id: 1, name: 'again' }]);
    });

    it('gives concurrent creates of two teams distinct ids, 1 to n in each team', async () => {
      const n = 20;
      const created = await Promise.all(Array.from({ length: 2 * n }, (_, i) => sut.create(i % 2 ? 'acme' : 'rival', { name: `p${i}` })));
      const sequence = Array.from({ length: n }, (_, i) => i + 1);
      for (const team of ['acme', 'rival']) {
        const mine = created.filter((plant) => plant.team === team);
        expect(mine.map((plant) => plant.id).sort((a, b) => a - b)).toEqual(sequence);
        await expect(ids(team)).resolves.toEqual(sequence);
        // Each returned plant is the row stored under its id.
        const stored = new Map((await rows(team)).map((plant) => [plant.id, plant.name]));
        for (const plant of mine) expect(stored.get(plant.id)).toBe(plant.name);
      }
    });

    it('given ids racing assignments: every assignment succeeds, a given id either wins or is refused, no id twice', async () => {
      const assigned = Array.from({ length: 12 }, (_, i) => sut.create('acme', { name: `assigned ${i}` }));
      // Fired once the assignments are under way, at the very ids they are about to take.
      await assigned[0];
      const given = Array.from({ length: 12 }, (_, k) => sut.create('acme', { id: k + 2, name: `given ${k + 2}` }));
      const [assignedResults, givenResults] = await Promise.all([Promise.allSettled(assigned), Promise.allSettled(given)]);

      expect(assignedResults.map((result) => (result.status === 'rejected' ? String(result.reason) : result.status))).toEqual(Array(12).fill('fulfilled'));
      givenResults.forEach((result, k) => {
        if (result.status === 'rejected') expect(result.reason).toEqual(new ConflictException(`plant ${k + 2} already exists`));
        else expect(result.value).toMatchObject({ id: k + 2 });
      });
      const created = [...assignedResults, ...givenResults].flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      const createdIds = created.map((plant) => plant.id).sort((a, b) => a - b);
      expect(new Set(createdIds).size).toBe(createdIds.length);
      await expect(ids('acme')).resolves.toEqual(createdIds);
      const stored = new Map((await rows('acme')).map((plant) => [plant.id, plant.name]));
      for (const plant of created) expect(stored.get(plant.id)).toBe(plant.name);
    });
  });
});
