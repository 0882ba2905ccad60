import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIObject } from '@nestjs/swagger';
import { openApiDocument, responseChecker, type ObservedResponse } from './support/openapi.js';

type Schema = {
  type?: string;
  format?: string;
  $ref?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  writeOnly?: boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: boolean | Schema;
};

/**
 * A field as the spec's tables give it: a type (and format), or a reference to another schema.
 * `returned: false`: accepted in requests, and the spec says it is not returned in responses.
 */
type Field = { type?: 'string' | 'integer' | 'number' | 'array'; format?: string; ref?: string; items?: string; required: boolean; returned?: false };

const text = (required: boolean): Field => ({ type: 'string', required });
const MAX_DISTANCE_DELIBERATE_DIFFERENCE = 'max_distance';

/**
 * The schemas of ../shared/spec/plant-store-service.md §2, transcribed table by table.
 * Response tables have no "Required" column: the service always sends those fields, so
 * the document must mark them required (except Plant.tag, left out when a plant has none,
 * contract §3). Plant.id is accepted on create and never returned: write-only.
 */
const SPEC: Record<string, Record<string, Field>> = {
  NearestLocationsRequest: {
    customer_address: { ref: 'CustomerAddress', required: true },
    // The spec marks it required yet gives it a default of 5; the contract (§4) makes it
    // optional with that default. The one deliberate difference, checked below.
    max_distance: { type: 'number', format: 'float', required: true },
  },
  CustomerAddress: { address: text(false), city: text(false), state: text(false), zip: text(true) },
  NearestLocationsResponse: { Code: text(true), locations: { type: 'array', items: 'Location', required: true } },
  Location: {
    name: text(true),
    address: text(true),
    city: text(true),
    state: text(true),
    zip: text(true),
    business_hours: { ref: 'BusinessHours', required: true },
    lat: text(true),
    lng: text(true),
    distance: { type: 'number', format: 'float', required: true },
  },
  BusinessHours: Object.fromEntries(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'].map((d) => [d, text(true)])),
  // Spec: id is "accepted in request body of create; not returned in create or list responses".
  Plant: { name: text(true), id: { type: 'integer', required: false, returned: false }, tag: text(false) },
  Error: { error: { type: 'integer', format: 'int32', required: true }, message: text(true) },
};

/**
 * Schemas of what the service returns of a spec resource whose table has fields that are not
 * returned: the resource's fields without those. The create and list responses are
 * "object with name and tag" (spec §4.2, §4.3).
 */
const RESPONSE_SCHEMAS: Record<string, string> = { PlantResponse: 'Plant' };
for (const [name, resource] of Object.entries(RESPONSE_SCHEMAS)) {
  SPEC[name] = Object.fromEntries(Object.entries(SPEC[resource]).filter(([, field]) => field.returned !== false));
}

/** Names of the fields the spec says are never returned: no response schema may list one. */
const NOT_RETURNED = Object.values(SPEC).flatMap((fields) =>
  Object.entries(fields)
    .filter(([, field]) => field.returned === false)
    .map(([name]) => name),
);

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;
type Operation = { responses: Record<string, { content?: Record<string, { schema: Schema }> }> };

/** Every operation of the document, with its method and path. */
/** The admin API is the service's own, apart from the spec: its paths and schemas are left out here. */
const isAdmin = (pathOrSchema: string) => pathOrSchema.startsWith('/admin/') || pathOrSchema.startsWith('Admin');

/** The operations of the spec (and the health probes). */
function operations(doc: OpenAPIObject): Array<{ where: string; operation: Operation }> {
  return Object.entries(doc.paths)
    .filter(([path]) => !isAdmin(path))
    .flatMap(([path, item]) =>
      METHODS.flatMap((method) => {
        const operation = (item as Record<string, Operation | undefined>)[method];
        return operation ? [{ where: `${method.toUpperCase()} ${path}`, operation }] : [];
      }),
    );
}

/** Every schema a schema reaches (itself, references, items, compositions, properties), each once. */
function reachable(doc: OpenAPIObject, root: Schema, seen = new Set<Schema>()): Set<Schema> {
  const schema = root.$ref ? (doc.components!.schemas![root.$ref.replace('#/components/schemas/', '')] as Schema) : root;
  if (!schema || seen.has(schema)) return seen;
  seen.add(schema);
  const next = [
    ...(schema.items ? [schema.items] : []),
    ...(schema.allOf ?? []),
    ...(schema.oneOf ?? []),
    ...(schema.anyOf ?? []),
    ...Object.values(schema.properties ?? {}),
    ...(typeof schema.additionalProperties === 'object' ? [schema.additionalProperties] : []),
  ];
  for (const child of next) reachable(doc, child, seen);
  return seen;
}

/** Fields the service adds beyond the spec (extensions the contract allows). */
const EXTENSIONS: Record<string, string[]> = {
  NearestLocationsRequest: [
    'limit',
    'open_at',
    'open_only',
    'distance_unit',
    'nearest_if_none',
    'region',
    'travel_mode',
    'max_travel_time',
    'services',
    'include',
  ],
  CustomerAddress: ['lat', 'lng'],
  // Present only when the request has open_at (or travel_mode, or include), hence not required.
  Location: ['open', 'time_zone', 'next_change', 'hours_today', 'travel_time', 'travel_distance', 'code', 'phone', 'website', 'email', 'services'],
};

/** Schemas of those extensions: what `hours_today` holds; a store's page (GET /locations/{code}), in its two forms. */
const EXTENSION_SCHEMAS = [
  'HoursToday',
  'StorePage',
  'StoreService',
  'StoreSpecialDay',
  'StorePageJsonLd',
  'SchemaOrgPostalAddress',
  'SchemaOrgGeoCoordinates',
  'SchemaOrgOpeningHoursSpecification',
  'SchemaOrgLocationFeatureSpecification',
];

describe('the OpenAPI document', () => {
  let doc: OpenAPIObject;
  beforeAll(async () => {
    doc = JSON.parse(JSON.stringify(await openApiDocument()));
  });

  it('is a valid OpenAPI document', async () => {
    // swagger-parser dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toMatchObject({ info: { version: '1.0.0' } });
  });

  it("has every schema of the spec and the spec's name for each (and the response schemas of its resources)", () => {
    expect(
      Object.keys(doc.components!.schemas!)
        .filter((name) => !isAdmin(name) && !EXTENSION_SCHEMAS.includes(name))
        .sort(),
    ).toEqual(Object.keys(SPEC).sort());
    expect(Object.keys(SPEC)).toEqual(expect.arrayContaining(Object.keys(RESPONSE_SCHEMAS)));
  });

  describe.each(Object.entries(SPEC))('schema %s', (name, fields) => {
    const schema = () => doc.components!.schemas![name] as Schema;

    it("has exactly the spec's fields (plus documented extensions)", () => {
      expect(Object.keys(schema().properties!).sort()).toEqual([...Object.keys(fields), ...(EXTENSIONS[name] ?? [])].sort());
    });

    it.each(Object.entries(fields))("field %s has the spec's type", (field, spec) => {
      const property = schema().properties![field];
      if (spec.ref) {
        // Nest writes a reference either bare or, with a description, wrapped in allOf.
        const ref = property.$ref ?? property.allOf?.[0].$ref;
        expect(ref).toBe(`#/components/schemas/${spec.ref}`);
      } else {
        expect(property.type).toBe(spec.type);
        if (spec.format) expect(property.format).toBe(spec.format);
        if (spec.items) expect(property.items).toEqual({ $ref: `#/components/schemas/${spec.items}` });
      }
    });

    it('requires what the spec requires', () => {
      const expected = Object.entries(fields)
        .filter(([field, spec]) => spec.required && !(name === 'NearestLocationsRequest' && field === MAX_DISTANCE_DELIBERATE_DIFFERENCE))
        .map(([field]) => field);
      expect([...(schema().required ?? [])].sort()).toEqual(expected.sort());
    });
  });

  it('documents max_distance as optional with the default 5 (the deliberate difference from the spec table)', () => {
    expect((doc.components!.schemas!.NearestLocationsRequest as Schema).properties!.max_distance).toMatchObject({
      type: 'number',
      format: 'float',
      default: 5,
    });
  });

  it.each(NOT_RETURNED)('lists %s, which the spec says is not returned, in no schema of any response', (field) => {
    const listed = operations(doc).flatMap(({ where, operation }) =>
      Object.entries(operation.responses).flatMap(([status, response]) =>
        Object.values(response.content ?? {}).flatMap(({ schema }) =>
          [...reachable(doc, schema)].filter((s) => s.properties && field in s.properties).map(() => `${where} → ${status}`),
        ),
      ),
    );
    expect(NOT_RETURNED.length).toBeGreaterThan(0);
    expect(listed).toEqual([]);
  });

  it('answers create and list with the response schema of Plant, never with the request schema', () => {
    const plants = doc.paths['/plants'] as Record<string, Operation>;
    expect(plants.post.responses['201'].content!['application/json'].schema).toEqual({ $ref: '#/components/schemas/PlantResponse' });
    expect(plants.get.responses['200'].content!['application/json'].schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/PlantResponse' } });
    const request = doc.components!.schemas!.Plant as Schema;
    for (const { where, operation } of operations(doc)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const { schema } of Object.values(response.content ?? {}))
          expect({ where, status, plant: reachable(doc, schema).has(request) }).toEqual({ where, status, plant: false });
      }
    }
  });

  it('keeps Plant.id out of responses (write-only) and lat/lng strings, Code with a capital C', () => {
    const s = doc.components!.schemas! as Record<string, Schema>;
    expect(s.Plant.properties!.id.writeOnly).toBe(true);
    expect(s.NearestLocationsResponse.properties!.Code).toBeDefined();
    expect(s.NearestLocationsResponse.properties!).not.toHaveProperty('code');
  });

  it('has bearer security on every operation of the spec', () => {
    for (const [path, method] of [
      ['/locations/nearest', 'post'],
      ['/plants', 'post'],
      ['/plants', 'get'],
      ['/plants/{id}', 'delete'],
    ] as const) {
      expect((doc.paths[path] as Record<string, { security?: unknown }>)[method].security).toEqual([{ bearer: [] }]);
    }
  });
});

