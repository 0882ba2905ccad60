import createClient, { mergeHeaders } from 'openapi-fetch';

/**
 * A client of the Plant Store Service: openapi-fetch typed by the service's OpenAPI document
 * (schema.d.ts), sending `Authorization: Bearer <token>` on every request.
 */
export function createPlantStoreClient({ baseUrl, token, headers, ...options }) {
  return createClient({ ...options, baseUrl, headers: mergeHeaders(headers, { Authorization: `Bearer ${token}` }) });
}
