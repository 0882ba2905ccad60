import { readFileSync } from 'node:fs';
import { FakeRouters } from './support/fake-routers.js';
import { importStores, storesCsv, type StoreInput } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

/**
 * Every shape of POST /locations/nearest's answer, byte for byte and with its headers, as
 * test/fixtures/search-answers.json holds them: plain (the default distance, a radius, kilometres),
 * nearest_if_none (the nearest store, and the radius answer when some are in range), a region
 * (state, city), open_at and open_only, and travel_mode with the engine's legs (unreachable stores
 * last, max_travel_time, kilometres, a region, a moment), with the engine failing (the straight-line
 * answer) and with ROUTER=off (the same straight-line answer). The answers were recorded before the
 * search became one pipeline (the build of a1e6498); a change to the way answers are written shows here first. Each search is
 * asked twice: the second answer, kept or worked out again, is the same bytes.
 */
const ENV = { TOKEN_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT_PER_MINUTE: '0', REDIS_URL: '', OIDC_ISSUER: '' };
const WANTED = JSON.parse(readFileSync(new URL('fixtures/search-answers.json', import.meta.url), 'utf8')) as Record<string, Recorded>;

interface Recorded {
  headers: Record<string, string | null>;
  body: string;
}

/** The stand-in router's roads (test/support/fake-routers.ts): 39.333 is across a river, 39.2777 on a road to nowhere, 39.555 off any road. */
const STORES: StoreInput[] = [
  { code: 'ACROSS', name: 'Across the River', lat: 39.333, lng: -94.6 },
  { code: 'DOWN', name: 'Down "the" Road – Café', lat: 39.3, lng: -94.6, hours: { wednesday: 'Closed' } },
  { code: 'FAR', name: 'Further Down', lat: 39.25, lng: -94.6, special: '2026-11-25=7:00 AM - 9:00 AM' },
  { code: 'DEAD', name: 'Dead End', lat: 39.2777, lng: -94.6 },
  { code: 'FIELD', name: 'In a Field', lat: 39.555, lng: -94.6 },
  { code: 'KS-1', name: 'Kansas Side', lat: 39.1, lng: -94.62, city: 'Kansas City', state: 'KS', zip: '66101' },
].map((store) => ({ city: 'Kansas City', state: 'MO', zip: '64105', ...store }));

const AT = { lat: 39.32, lng: -94.6 };
/** Never routed before the engine fails: no leg of it is kept. */
const FAILING_AT = { lat: 39.3211, lng: -94.6 };
/** 40 miles south of every store. */
const FAR_SOUTH = { lat: 38.5, lng: -94.6 };
const MOMENT = { open_at: '2026-11-25T12:00:00-06:00' };

const from = (point: { lat: number; lng: number }, extra: object = {}) => ({ customer_address: { zip: '64105', ...point }, ...extra });
const DRIVING = { travel_mode: 'driving' };

/** The searches of every answer shape but those through the engine: answered alike with the engine on or off. */
const SEARCHES: Array<[string, object]> = [
  ['plain, the default distance', { customer_address: { zip: '64105' } }],
  ['plain, 10 miles, limit 3', from(AT, { max_distance: 10, limit: 3 })],
  ['plain, nothing in range', from(FAR_SOUTH, { max_distance: 1 })],
  ['kilometres', from(AT, { max_distance: 20, distance_unit: 'km' })],
  ['nearest_if_none, none in range', from(FAR_SOUTH, { max_distance: 5, nearest_if_none: true })],
  ['nearest_if_none in kilometres, none in range', from(FAR_SOUTH, { max_distance: 5, nearest_if_none: true, distance_unit: 'km' })],
  ['nearest_if_none, some in range', from(AT, { max_distance: 3, nearest_if_none: true })],
  ['region, a state', from(AT, { region: { state: 'MO' }, limit: 4 })],
  ['region, a city', from(AT, { region: { state: 'ks', city: ' kansas CITY ' } })],
  ['region in kilometres, open_only', from(AT, { region: { state: 'MO' }, distance_unit: 'km', ...MOMENT, open_only: true })],
  ['open_at', from(AT, { max_distance: 20, ...MOMENT })],
  ['open_at, open_only', from(AT, { max_distance: 20, ...MOMENT, open_only: true })],
  ['open_at, nearest_if_none, none in range', from(FAR_SOUTH, { max_distance: 5, nearest_if_none: true, ...MOMENT })],
];

