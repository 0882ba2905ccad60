import type { HeaderObject, OpenAPIObject, OperationObject, ReferenceObject } from '@nestjs/swagger';

/**
 * Where a search measures from: the values of its `Customer-Position` header and of the admin
 * position look-up's `source`, written once for both enums of the document (and so for the
 * console's words, keyed by the generated type).
 */
export const POSITION_SOURCES = ['address', 'zip', 'device'] as const;
export type PositionSource = (typeof POSITION_SOURCES)[number];
/** The search's units (`distance_unit`, the `Distance-Unit` header). */
export const DISTANCE_UNITS = ['mi', 'km'] as const;
/** What a search looked through (the `Search-Scope` header). */
export const SEARCH_SCOPES = ['radius', 'nearest', 'region'] as const;
/** Where a search's travel times came from (the `Travel-Source` header): a routing engine, or none (straight-line order). */
export const TRAVEL_SOURCES = ['pgrouting', 'osrm', 'valhalla', 'straight-line'] as const;

/**
 * Every response header of the contract, described once. The document lists them under
 * `components.headers`; responses refer to them by name (`responseHeaders('Location')`).
 */
const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the caller's own `X-Request-Id` when it is 1 to 128 letters, digits or `._:-`, otherwise a generated UUID. Every log line of the request carries it; quote it when reporting a problem.",
    required: true,
    schema: { type: 'string', maxLength: 128, example: '3f2b8c1e-5d7a-4e0b-9c61-2a4f0d8e7b15' },
  },
  'Cache-Control': {
    description: "`no-store`: no response of this service may be cached, but a store's page (its own `Cache-Control`).",
    required: true,
    schema: { type: 'string', enum: ['no-store'] },
  },
  StorePageCacheControl: {
    description:
      "How long a private cache may keep the page: `private, max-age=<seconds>, must-revalidate`, at most 60 s and never past the store's next change of `open` (JSON) or its midnight (when the days ahead move on); then it asks again with `If-None-Match`.",
    required: true,
    schema: { type: 'string', pattern: '^private, max-age=\\d+, must-revalidate$', example: 'private, max-age=60, must-revalidate' },
  },
  StorePageETag: {
    description:
      'A strong entity tag of this form of the page (a digest of its bytes): it changes when the store is edited, when its days ahead move on and, in JSON, when `open` or `next_change` do. Send it back in `If-None-Match` for a 304 while it holds.',
    required: true,
    schema: { type: 'string', example: '"2xZbq0cF3JmH5n4wD9Vt8sLkR1aYpQe7uGiNoTcB6Ws"' },
  },
  StorePageVary: {
    description: 'Always `Accept`: the page comes as `application/json` or `application/ld+json`.',
    required: true,
    schema: { type: 'string', example: 'Accept' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    required: true,
    schema: { type: 'integer', minimum: 1, example: 42 },
  },
  Location: {
    description: 'Path of the new plant, carrying its id (the body does not).',
    required: true,
    schema: { type: 'string', example: '/plants/7' },
  },
  Link: {
    description: 'Present when more plants follow: the next page (RFC 8288), with the same `limit` and `tag` and `after` set to the last id of this page.',
    schema: { type: 'string', example: '</plants?limit=100&after=100>; rel="next"' },
  },
  AdminLocation: {
    description: 'Path of the new resource of the admin API, carrying its id.',
    required: true,
    schema: { type: 'string', example: '/admin/tokens/12' },
  },
  AdminLink: {
    description: 'Present when more items follow: the next page (RFC 8288), with the same filters and `after` set to the last item of this page.',
    schema: { type: 'string', example: '</admin/tokens?limit=100&after=100>; rel="next"' },
  },
  'Customer-Position': {
    description:
      "Where the distances were measured from: `device` (the request's `lat` and `lng`), `address` (the street address, placed by the geocoder), or `zip` (the ZIP code's point: no street address, no geocoder, or no believable answer from it in time).",
    required: true,
    schema: { type: 'string', enum: [...POSITION_SOURCES], example: 'zip' },
  },
  'Distance-Unit': {
    description:
      "The unit of the request's `max_distance` and of each location's `distance`: `mi` (miles, the default) or `km` (the request's `distance_unit`).",
    required: true,
    schema: { type: 'string', enum: [...DISTANCE_UNITS], example: 'mi' },
  },
  'Search-Scope': {
    description:
      "What the search looked through: `radius` (the stores within `max_distance`), `nearest` (`nearest_if_none` found none in range and answered the single nearest store) or `region` (the stores of the request's `region`).",
    required: true,
    schema: { type: 'string', enum: [...SEARCH_SCOPES], example: 'radius' },
  },
  'Travel-Source': {
    description:
      'Only with `travel_mode`: where the travel times came from, the routing engine (`pgrouting`, `osrm`, `valhalla`) or none (`straight-line`: the service has no engine, or it failed, refused or was slow; the locations are in straight-line order with `travel_time` and `travel_distance` null).',
    schema: { type: 'string', enum: [...TRAVEL_SOURCES], example: 'straight-line' },
  },
  ETag: {
    description:
      'The store catalogue\'s version that an import (or its dry run) was computed against or left behind, as a strong entity tag (`"42"`). Send it back in `If-Match` to apply only if the catalogue has not changed since.',
    required: true,
    schema: { type: 'string', example: '"42"' },
  },
  'Preference-Applied': {
    description: "Present when the request's `Prefer` was honoured (RFC 7240): `handling=lenient` on a dry run of the store import.",
    schema: { type: 'string', example: 'handling=lenient' },
  },
  'WWW-Authenticate': {
    description:
      'The bearer challenge (RFC 6750): `Bearer realm="plant-store"` when the header was missing, with `, error="invalid_token"` when the token was refused.',
    required: true,
    schema: { type: 'string', example: 'Bearer realm="plant-store", error="invalid_token"' },
  },
  'RateLimit-Policy': {
    description:
      'The per-token request quota (IETF draft-ietf-httpapi-ratelimit-headers, structured field): `q` requests per window of `w` seconds. Sent on every response to a request whose token was accepted, while a per-token limit is configured (`TOKEN_RATE_LIMIT_PER_MINUTE` > 0).',
    schema: { type: 'string', example: '"token";q=600;w=60' },
  },
  RateLimit: {
    description:
      'What is left of the per-token quota (IETF draft-ietf-httpapi-ratelimit-headers, structured field): `r` requests remaining, `t` seconds until the window resets. Sent with `RateLimit-Policy`.',
    schema: { type: 'string', example: '"token";r=599;t=42' },
  },
} satisfies Record<string, HeaderObject>;

