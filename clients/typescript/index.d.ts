import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** The body of a create (POST /plants): name, and optionally id and tag. */
export type Plant = components['schemas']['Plant'];
/** A plant in a response (201 of a create, items of the list): name and tag, never the id. */
export type PlantResponse = components['schemas']['PlantResponse'];
export type NearestLocationsRequest = components['schemas']['NearestLocationsRequest'];
export type NearestLocationsResponse = components['schemas']['NearestLocationsResponse'];
export type Location = components['schemas']['Location'];
/** Every error response: `{ error: <HTTP status>, message: <one sentence> }`. */
export type ErrorBody = components['schemas']['Error'];

export interface PlantStoreClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The service's root, e.g. `https://plants.example.com` (paths have no version segment). */
  baseUrl: string;
  /** A bearer token (`pst_…`, or an SSO access token). */
  token: string;
}

export declare function createPlantStoreClient(options: PlantStoreClientOptions): Client<paths>;
