import { EMAIL_MAX, PHONE_MAX, WEBSITE_MAX } from './contact-fields.js';
import { SERVICE_SLUG_RULE } from './services.js';
import { SPECIAL_DAYS_MAX } from './special-days.js';
import type { Weekday } from './weekdays.js';

/**
 * What a field holds, which decides its check (validateStoreRecord), its column type and how the
 * export writes it: free text of at most `length` characters (which the export guards against
 * formulas), a state code, a ZIP code, a coordinate (DECIMAL(9,6), written with six decimals and
 * taken as a number), a day's hours, an IANA time zone, a list of special days, a temporary
 * closure, a phone number (kept in E.164), a website, an email address, a list of the chain's
 * services. The special days, the closure and the services are text in the CSV and the table
 * (shared/special-days.ts, shared/services.ts) and JSON in the admin API; the contact fields' checks
 * are shared/contact-fields.ts, and the admin API answers an empty one as null.
 */
export type StoreFieldKind =
  'text' | 'state' | 'zip' | 'coordinate' | 'hours' | 'zone' | 'special_days' | 'closure' | 'phone' | 'website' | 'email' | 'services';

export interface StoreFieldSpec {
  /** The one name: the property of Store, the column of `stores`, the CSV column and the admin API's JSON field. */
  readonly name: string;
  readonly kind: StoreFieldKind;
  /** VARCHAR length (characters); a coordinate is DECIMAL(9,6) and has none, nor has the special days' TEXT. */
  readonly length?: number;
  /** Whether every CSV has the column. Optional columns follow the required ones; a file may leave them out, or have empty cells in them (free text is then empty). */
  readonly csv: 'required' | 'optional';
  /** Whether the search's `Location` (the contract's) shows it: locations/store-snapshot.ts writes those, checked by location-fields.spec.ts. */
  readonly location: boolean;
  /**
   * Whether the search's index reads it (StoreCatalog.pages, CatalogStore): what a Location shows,
   * and what else the search needs (the code breaks ties, the zone answers `open_at`). A field the
   * search does not use stays out, so that the index's load reads no more than it uses.
   */
  readonly index: boolean;
  /**
   * Whether the search's `include` can add it to each Location (`"include": ["code"]`): the index
   * then reads it whatever `index` says (store-snapshot.ts keeps it beside the Location's JSON).
   * A text field is written as a JSON string (null when empty); the services as their list.
   */
  readonly include?: boolean;
  /** The admin API's request body (AdminStoreRequest); none for the code, which is the path. `optional`: may be left out. */
  readonly request?: { readonly description: string; readonly example: string; readonly optional?: boolean };
  /** The admin API's view of a store (AdminStore): every field is in it. */
  readonly view: { readonly description: string; readonly example: string };
  /**
   * Whether a store row keeps the stored value when the field is not given (a CSV without the
   * column, an admin PUT without the field): fields added after clients were written, so that
   * those clients lose nothing. Otherwise a missing field is empty (or, for the zone, worked out).
   */
  readonly keep?: boolean;
}

const HOURS = 'Hours: `Closed`, or ranges like `9:00 AM - 6:00 PM` joined by `, `, each closing after it opens, in order.';

function hours<const N extends Weekday>(name: N, example: string) {
  const day = `${name[0].toUpperCase()}${name.slice(1)}`;
  return {
    name,
    kind: 'hours',
    length: 200,
    csv: 'required',
    location: true,
    index: true,
    request: { description: HOURS, example },
    view: { description: `${day} hours.`, example },
  } as const satisfies StoreFieldSpec;
}

/**
 * Every field of a store, in the CSV's order (which is also the order of the admin API's
 * schemas and of the catalogue's queries). Adding a field: docs/development.md, "Adding a store field".
 */
