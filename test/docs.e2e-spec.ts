import { readFileSync } from 'node:fs';
import type { HeaderObject, OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { Plant } from '../src/plants/plant.entity.js';
import { importStores } from './support/stores.js';
import { bearer, createTestApp, type TestApp } from './support/test-app.js';

type Schema = { type?: string; format?: string; properties?: Record<string, Schema>; required?: string[]; items?: Schema; $ref?: string; writeOnly?: boolean };

describe('OpenAPI document and Swagger UI', () => {
  let t: TestApp;
  let doc: {
    openapi: string;
    info: { version: string };
    paths: Record<
      string,
      Record<
        string,
        {
          security?: unknown;
          parameters?: Array<{ name: string; in: string; schema: Schema }>;
          responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
        }
      >
    >;
    components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { type: string; scheme: string }> };
  };

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get('/docs-json').expect(200)).body;
  });
  afterAll(() => t.close());

  const operations = [
    ['post', '/locations/nearest'],
    ['post', '/plants'],
    ['get', '/plants'],
    ['delete', '/plants/{id}'],
  ] as const;

  it('is OpenAPI 3, version 1.0.0, with a bearer scheme', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it.each(operations)('%s %s requires the bearer token and documents its errors with the Error body', (method, path) => {
    const op = doc.paths[path][method];
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(op.responses['401'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    const errors = Object.entries(op.responses).filter(([status]) => Number(status) >= 400);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    for (const [, response] of errors) expect(response.content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
  });

  it('documents the success of each operation as the spec and contract say', () => {
    expect(doc.paths['/locations/nearest'].post.responses['200'].content!['application/json'].schema).toEqual({
      $ref: '#/components/schemas/NearestLocationsResponse',
    });
    expect(doc.paths['/plants'].post.responses['201'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/PlantResponse' });
    expect(doc.paths['/plants'].get.responses['200'].content!['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/PlantResponse' },
    });
    expect(doc.paths['/plants/{id}'].delete.responses['204'].content).toBeUndefined();
    expect(doc.paths['/plants'].post.responses['409']).toBeDefined();
    expect(doc.paths['/plants/{id}'].delete.responses['404']).toBeDefined();
  });

  it('documents the limit query parameter of the plant list, its default in words', () => {
    const limit = doc.paths['/plants'].get.parameters!.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 1000 },
      description: expect.stringContaining('Default: 100.'),
    });
  });

  it("has the spec's schemas with their fields and types", () => {
    const s = doc.components.schemas;
    expect(s.Error).toMatchObject({ required: ['error', 'message'], properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } } });
    expect(Object.keys(s.NearestLocationsResponse.properties!)).toEqual(['Code', 'locations']);
    expect(s.NearestLocationsResponse.properties!.locations).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Location' } });
    // The spec's fields, then the four that only a search with open_at carries, the two of travel_mode, and the five of include.
    expect(Object.keys(s.Location.properties!)).toEqual([
      'name',
      'address',
      'city',
      'state',
      'zip',
      'business_hours',
      'lat',
      'lng',
      'distance',
      'open',
      'time_zone',
      'next_change',
      'hours_today',
      'travel_time',
      'travel_distance',
      'code',
      'phone',
      'website',
      'email',
      'services',
    ]);
    expect(s.Location.required).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']);
    expect(s.Location.properties!.lat.type).toBe('string');
    expect(s.Location.properties!.lng.type).toBe('string');
    expect(s.Location.properties!.distance).toMatchObject({ type: 'number', format: 'float' });
    expect(Object.keys(s.BusinessHours.properties!)).toEqual(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']);
    expect(s.BusinessHours.required).toHaveLength(7);
    expect(s.NearestLocationsRequest.required).toEqual(['customer_address']);
    expect(s.CustomerAddress.required).toEqual(['zip']);
    expect(s.CustomerAddress.properties!.zip.type).toBe('string');
    expect(s.Plant).toMatchObject({
      required: ['name'],
      properties: { name: { type: 'string' }, id: { type: 'integer', writeOnly: true }, tag: { type: 'string' } },
    });
    expect(s.PlantResponse).toEqual(expect.objectContaining({ type: 'object', required: ['name'] }));
    expect(Object.keys(s.PlantResponse.properties!)).toEqual(['name', 'tag']);
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await t.http.get('/docs');
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger-ui');
  });
});