/** The response check every e2e request goes through must be able to fail. */
describe('the response check of the e2e suite', () => {
  let problem: (r: Partial<ObservedResponse> & { method: string; url: string; status: number }) => string | undefined;
  beforeAll(async () => {
    const checker = responseChecker(await openApiDocument());
    // The headers every response carries, and a 201's Location.
    const sent = (status: number) => ({
      'content-type': 'application/json; charset=utf-8',
      'x-request-id': 'r-1',
      'cache-control': 'no-store',
      ...(status === 201 ? { location: '/plants/7' } : {}),
    });
    problem = (r) =>
      checker.problem({ body: undefined, text: r.body === undefined ? '' : JSON.stringify(r.body), ...r, headers: { ...sent(r.status), ...r.headers } });
  });

  it('accepts what the document describes', () => {
    expect(problem({ method: 'POST', url: '/plants', status: 201, body: { name: 'Fern', tag: 'green' } })).toBeUndefined();
    expect(problem({ method: 'GET', url: 'http://127.0.0.1:1/plants?limit=2', status: 200, body: [{ name: 'Fern' }] })).toBeUndefined();
    expect(problem({ method: 'DELETE', url: '/plants/7', status: 204, headers: { 'content-type': undefined } })).toBeUndefined();
    expect(
      problem({
        method: 'GET',
        url: '/plants',
        status: 200,
        headers: { link: '</plants?limit=1&after=7>; rel="next"', ratelimit: '"token";r=5;t=9' },
        body: [],
      }),
    ).toBeUndefined();
    expect(
      problem({
        method: 'GET',
        url: '/plants',
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="plant-store"' },
        body: { error: 401, message: 'missing bearer token' },
      }),
    ).toBeUndefined();
    expect(problem({ method: 'POST', url: '/plants', status: 409, body: { error: 409, message: 'plant 7 already exists' } })).toBeUndefined();
    expect(problem({ method: 'GET', url: '/nowhere', status: 404, body: { error: 404, message: 'no route for GET /nowhere' } })).toBeUndefined();
    expect(problem({ method: 'PUT', url: '/plants', status: 405, body: { error: 405, message: 'method PUT is not allowed on /plants' } })).toBeUndefined();
  });

  it.each([
    ['an undocumented field', { method: 'POST', url: '/plants', status: 201, body: { name: 'Fern', id: 7 } }],
    ['a missing required field', { method: 'POST', url: '/plants', status: 201, body: { tag: 'green' } }],
    ['a wrong type', { method: 'GET', url: '/plants', status: 200, body: [{ name: 5 }] }],
    ['an undocumented status', { method: 'GET', url: '/plants', status: 418, body: { error: 418, message: 'teapot' } }],
    ['a body where none is documented', { method: 'DELETE', url: '/plants/7', status: 204, body: { deleted: true } }],
    ['an error body with extra fields', { method: 'POST', url: '/plants', status: 400, body: { error: 400, message: 'bad', statusCode: 400 } }],
    ['an error body whose error is not the status', { method: 'POST', url: '/plants', status: 400, body: { error: 422, message: 'bad' } }],
    ['an error without the Error body on an unknown route', { method: 'GET', url: '/nowhere', status: 404, body: { message: 'Not Found' } }],
    ['a success on a route the document does not have', { method: 'GET', url: '/secret', status: 200, body: {} }],
    ['a 5xx on a route the document does not have', { method: 'GET', url: '/nowhere', status: 500, body: { error: 500, message: 'internal server error' } }],
    [
      'lat as a number',
      {
        method: 'POST',
        url: '/locations/nearest',
        status: 200,
        body: {
          Code: 'Success',
          locations: [
            {
              name: 'a',
              address: 'b',
              city: 'c',
              state: 'NY',
              zip: '10001',
              business_hours: {
                Monday: 'Closed',
                Tuesday: 'Closed',
                Wednesday: 'Closed',
                Thursday: 'Closed',
                Friday: 'Closed',
                Saturday: 'Closed',
                Sunday: 'Closed',
              },
              lat: 40.1,
              lng: '-73.000000',
              distance: 1,
            },
          ],
        },
      },
    ],
    ['HTML for a JSON response', { method: 'GET', url: '/plants', status: 200, headers: { 'content-type': 'text/html' }, body: undefined }],
    ['a 201 without Location', { method: 'POST', url: '/plants', status: 201, headers: { location: undefined }, body: { name: 'Fern' } }],
    ['a response without X-Request-Id', { method: 'GET', url: '/plants', status: 200, headers: { 'x-request-id': undefined }, body: [] }],
    ['a 401 without WWW-Authenticate', { method: 'GET', url: '/plants', status: 401, body: { error: 401, message: 'missing bearer token' } }],
    [
      'a 429 without Retry-After',
      { method: 'GET', url: '/plants', status: 429, body: { error: 429, message: 'too many requests with this token, try again later' } },
    ],
    [
      'a contract header where it is not documented',
      { method: 'POST', url: '/plants', status: 201, headers: { link: '</plants?after=7>; rel="next"' }, body: { name: 'Fern' } },
    ],
    [
      'rate-limit headers on a 401',
      {
        method: 'GET',
        url: '/plants',
        status: 401,
        headers: { 'www-authenticate': 'Bearer realm="plant-store"', ratelimit: '"token";r=5;t=9' },
        body: { error: 401, message: 'missing bearer token' },
      },
    ],
  ] as const)('rejects %s', (_, response) => {
    expect(problem(response as never)).toEqual(expect.any(String));
  });
});
