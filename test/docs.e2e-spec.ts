import { createTestApp, type TestApp } from './support/test-app.js';

type Schema = { type?: string; format?: string; properties?: Record<string, Schema>; required?: string[]; items?: Schema; $ref?: string; writeOnly?: boolean };

describe('OpenAPI document and Swagger UI', () => {
  let t: TestApp;
  let doc: { openapi: string; info: { version: string }; paths: Record<string, Record<string, { security?: unknown; parameters?: Array<{ name: string; in: string; schema: Schema }>; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>>; components: { schemas: Record<string, Schema>; securitySchemes: Record<string, { type: string; scheme: string }> } };

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
    expect(doc.paths['/locations/nearest'].post.responses['200'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/NearestLocationsResponse' });
    expect(doc.paths['/plants'].post.responses['201'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/Plant' });
    expect(doc.paths['/plants'].get.responses['200'].content!['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Plant' } });
    expect(doc.paths['/plants/{id}'].delete.responses['204'].content).toBeUndefined();
    expect(doc.paths['/plants'].post.responses['409']).toBeDefined();
    expect(doc.paths['/plants/{id}'].delete.responses['404']).toBeDefined();
  });

  it('documents the limit query parameter of the plant list', () => {
    const limit = doc.paths['/plants'].get.parameters!.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });
  });

  it('has the spec\'s schemas with their fields and types', () => {
    const s = doc.components.schemas;
    expect(s.Error).toMatchObject({ required: ['error', 'message'], properties: { error: { type: 'integer', format: 'int32' }, message: { type: 'string' } } });
    expect(Object.keys(s.NearestLocationsResponse.properties!)).toEqual(['Code', 'locations']);
    expect(s.NearestLocationsResponse.properties!.locations).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Location' } });
    expect(Object.keys(s.Location.properties!)).toEqual(['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng', 'distance']);
    expect(s.Location.properties!.lat.type).toBe('string');
    expect(s.Location.properties!.lng.type).toBe('string');
    expect(s.Location.properties!.distance).toMatchObject({ type: 'number', format: 'float' });
    expect(Object.keys(s.BusinessHours.properties!)).toEqual(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']);
    expect(s.BusinessHours.required).toHaveLength(7);
    expect(s.NearestLocationsRequest.required).toEqual(['customer_address']);
    expect(s.CustomerAddress.required).toEqual(['zip']);
    expect(s.CustomerAddress.properties!.zip.type).toBe('string');
    expect(s.Plant).toMatchObject({ required: ['name'], properties: { name: { type: 'string' }, id: { type: 'integer', writeOnly: true }, tag: { type: 'string' } } });
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await t.http.get('/docs');
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger-ui');
  });

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