export const STORE_FIELDS = [
  {
    name: 'code',
    kind: 'text',
    length: 64,
    csv: 'required',
    location: false,
    index: true,
    include: true,
    view: { description: "The store's code, its key.", example: 'NY-0042' },
  },
  {
    name: 'name',
    kind: 'text',
    length: 200,
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'Name, 1 to 200 characters.', example: 'Fern & Fig Chelsea' },
    view: { description: 'Name.', example: 'Fern & Fig Chelsea' },
  },
  {
    name: 'address',
    kind: 'text',
    length: 200,
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'Street address, 1 to 200 characters.', example: '1083 Cedar Lane' },
    view: { description: 'Street address.', example: '1083 Cedar Lane' },
  },
  {
    name: 'city',
    kind: 'text',
    length: 100,
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'City, 1 to 100 characters.', example: 'New York' },
    view: { description: 'City.', example: 'New York' },
  },
  {
    name: 'state',
    kind: 'state',
    length: 2,
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'US state or territory code, any case (stored upper case).', example: 'NY' },
    view: { description: 'State or territory code.', example: 'NY' },
  },
  {
    name: 'zip',
    kind: 'zip',
    length: 10,
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'ZIP code: 12345 or 12345-6789.', example: '10001' },
    view: { description: 'ZIP code.', example: '10001' },
  },
  {
    name: 'lat',
    kind: 'coordinate',
    csv: 'required',
    location: true,
    index: true,
    request: {
      description: "Latitude in decimal degrees (kept to 6 decimals). Leave out with lng to use the ZIP code's point.",
      example: '40.755823',
      optional: true,
    },
    view: { description: 'Latitude, six decimals.', example: '40.755823' },
  },
  {
    name: 'lng',
    kind: 'coordinate',
    csv: 'required',
    location: true,
    index: true,
    request: { description: 'Longitude in decimal degrees (kept to 6 decimals), with lat.', example: '-74.001164', optional: true },
    view: { description: 'Longitude, six decimals.', example: '-74.001164' },
  },
  hours('monday', '9:00 AM - 6:00 PM'),
  hours('tuesday', '9:00 AM - 6:00 PM'),
  hours('wednesday', '9:00 AM - 6:00 PM'),
  hours('thursday', '9:00 AM - 6:00 PM'),
  hours('friday', '9:00 AM - 6:00 PM'),
  hours('saturday', '10:00 AM - 4:00 PM'),
  hours('sunday', 'Closed'),
  {
    // A sixteenth CSV column a file may leave out (the export writes it, so that an export
    // imports back unchanged); left out or empty, the zone at the store's coordinates.
    name: 'time_zone',
    kind: 'zone',
    length: 64,
    csv: 'optional',
    location: false,
    index: true,
    request: {
      description:
        "The IANA time zone the hours are in, as the tz database spells it (`America/Denver`). Left out or empty: the zone at the store's coordinates (El Paso gets America/Denver).",
      example: 'America/New_York',
      optional: true,
    },
    view: { description: 'The IANA time zone the hours are in.', example: 'America/New_York' },
  },
  {
    // Kept when not given (see `keep`): an old client's PUT and an old file leave them as they are.
    name: 'special_hours',
    kind: 'special_days',
    csv: 'optional',
    location: false,
    index: true,
    keep: true,
    request: {
      description: `Days whose hours differ from the weekday's, in the store's time zone: at most ${SPECIAL_DAYS_MAX}, each date once. Left out: kept as stored; \`[]\` clears.`,
      example: '2026-12-24=9:00 AM - 2:00 PM; 2026-12-25=Closed',
      optional: true,
    },
    view: { description: 'Special days, by date.', example: '2026-12-24=9:00 AM - 2:00 PM; 2026-12-25=Closed' },
  },
  {
    name: 'temporarily_closed',
    kind: 'closure',
    length: 32,
    csv: 'optional',
    location: false,
    index: true,
    keep: true,
    request: {
      description: "A temporary closure, both dates inclusive in the store's calendar. Left out: kept as stored; `null` clears.",
      example: '2027-01-04/2027-01-31',
      optional: true,
    },
    view: { description: 'A temporary closure, or null.', example: '2027-01-04/2027-01-31' },
  },
  {
    // The contact fields: kept when not given, like the two above; the index reads them for the store's page.
    name: 'phone',
    kind: 'phone',
    length: PHONE_MAX,
    csv: 'optional',
    location: false,
    index: true,
    include: true,
    keep: true,
    request: {
      description:
        'A US phone number as people write it: `(913) 555-0142`, `913-555-0142`, `913.555.0142`, `+1 913 555 0142`, … (area code and exchange starting with 2 to 9); kept in E.164. Left out: kept as stored; `null` or empty clears.',
      example: '(212) 555-0142',
      optional: true,
    },
    view: { description: 'Phone number in E.164, or null.', example: '+12125550142' },
  },
  {
    name: 'website',
    kind: 'website',
    length: WEBSITE_MAX,
    csv: 'optional',
    location: false,
    index: true,
    include: true,
    keep: true,
    request: {
      description: `An absolute \`https\` address with a host name, at most ${WEBSITE_MAX} characters; kept as given. Left out: kept as stored; \`null\` or empty clears.`,
      example: 'https://fernandfig.example/chelsea',
      optional: true,
    },
    view: { description: 'Website, or null.', example: 'https://fernandfig.example/chelsea' },
  },
  {
    name: 'email',
    kind: 'email',
    length: EMAIL_MAX,
    csv: 'optional',
    location: false,
    index: true,
    include: true,
    keep: true,
    request: {
      description: `An email address, at most ${EMAIL_MAX} characters; kept as given. Left out: kept as stored; \`null\` or empty clears.`,
      example: 'chelsea@fernandfig.example',
      optional: true,
    },
    view: { description: 'Email address, or null.', example: 'chelsea@fernandfig.example' },
  },
  {
    // The chain's services the store offers (shared/services.ts): a search filters by them.
    name: 'services',
    kind: 'services',
    csv: 'optional',
    location: false,
    index: true,
    include: true,
    keep: true,
    request: {
      description: `The services of the chain (\`GET /admin/services\`) the store offers, by slug (each ${SERVICE_SLUG_RULE.replace('must be ', '')}); answered sorted, each once. Left out: kept as stored; \`[]\` clears.`,
      example: 'curbside_pickup|delivery',
      optional: true,
    },
    view: { description: "The store's services, by slug, sorted.", example: 'curbside_pickup|delivery' },
  },
] as const satisfies readonly StoreFieldSpec[];