export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

/** The `headers` of a documented response: references to the named headers. */
export function responseHeaders(...names: ResponseHeader[]): Record<string, ReferenceObject> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

/** A store page's caching headers (200 and 304): its own Cache-Control instead of every response's `no-store`, its ETag and Vary. */
export function storePageHeaders(): Record<string, ReferenceObject> {
  const ref = (name: ResponseHeader) => ({ $ref: `#/components/headers/${name}` });
  return { 'Cache-Control': ref('StorePageCacheControl'), ETag: ref('StorePageETag'), Vary: ref('StorePageVary') };
}

/** The admin API's Location and Link, described apart from the plant operations' own. */
export function adminHeaders(...names: Array<'Location' | 'Link'>): Record<string, ReferenceObject> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/Admin${name}` }]));
}

/** Headers on every response, whatever the operation and status (contract §1). */
const EVERY_RESPONSE: ResponseHeader[] = ['X-Request-Id', 'Cache-Control'];
/** Headers on every response to a request whose token was accepted: any status but 401. */
const AUTHENTICATED_RESPONSE: ResponseHeader[] = ['RateLimit-Policy', 'RateLimit'];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Adds the header definitions to `components.headers` and the headers every response carries
 * to each response of each operation, so that no decorator has to repeat them. Headers of one
 * status (Location, Link, Retry-After, WWW-Authenticate) stay on that response's decorator.
 */
export function documentResponseHeaders(document: OpenAPIObject): OpenAPIObject {
  document.components = { ...document.components, headers: { ...document.components?.headers, ...RESPONSE_HEADERS } };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation: OperationObject | undefined = item[method];
      if (!operation) continue;
      const authenticated = (operation.security ?? document.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response || '$ref' in response) continue;
        const names = authenticated && status !== '401' ? [...EVERY_RESPONSE, ...AUTHENTICATED_RESPONSE] : EVERY_RESPONSE;
        // An operation's own header of a name wins (a store page's Cache-Control).
        response.headers = { ...responseHeaders(...names), ...response.headers };
      }
    }
  }
  return document;
}