// Apart from the block above, so that its app is closed first: one app at a time in the process.
describe('OpenAPI document and Swagger UI', () => {
  it('is switched off by DOCS_ENABLED=false', async () => {
    const off = await createTestApp({ env: { DOCS_ENABLED: 'false' } });
    try {
      const res = await off.http.get('/docs-json');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: 'no route for GET /docs-json' });
    } finally {
      await off.close();
    }
  });
});

const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { license: string; author: { name: string } };
const DEMO_STORES = readFileSync(new URL('../assets/demo-stores.csv', import.meta.url), 'utf8');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** What a client team meets first: names, servers, headers, and examples that work. */
describe('the published OpenAPI document, as a client team meets it', () => {
  let t: TestApp;
  let doc: OpenAPIObject;
  let token: string;
  const operation = (method: string, path: string) => (doc.paths[path] as Record<string, OperationObject>)[method];
  const all = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      METHODS.flatMap((method) => {
        const op = (item as Record<string, OperationObject | undefined>)[method];
        return op ? [{ method, path, op }] : [];
      }),
    );
  const schema = (s: SchemaObject | ReferenceObject): SchemaObject => ('$ref' in s ? (doc.components!.schemas![s.$ref.split('/').pop()!] as SchemaObject) : s);

  /**
   * The value Swagger UI fills a JSON body with (its sample of the schema): a property's
   * `example`, else its default, else a sample by type; every property, optional and
   * write-only ones included.
   */
  const sample = (given: SchemaObject | ReferenceObject): unknown => {
    const s = schema(given);
    if (s.example !== undefined) return s.example;
    if (s.allOf) return Object.assign({}, ...s.allOf.map(sample));
    if (s.default !== undefined) return s.default;
    if (s.type === 'object' || s.properties) return Object.fromEntries(Object.entries(s.properties ?? {}).map(([name, p]) => [name, sample(p)]));
    if (s.type === 'array') return [sample(s.items!)];
    return { string: 'string', integer: 0, number: 0, boolean: true }[s.type as string];
  };
  /** The body Swagger UI fills in: the first of the body's named examples when it has some, else its sample of the schema. */
  const bodyExample = (op: OperationObject) => {
    const { schema: bodySchema, examples } = (
      op.requestBody as { content: Record<string, { schema: SchemaObject; examples?: Record<string, { value: unknown }> }> }
    ).content['application/json'];
    return examples ? Object.values(examples)[0].value : sample(bodySchema);
  };
  /** The value Swagger UI prefills a parameter with: its example(s), else the schema's example, else the schema's default. */
  const prefill = (p: ParameterObject): unknown => {
    const examples = Object.values(p.examples ?? {}) as Array<{ value?: unknown }>;
    const s = p.schema ? schema(p.schema) : {};
    return examples[0]?.value ?? p.example ?? s.example ?? s.default;
  };

  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get('/docs-json').expect(200)).body;
    token = await t.tokenFor('demo');
    await importStores(t, DEMO_STORES);
  });
  afterAll(() => t.close());

  it('names each operation of the spec for generated clients', () => {
    expect(operation('post', '/locations/nearest').operationId).toBe('findNearestLocations');
    expect(operation('post', '/plants').operationId).toBe('createPlant');
    expect(operation('get', '/plants').operationId).toBe('listPlants');
    expect(operation('delete', '/plants/{id}').operationId).toBe('deletePlant');
    const ids = all().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
  });

  it('has a relative server, a description for every tag, and the license and contact of package.json', () => {
    expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    const used = new Set(all().flatMap(({ op }) => op.tags ?? []));
    expect([...used].sort()).toEqual(['admin', 'health', 'locations', 'plants']);
    for (const name of used) expect(doc.tags!.find((tag) => tag.name === name)?.description).toEqual(expect.stringMatching(/\w/));
    expect(doc.info.license).toEqual({ name: PACKAGE.license });
    expect(doc.info.contact).toEqual({ name: PACKAGE.author.name });
  });

  it('documents on every response exactly the headers the contract says it carries', () => {
    const wrong: unknown[] = [];
    for (const { method, path, op } of all()) {
      const authenticated = (op.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
      for (const [status, response] of Object.entries(op.responses) as Array<[string, ResponseObject]>) {
        const expected = ['X-Request-Id', 'Cache-Control'];
        if (authenticated && status !== '401') expected.push('RateLimit-Policy', 'RateLimit');
        const admin = path.startsWith('/admin/');
        if (status === '201') expected.push('Location');
        if (admin && method === 'get' && ['/admin/tokens', '/admin/stores'].includes(path) && status === '200') expected.push('Link');
        if (status === '401') expected.push('WWW-Authenticate');
        if (status === '429') expected.push('Retry-After');
        if (method === 'get' && path === '/plants' && status === '200') expected.push('Link');
        if (['/locations/nearest', '/admin/locations/nearest'].includes(path) && status === '200')
          expected.push('Customer-Position', 'Distance-Unit', 'Search-Scope', 'Travel-Source');
        if (path === '/admin/stores.csv' && method === 'post' && ['200', '412'].includes(status)) expected.push('ETag');
        if (path === '/admin/stores.csv' && method === 'post' && status === '200') expected.push('Preference-Applied');
        // A store's page may be cached (its own Cache-Control), by its ETag, per form (Vary: Accept).
        const page = path === '/locations/{code}' && ['200', '304'].includes(status);
        if (page) expected.push('ETag', 'Vary');
        const headers = response.headers ?? {};
        const documented = Object.keys(headers).sort();
        if (JSON.stringify(documented) !== JSON.stringify(expected.sort())) wrong.push({ where: `${method} ${path} ${status}`, documented, expected });
        // Each is described once, under components.headers; the admin API's Location and Link apart from the plants'.
        for (const [name, header] of Object.entries(headers)) {
          const component =
            admin && ['Location', 'Link'].includes(name)
              ? `Admin${name}`
              : page && ['Cache-Control', 'ETag', 'Vary'].includes(name)
                ? `StorePage${name.replace('-', '')}`
                : name;
          const definition = doc.components!.headers![component] as HeaderObject | undefined;
          if (!('$ref' in header) || header.$ref !== `#/components/headers/${component}` || !definition?.description || !definition.schema)
            wrong.push({ where: `${method} ${path} ${status}`, header: name });
        }
      }
    }
    expect(wrong).toEqual([]);
    // Always sent where documented: required. Sent only sometimes: not required.
    const required = Object.entries(doc.components!.headers! as Record<string, HeaderObject>)
      .filter(([, h]) => h.required)
      .map(([name]) => name);
    expect(required.sort()).toEqual([
      'AdminLocation',
      'Cache-Control',
      'Customer-Position',
      'Distance-Unit',
      'ETag',
      'Location',
      'Retry-After',
      'Search-Scope',
      'StorePageCacheControl',
      'StorePageETag',
      'StorePageVary',
      'WWW-Authenticate',
      'X-Request-Id',
    ]);
  });

  it('documents the body errors a probe really answers (a probe sent a body)', async () => {
    const notJson = await t.http.get('/health/live').set('Content-Type', 'text/plain').send('x');
    expect(notJson.status).toBe(415);
    const broken = await t.http.get('/health/ready').set('Content-Type', 'application/json').send('{"a":');
    expect(broken.status).toBe(400);
    expect(Object.keys(operation('get', '/health/live').responses).sort()).toEqual(['200', '400', '413', '415']);
    expect(Object.keys(operation('get', '/health/ready').responses).sort()).toEqual(['200', '400', '413', '415', '503']);
  });

  it("leaves the list's optional filters empty in Swagger UI and gives DELETE the create example's id", () => {
    const parameters = (operation('get', '/plants').parameters ?? []) as ParameterObject[];
    expect(parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ['limit', 'query', false],
      ['tag', 'query', false],
      ['after', 'query', false],
    ]);
    for (const p of parameters) expect({ name: p.name, prefill: prefill(p) }).toEqual({ name: p.name, prefill: undefined });
    const [id] = (operation('delete', '/plants/{id}').parameters ?? []) as ParameterObject[];
    expect(id).toMatchObject({ name: 'id', in: 'path', required: true });
    expect(prefill(id)).toBe((bodyExample(operation('post', '/plants')) as { id: number }).id);
  });

  it('gives what a first-time user expects when each operation is sent with the examples Swagger UI fills in', async () => {
    const body = bodyExample(operation('post', '/plants')) as { id: number; name: string; tag: string };
    expect(body).toEqual({ name: expect.any(String), id: expect.any(Number), tag: expect.any(String) });
    const created = await t.http.post('/plants').set(bearer(token)).send(body);
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe(`/plants/${body.id}`);
    await expect(t.dataSource.getRepository(Plant).find()).resolves.toMatchObject([{ team: 'demo', id: body.id, name: body.name, tag: body.tag }]);

    // No prefilled filter: the request is the bare path.
    const listed = await t.http.get('/plants').set(bearer(token));
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([{ name: body.name, tag: body.tag }]);

    const [idParameter] = operation('delete', '/plants/{id}').parameters as ParameterObject[];
    const deleted = await t.http.delete(`/plants/${String(prefill(idParameter))}`).set(bearer(token));
    expect(deleted.status).toBe(204);
    await expect(t.dataSource.getRepository(Plant).count()).resolves.toBe(0);

    const search = bodyExample(operation('post', '/locations/nearest')) as { customer_address: { zip: string }; max_distance: number };
    expect(search.max_distance).toBe(5);
    const found = await t.http.post('/locations/nearest').set(bearer(token)).send(search);
    expect(found.status).toBe(200);
    expect(found.body.locations.length).toBeGreaterThan(0);
  });

  it('offers search examples that each answer 200 with stores on the demo list, with the unit and scope they show', async () => {
    for (const path of ['/locations/nearest', '/admin/locations/nearest']) {
      const examples = (operation('post', path).requestBody as { content: Record<string, { examples: Record<string, { value: object }> }> }).content[
        'application/json'
      ].examples;
      expect(Object.keys(examples)).toEqual(['radius', 'kilometres', 'nearest', 'region', 'include', 'openNow', 'driving']);
    }
    const examples = (operation('post', '/locations/nearest').requestBody as { content: Record<string, { examples: Record<string, { value: object }> }> })
      .content['application/json'].examples;
    const expected = {
      radius: ['mi', 'radius'],
      kilometres: ['km', 'radius'],
      nearest: ['mi', 'nearest'],
      region: ['mi', 'region'],
      include: ['mi', 'radius'],
      openNow: ['mi', 'radius'],
      driving: ['mi', 'radius'],
    };
    // "now" is whenever the test runs, when every store may be closed: the test picks the instant
    // instead, a Wednesday at noon in New York, when the demo stores near ZIP 10001 are open.
    const atNoon = (value: object) => ('open_at' in value && value.open_at === 'now' ? { ...value, open_at: '2026-11-25T12:00:00-05:00' } : value);
    expect(examples.openNow.value).toMatchObject({ open_at: 'now', open_only: true });
    for (const [name, { value }] of Object.entries(examples)) {
      const res = await t.http.post('/locations/nearest').set(bearer(token)).send(atNoon(value));
      expect({ name, status: res.status, headers: [res.headers['distance-unit'], res.headers['search-scope']] }).toEqual({
        name,
        status: 200,
        headers: expected[name as keyof typeof expected],
      });
      expect({ name, found: res.body.locations.length > 0 }).toEqual({ name, found: true });
      if (name === 'openNow') expect(res.body.locations.every((location: { open?: boolean }) => location.open === true)).toBe(true);
      // This app routes with no engine (ROUTER=off): the straight-line answer, said so.
      expect({ name, travel: res.headers['travel-source'] }).toEqual({ name, travel: name === 'driving' ? 'straight-line' : undefined });
    }
    // The example as it is, at whatever time this runs: a 200 in the same shape, open or not.
    const now = await t.http.post('/locations/nearest').set(bearer(token)).send(examples.openNow.value);
    expect(now.status).toBe(200);
    expect(Array.isArray(now.body.locations)).toBe(true);
  });
});
