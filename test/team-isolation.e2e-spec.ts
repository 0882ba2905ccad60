import fc from 'fast-check';
import { Plant } from '../src/plants/plant.entity.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

const TEAMS = ['acme', 'globex', 'initech'] as const;
type Team = (typeof TEAMS)[number];
type Op = { kind: 'create'; team: Team; id?: number; name: string } | { kind: 'delete'; team: Team; id: number } | { kind: 'list'; team: Team };

const team = fc.constantFrom(...TEAMS);
// Few ids, so that teams often hold the same id and collide with themselves and each other.
const id = fc.integer({ min: 1, max: 6 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), team, id: fc.option(id, { nil: undefined }), name: fc.constantFrom('Fern', 'Moss', 'Ivy', 'Aloe 🌵') }),
  fc.record({ kind: fc.constant('delete' as const), team, id }),
  fc.record({ kind: fc.constant('list' as const), team }),
);

/**
 * Property: whatever teams do, in whatever order, a caller lists exactly its team's plants and
 * deletes only its team's plants. Checked against a model after every step, and the database
 * after every step as well.
 */
describe('team isolation (property-based)', () => {
  let t: TestApp;
  const tokens = {} as Record<Team, string>;

  beforeAll(async () => {
    t = await createTestApp({ env: { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', OIDC_ISSUER: '', REDIS_URL: '' } });
    for (const name of TEAMS) tokens[name] = await t.tokenFor(name);
  });
  afterAll(() => t.close());

  it('no caller ever lists or deletes a plant of another team', async () => {
    const repo = t.dataSource.getRepository(Plant);
    await fc.assert(
      fc
        .asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
          const model = new Map<Team, Map<number, string>>(TEAMS.map((name) => [name, new Map()]));
          for (const step of ops) {
            const mine = model.get(step.team)!;
            const auth = bearer(tokens[step.team]);
            if (step.kind === 'create') {
              const res = await t.http
                .post('/plants')
                .set(auth)
                .send(step.id === undefined ? { name: step.name } : { id: step.id, name: step.name });
              const expectedId = step.id ?? Math.max(0, ...mine.keys()) + 1;
              if (step.id !== undefined && mine.has(step.id)) {
                expect(res.status).toBe(409);
              } else {
                expect(res.status).toBe(201);
                expect(res.headers.location).toBe(`/plants/${expectedId}`);
                mine.set(expectedId, step.name);
              }
            } else if (step.kind === 'delete') {
              const res = await t.http.delete(`/plants/${step.id}`).set(auth);
              expect(res.status).toBe(mine.delete(step.id) ? 204 : 404);
            } else {
              const res = await t.http.get('/plants?limit=1000').set(auth);
              expect(res.status).toBe(200);
              expect(res.body).toEqual([...mine].sort(([a], [b]) => a - b).map(([, name]) => ({ name })));
            }
            const rows = await repo.find({ order: { team: 'ASC', id: 'ASC' } });
            const expected = TEAMS.flatMap((name) => [...model.get(name)!].map(([plantId, plantName]) => ({ team: name, id: plantId, name: plantName })));
            expect(rows.map(({ team: rowTeam, id: rowId, name }) => ({ team: rowTeam, id: Number(rowId), name }))).toEqual(
              expected.sort((a, b) => a.team.localeCompare(b.team) || a.id - b.id),
            );
          }
        })
        .beforeEach(async () => {
          await repo.clear();
        }),
      { numRuns: 30 },
    );
  });
});
