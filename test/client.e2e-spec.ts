import { readFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { createPlantStoreClient, type PlantResponse, type paths } from '../clients/typescript/index.js';
import { Plant } from '../src/plants/plant.entity.js';
import { Store } from '../src/stores/store.entity.js';
import { TokensService } from '../src/tokens/tokens.service.js';
import { openApiDocument, responseChecker } from './support/openapi.js';
import { startServer, type ServerProcess } from './support/server.js';
import { importStores, storesCsv } from './support/stores.js';
import { createTestApp, type TestApp } from './support/test-app.js';

const committed = (file: string) => readFileSync(new URL(`../clients/typescript/${file}`, import.meta.url), 'utf8');

/**
 * The typed client of clients/typescript: its document and types are those of the service
 * now (npm run client:generate), and it drives every operation against the real service
 * listening on a port.
 */
describe('a client generated from the OpenAPI document', () => {
  let t: TestApp;
  let server: ServerProcess;
  let client: ReturnType<typeof createPlantStoreClient>;
  const problems: string[] = [];

  beforeAll(async () => {
    t = await createTestApp();
    await importStores(t, storesCsv([{ code: 'S1', name: 'Chelsea Ferns', lat: 40.7506, lng: -73.9973, zip: '10001' }]));
    const token = await t.tokenFor('acme');
    server = await startServer(t.database);
    client = createPlantStoreClient({ baseUrl: server.url, token, headers: { 'X-Request-Id': 'client-e2e' } });
    // The typed client's responses must satisfy the document too.
    const checker = responseChecker(await openApiDocument());
    client.use({
      async onResponse({ request, response }) {
        const text = await response.clone().text();
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        const problem = checker.problem({
          method: request.method,
          url: request.url,
          status: response.status,
          headers: Object.fromEntries(response.headers),
          body,
          text,
        });
        if (problem) problems.push(problem);
      },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await t?.close();
  });
  afterEach(() => expect(problems).toEqual([]));

  it('is generated from the document the service publishes now (regenerate: npm run client:generate)', async () => {
    const live = await openApiDocument();
    expect(JSON.parse(committed('openapi.json'))).toEqual(JSON.parse(JSON.stringify(live)));
    expect(committed('schema.d.ts')).toContain(astToString(await openapiTS(JSON.parse(JSON.stringify(live)), { defaultNonNullable: false })));
  });

  it('creates, lists and deletes plants', async () => {
    const created = await client.POST('/plants', { body: { name: 'Monstera', tag: 'tropical', id: 7 } });
    expect(created.response.status).toBe(201);
    expect(created.data).toEqual({ name: 'Monstera', tag: 'tropical' });
    expect(created.response.headers.get('location')).toBe('/plants/7');
    // The generated types know that a plant in a response has no id (spec §2); `npm run lint`
    // (tsc) fails on an unused @ts-expect-error or on a key missing from or added to this record.
    // @ts-expect-error PlantResponse has no id
    expect(created.data?.id).toBeUndefined();
    const plantResponseKeys: Record<keyof PlantResponse, true> = { name: true, tag: true };
    expect(Object.keys(created.data!)).toEqual(Object.keys(plantResponseKeys));
    // The caller's headers are kept beside the token.
    expect(created.response.headers.get('x-request-id')).toBe('client-e2e');

    const assigned = await client.POST('/plants', { body: { name: 'Cactus' } });
    expect(assigned.response.status).toBe(201);
    expect(assigned.response.headers.get('location')).toBe('/plants/8');
    await expect(t.dataSource.getRepository(Plant).find({ order: { id: 'ASC' } })).resolves.toMatchObject([
      { team: 'acme', id: 7, name: 'Monstera', tag: 'tropical' },
      { team: 'acme', id: 8, name: 'Cactus', tag: null },
    ]);

    const duplicate = await client.POST('/plants', { body: { name: 'Again', id: 7 } });
    expect(duplicate.response.status).toBe(409);
    expect(duplicate.error).toEqual({ error: 409, message: 'plant 7 already exists' });

    const page = await client.GET('/plants', { params: { query: { limit: 1 } } });
    expect(page.response.status).toBe(200);
    expect(page.data).toEqual([{ name: 'Monstera', tag: 'tropical' }]);
    expect(page.response.headers.get('link')).toBe('</plants?limit=1&after=7>; rel="next"');

    const removed = await client.DELETE('/plants/{id}', { params: { path: { id: 7 } } });
    expect(removed.response.status).toBe(204);
    const missing = await client.DELETE('/plants/{id}', { params: { path: { id: 7 } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ error: 404, message: 'plant 7 not found' });
    await expect(t.dataSource.getRepository(Plant).find()).resolves.toMatchObject([{ id: 8, name: 'Cactus' }]);

    const rest = await client.GET('/plants');
    expect(rest.data).toEqual([{ name: 'Cactus' }]);
  });

  it('finds the nearest locations', async () => {
    const { data, error, response } = await client.POST('/locations/nearest', { body: { customer_address: { zip: '10001' }, max_distance: 2 } });
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    expect(data?.Code).toBe('Success');
    expect(data?.locations).toHaveLength(1);
    const [store] = data!.locations;
    expect(store).toMatchObject({ name: 'Chelsea Ferns', zip: '10001', lat: '40.750600', lng: '-73.997300', business_hours: { Sunday: 'Closed' } });
    expect(typeof store.distance).toBe('number');

    const bad = await client.POST('/locations/nearest', { body: { customer_address: { zip: '00000' } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error).toEqual({ error: 400, message: 'unknown ZIP code 00000' });
  });

  it('drives the admin API with an admin token: issue a token, list it, upsert and read a store', async () => {
    const { token: adminToken } = await t.app.get(TokensService).create({ team: 'ops', scope: 'admin' });
    const admin = createPlantStoreClient({ baseUrl: server.url, token: adminToken });
    const issued = await admin.POST('/admin/tokens', { body: { team: 'partner', scope: 'read' } });
    expect(issued.response.status).toBe(201);
    expect(issued.data).toMatchObject({ team: 'partner', scope: 'read', token: expect.stringMatching(/^pst_/) as string });
    const listed = await admin.GET('/admin/tokens', { params: { query: { team: 'partner' } } });
    expect(listed.data?.map((row) => row.id)).toEqual([issued.data!.id]);
    const hours = { monday: 'Closed', tuesday: 'Closed', wednesday: 'Closed', thursday: 'Closed', friday: 'Closed', saturday: 'Closed', sunday: 'Closed' };
    const put = await admin.PUT('/admin/stores/{code}', {
      params: { path: { code: 'CL-1' } },
      body: { name: 'Client Store', address: '1 Test Street', city: 'New York', state: 'NY', zip: '10001', ...hours },
    });
    expect(put.response.status).toBe(201);
    const read = await admin.GET('/admin/stores/{code}', { params: { path: { code: 'CL-1' } } });
    expect(read.data).toMatchObject({ code: 'CL-1', name: 'Client Store', sunday: 'Closed' });
    await expect(t.dataSource.getRepository(Store).findOneBy({ code: 'CL-1' })).resolves.toMatchObject({ name: 'Client Store' });
    const refused = await client.GET('/admin/tokens');
    expect(refused.response.status).toBe(403);
  });

  it('gets the Error body for a missing token', async () => {
    const anonymous = createClient<paths>({ baseUrl: server.url });
    const { error, response } = await anonymous.GET('/plants');
    expect(response.status).toBe(401);
    expect(error).toEqual({ error: 401, message: 'missing bearer token' });
  });
});
