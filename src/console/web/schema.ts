import type { components } from '../../../clients/typescript/schema.js';

// The API's own types, generated from its OpenAPI document (`npm run client:generate`): the
// console reads the answers the API documents, and `npm run lint` fails when they part.
type Schemas = components['schemas'];
type Headers = components['headers'];

export type Store = Schemas['AdminStore'];
export type StoreWritten = Schemas['AdminStoreWritten'];
export type Holiday = Schemas['AdminHoliday'];
export type Location = Schemas['Location'];
export type Status = Schemas['AdminStatus'];
export type ImportSummary = Schemas['AdminStoreImport'];
export type StoreChange = Schemas['AdminStoreImportChange'];
export type Token = Schemas['AdminToken'];
export type IssuedToken = Schemas['AdminIssuedToken'] | Schemas['AdminTokenRotated'];
export type ZipPoint = Schemas['AdminZipPoint'];
export type CustomerPosition = Schemas['AdminCustomerPosition'];
export type PositionSource = CustomerPosition['source'];
export type FallbackReason = NonNullable<CustomerPosition['fallback']>;
export type ImportProblem = Schemas['AdminStoreImportProblem'];
export type SearchScope = Headers['Search-Scope'];
export type DistanceUnit = Headers['Distance-Unit'];
export type TravelSource = Headers['Travel-Source'];