type Field = (typeof STORE_FIELDS)[number];
export type StoreFieldName = Field['name'];
type NamesOf<F> = F extends { name: infer N extends string } ? N : never;

/** A store's fields as a checked CSV row holds them: coordinates as numbers, the rest text; a `keep` field the file or request left out is undefined (stays as stored). */
export type StoreRow = { [F in Field as F['name']]: F['kind'] extends 'coordinate' ? number : F extends { keep: true } ? string | undefined : string };

/** A store as the search's index reads the catalogue (the fields with `index` or `include`): mysql2 gives DECIMAL as text, better-sqlite3 as a number. */
export type CatalogStore = {
  [F in Extract<Field, { index: true } | { include: true }> as F['name']]: F['kind'] extends 'coordinate' ? number | string : string;
};

type RequestField = Extract<Field, { request: object }>;
type OptionalRequestField = Extract<RequestField, { request: { optional: true } }>;
/** The fields of one store as the admin API takes them: the CSV row's, as text; the code is the path. */
export type StoreFields = { [N in NamesOf<Exclude<RequestField, OptionalRequestField>>]: string } & { [N in NamesOf<OptionalRequestField>]?: string };

/** The admin API's view of a store: every field as text (coordinates with six decimals). */
export type StoreViewFields = Record<StoreFieldName, string>;

export const STORE_FIELD_NAMES: readonly StoreFieldName[] = STORE_FIELDS.map((field) => field.name);

/** The fields of CatalogStore, in the table's order. */
export const INDEX_FIELD_NAMES = (STORE_FIELDS as readonly StoreFieldSpec[])
  .filter((field) => field.index || field.include)
  .map((field) => field.name as keyof CatalogStore);

/** What the search's `include` can add to a Location (the fields with `include`), in the table's order: the order they are written in. */
export const INCLUDE_FIELDS = (STORE_FIELDS as readonly StoreFieldSpec[]).filter((field) => field.include) as ReadonlyArray<
  StoreFieldSpec & { name: keyof CatalogStore }
>;
export type IncludeName = Extract<Field, { include: true }>['name'];
export const INCLUDE_NAMES = INCLUDE_FIELDS.map((field) => field.name as IncludeName);

/** The fields an import (and an admin write) compares and writes, in the CSV's order: all but the key. */
export const STORED_FIELDS = STORE_FIELD_NAMES.filter((name): name is Exclude<StoreFieldName, 'code'> => name !== 'code');
export type StoredField = (typeof STORED_FIELDS)[number];

/** The fields a row leaves as stored when it does not give them (`keep`). */
export const KEPT_FIELDS = (STORE_FIELDS as readonly StoreFieldSpec[]).filter((field) => field.keep).map((field) => field.name as StoreFieldName);

/**
 * The fields whose values a spreadsheet could take for a formula (the export guards them): free
 * text, a phone (E.164 starts with `+`) and an email address (whose local part may start with
 * `=`, `+`, `-`). The other kinds are checked formats that never start so; a website starts with `https:`.
 */
export const GUARDED_FIELDS = STORE_FIELDS.filter((field) => field.kind === 'text' || field.kind === 'phone' || field.kind === 'email').map(
  (field) => field.name,
);

/** The fields the admin API answers as null when empty (none stored), rather than as an empty string. */
export const NULLABLE_VIEW_FIELDS = STORE_FIELDS.filter(
  (field): field is Extract<Field, { kind: 'phone' | 'website' | 'email' }> => field.kind === 'phone' || field.kind === 'website' || field.kind === 'email',
).map((field) => field.name);

/** The longest code: the path of an admin route and the list's cursor are codes. */
export const STORE_CODE_LENGTH = STORE_FIELDS[0].length;

const COORDINATES = new Set<string>(STORE_FIELDS.filter((field) => field.kind === 'coordinate').map((field) => field.name));

/** A field's value as the CSV, the admin API and an import's list of changes write it: coordinates with six decimals (mysql2 gives DECIMAL as text), the rest as it is. */
export function storeFieldText(name: StoreFieldName, value: string | number): string {
  return COORDINATES.has(name) ? Number(value).toFixed(6) : String(value);
}