/** travel_mode searches, each answered by the engine, and in straight-line order when it fails or is off. */
const TRAVEL: Array<[string, object]> = [
  ['travel', { max_distance: 40 }],
  ['travel, limit 2', { max_distance: 40, limit: 2 }],
  ['travel, max_travel_time', { max_distance: 40, max_travel_time: 4 }],
  ['travel in kilometres', { max_distance: 30, distance_unit: 'km' }],
  ['travel, a region', { region: { state: 'MO' } }],
  ['travel, open_at', { max_distance: 40, ...MOMENT }],
  ['travel, open_only', { max_distance: 40, ...MOMENT, open_only: true }],
  ['travel, nothing in range', { max_distance: 0.1 }],
];

/** The search asked twice: the answer, the second one the same bytes. */
async function answer(app: TestApp, token: string, body: object): Promise<Recorded> {
  const ask = async () => {
    const res = await app.http.post('/locations/nearest').set(bearer(token)).send(body);
    expect(res.status).toBe(200);
    const headers = Object.fromEntries(
      ['content-type', 'customer-position', 'distance-unit', 'search-scope', 'travel-source'].map((name) => [name, res.headers[name] ?? null]),
    );
    return { headers, body: res.text };
  };
  const first = await ask();
  expect(await ask()).toEqual(first);
  return first;
}

function check(name: string, got: Recorded): void {
  expect([name, got]).toEqual([name, WANTED[name]]);
}

/** An app (one at a time: each sets the process's settings, ROUTER among them) with the stores, and a team's token. */
async function appWith(env: Record<string, string>): Promise<{ app: TestApp; token: string }> {
  const app = await createTestApp({ env: { ...ENV, ...env } });
  await importStores(app, storesCsv(STORES));
  return { app, token: await app.tokenFor('shop') };
}

describe('POST /locations/nearest: every answer shape, byte for byte', () => {
  describe('without one (ROUTER=off)', () => {
    let t: { app: TestApp; token: string };
    beforeAll(async () => {
      t = await appWith({ ROUTER: 'off' });
    });
    afterAll(async () => {
      await t?.app.close();
    });

    it.each(SEARCHES)('%s: as recorded', async (name, body) => {
      check(name, await answer(t.app, t.token, body));
    });

    it.each(TRAVEL)('%s: as recorded, in straight-line order', async (name, extra) => {
      check(`${name}, ROUTER=off`, await answer(t.app, t.token, from(FAILING_AT, { ...DRIVING, ...extra })));
    });
  });

  describe('with a routing engine (ROUTER=osrm, the stand-in)', () => {
    let fake: FakeRouters;
    let t: { app: TestApp; token: string };
    beforeAll(async () => {
      fake = await new FakeRouters().start();
      t = await appWith({ ROUTER: 'osrm', ROUTER_URL: fake.url, ROUTER_TIMEOUT_MS: '2000', ROUTER_BREAKER_FAILURES: '100' });
    });
    afterAll(async () => {
      await t?.app.close();
      await fake?.stop();
      for (const key of ['ROUTER', 'ROUTER_URL', 'ROUTER_TIMEOUT_MS', 'ROUTER_BREAKER_FAILURES']) delete process.env[key];
    });
    beforeEach(() => {
      fake.behaviour = 'ok';
    });

    it.each(SEARCHES)('%s: as recorded, the same as without one', async (name, body) => {
      check(name, await answer(t.app, t.token, body));
    });

    it.each(TRAVEL)("%s: as recorded, in the engine's order; in straight-line order when it fails, the body of ROUTER=off", async (name, extra) => {
      check(name, await answer(t.app, t.token, from(AT, { ...DRIVING, ...extra })));
      fake.behaviour = 'status:503';
      const failed = await answer(t.app, t.token, from(FAILING_AT, { ...DRIVING, ...extra }));
      check(`${name}, the engine failing`, failed);
      // Two ways to the straight-line answer, one body.
      expect(failed.body).toBe(WANTED[`${name}, ROUTER=off`].body);
    });
  });

  it('holds a recorded answer for every search and no other', () => {
    const names = [...SEARCHES.map(([name]) => name), ...TRAVEL.flatMap(([name]) => [name, `${name}, the engine failing`, `${name}, ROUTER=off`])];
    expect(Object.keys(WANTED).sort()).toEqual(names.sort());
  });
});
