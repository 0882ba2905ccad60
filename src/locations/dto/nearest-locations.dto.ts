import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, ValidateBy, ValidateNested, type ValidationArguments } from 'class-validator';
import { DISTANCE_UNITS } from '../../common/api-headers.js';
import { type FieldOptions, ValidateField, ValidateInteger, ValidateText } from '../../common/validators.js';
import { ValidateUsState } from '../../geo/validate-us-state.js';
import { ZIP_PATTERN } from '../../geo/zip-geocoder.js';
import { KM_PER_MILE } from '../../shared/great-circle.js';
import { SERVICE_SLUG, SERVICE_SLUG_RULE } from '../../shared/services.js';
import { INCLUDE_NAMES, type IncludeName } from '../../shared/store-fields.js';
import { parseDateTime } from '../date-time.js';

// The schemas below list their keys in the order of the published document (clients/typescript/openapi.json).

/** A ZIP code as text (ZIP_PATTERN once surrounding white space is trimmed); the DTO keeps it trimmed. */
function ValidateZip({ description, ...options }: FieldOptions) {
  return ValidateField(
    { description, pattern: '^\\s*[0-9]{5}(-?[0-9]{4})?\\s*$', ...options },
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value)),
    IsString(),
    Matches(ZIP_PATTERN, { message: ({ property }) => `${property} must be a US ZIP code such as 12345 or 12345-6789` }),
  );
}

const UNIT_WORDS = { mi: 'miles', km: 'kilometres' } as const;

/**
 * `max_distance`: a JSON number > 0 and at most `maximum` miles, or as many kilometres (804.672
 * for 500) with `distance_unit` "km"; one message for every failure. A region search has no
 * radius, so beside `region` it is refused whatever its value. JSON null stays null (not given):
 * the default applies in the service, so that a value given can be told from the default.
 */
function ValidateMaxDistance({ default: fallback, maximum, ...options }: FieldOptions & { maximum: number }) {
  const unitOf = (request: object) => (request as { distance_unit?: unknown }).distance_unit ?? 'mi';
  const withRegion = (request: object) => (request as { region?: unknown }).region != null;
  const bound = (unit: 'mi' | 'km') => (unit === 'km' ? Math.round(maximum * KM_PER_MILE * 1e6) / 1e6 : maximum);
  const isMaxDistance = ValidateBy({
    name: 'isMaxDistance',
    validator: {
      validate(value: unknown, args?: ValidationArguments) {
        if (withRegion(args!.object)) return false;
        const unit = unitOf(args!.object);
        // A unit that is neither is distance_unit's own 400; the distance is not judged by it.
        if (unit !== 'mi' && unit !== 'km') return true;
        return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= bound(unit);
      },
      defaultMessage({ property, object }: ValidationArguments) {
        if (withRegion(object)) return `${property} cannot be given with region: a region search takes every store of the region, at any distance`;
        const unit = unitOf(object) as 'mi' | 'km';
        return `${property} must be a number of ${UNIT_WORDS[unit]} greater than 0 and at most ${bound(unit)}`;
      },
    },
  });
  return applyDecorators(
    ApiPropertyOptional({ type: 'number', format: 'float', default: fallback, minimum: 0, exclusiveMinimum: true, maximum, ...options }),
    IsOptional(),
    isMaxDistance,
  );
}

/** `distance_unit`: "mi" or "km", exactly. */
function ValidateDistanceUnit(options: FieldOptions) {
  return ValidateField(
    { type: 'string', enum: [...DISTANCE_UNITS], optional: true, ...options },
    ValidateBy({
      name: 'isDistanceUnit',
      validator: {
        validate: (value: unknown) => (DISTANCE_UNITS as readonly unknown[]).includes(value),
        defaultMessage: ({ property }: ValidationArguments) => `${property} must be "mi" or "km"`,
      },
    }),
  );
}

/** `nearest_if_none`: a JSON boolean; true only for a radius search (a region has no radius to look beyond). */
function ValidateNearestIfNone(options: FieldOptions) {
  return ValidateField(
    { type: 'boolean', optional: true, ...options },
    ValidateBy({
      name: 'isNearestIfNone',
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          typeof value === 'boolean' && !(value && (args?.object as { region?: unknown }).region != null),
        defaultMessage: ({ property, value }: ValidationArguments) =>
          typeof value === 'boolean'
            ? `${property} cannot be given with region: a region search has no radius to look beyond`
            : `${property} must be true or false`,
      },
    }),
  );
}

/** The ways to travel a search can order by (`travel_mode`): driving, for now. */
export const TRAVEL_MODES = ['driving'] as const;
export type TravelMode = (typeof TRAVEL_MODES)[number];
/** The longest `max_travel_time`, in minutes: ten hours. */
export const MAX_TRAVEL_MINUTES = 600;

/** `travel_mode`: one of TRAVEL_MODES, exactly. */
function ValidateTravelMode(options: FieldOptions) {
  return ValidateField(
    { type: 'string', enum: [...TRAVEL_MODES], optional: true, ...options },
    ValidateBy({
      name: 'isTravelMode',
      validator: {
        validate: (value: unknown) => (TRAVEL_MODES as readonly unknown[]).includes(value),
        defaultMessage: ({ property }: ValidationArguments) => `${property} must be "driving"`,
      },
    }),
  );
}

/** `max_travel_time`: minutes, greater than 0 and at most MAX_TRAVEL_MINUTES, and only beside `travel_mode` (the times it bounds). */
function ValidateMaxTravelTime(options: FieldOptions) {
  const inRange = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TRAVEL_MINUTES;
  return ValidateField(
    { type: 'number', format: 'float', minimum: 0, exclusiveMinimum: true, maximum: MAX_TRAVEL_MINUTES, optional: true, ...options },
    ValidateBy({
      name: 'isMaxTravelTime',
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => inRange(value) && (args?.object as { travel_mode?: unknown }).travel_mode != null,
        defaultMessage: ({ property, value }: ValidationArguments) =>
          inRange(value)
            ? `${property} needs travel_mode: the travel times it bounds`
            : `${property} must be a number of minutes greater than 0 and at most ${MAX_TRAVEL_MINUTES}`,
      },
    }),
  );
}

/**
 * The box of the US and its territories a device position must lie in: latitudes from American
 * Samoa (-14.5) to the north of Alaska (71.4); longitudes west of the Virgin Islands (-64.6) back
 * across the antimeridian to Guam (144.6 E), which takes in the Aleutians and the Northern Marianas.
 */
export const US_LATITUDES = [-15, 72] as const;
export const US_LONGITUDES = { west: 144, east: -64 } as const;

const inUsLatitudes = (value: number) => value >= US_LATITUDES[0] && value <= US_LATITUDES[1];
const inUsLongitudes = (value: number) => value >= -180 && value <= 180 && (value <= US_LONGITUDES.east || value >= US_LONGITUDES.west);

/** A device's coordinate: a JSON number of degrees in the US box, and given with its partner. */
function ValidateDegrees(partner: 'lat' | 'lng', inRange: (value: number) => boolean, range: string, options: FieldOptions) {
  return ValidateField(
    { type: 'number', format: 'double', optional: true, ...options },
    ValidateBy({
      name: 'isUsDegrees',
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          typeof value === 'number' && Number.isFinite(value) && inRange(value) && (args?.object as Record<string, unknown>)[partner] !== undefined,
        defaultMessage: ({ property, value, object }: ValidationArguments) =>
          typeof value === 'number' && Number.isFinite(value) && inRange(value) && (object as Record<string, unknown>)[partner] === undefined
            ? `${property} and ${partner} must be given together`
            : `${property} must be a number of degrees within the US and its territories (${range})`,
      },
    }),
  );
}

/** `open_at`: "now", or an RFC 3339 date-time with an offset (parseDateTime). */
export const OPEN_AT_NOW = 'now';
const OPEN_AT_RULE = 'open_at must be "now" or an RFC 3339 date-time with an offset from 1970 on, such as 2026-11-25T14:30:00-05:00';

function ValidateOpenAt(options: FieldOptions) {
  return ValidateField(
    { type: 'string', optional: true, ...options },
    ValidateBy({
      name: 'isOpenAt',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && (value === OPEN_AT_NOW || parseDateTime(value) !== undefined),
        defaultMessage: () => OPEN_AT_RULE,
      },
    }),
  );
}

/**
 * `open_only`: a JSON boolean, and only beside `open_at` (there is no moment to be open at
 * otherwise). Its `null` is "not given", as every field's, not the documented default `false`:
 * `false` without `open_at` is refused, and a client that sends null asked for neither.
 */
function ValidateOpenOnly({ default: documented, ...options }: FieldOptions) {
  return applyDecorators(
    ValidateField(
      { type: 'boolean', optional: true, ...options },
      ValidateBy({
        name: 'isOpenOnly',
        validator: {
          validate: (value: unknown, args?: ValidationArguments) =>
            typeof value === 'boolean' && (args?.object as Record<string, unknown>).open_at !== undefined,
          defaultMessage: ({ value }: ValidationArguments) =>
            typeof value === 'boolean' ? 'open_only needs open_at: the moment the stores must be open at' : 'open_only must be true or false',
        },
      }),
    ),
    ApiPropertyOptional({ default: documented }),
  );
}

/** The most services one search may ask for: more than a chain offers. */
export const MAX_SEARCH_SERVICES = 32;

/**
 * A list of distinct strings each of which `isEntry` accepts, at most `max` of them; `rule` words an
 * entry that is not (whether the chain has a service is the index's to say: a 400 of its own).
 */
function ValidateList(options: FieldOptions & { max: number; rule: string; isEntry: (entry: string) => boolean }) {
  const { max, rule, isEntry, ...schema } = options;
  return ValidateField(
    { type: [String], optional: true, maxItems: max, uniqueItems: true, ...schema },
    ValidateBy({
      name: 'isSearchList',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.length <= max &&
          value.every((entry) => typeof entry === 'string' && isEntry(entry)) &&
          new Set(value).size === value.length,
        defaultMessage: ({ property, value }: ValidationArguments) => {
          if (!Array.isArray(value)) return `${property} must be a list`;
          if (value.length > max) return `${property} must have at most ${max} entries`;
          const bad: unknown = value.find((entry) => typeof entry !== 'string' || !isEntry(entry));
          // The pipe puts the field before words that do not start with it: `services: "Valet" must be …`.
          if (bad !== undefined) return `${JSON.stringify(bad)} ${rule}`;
          return `${property} names an entry twice`;
        },
      },
    }),
  );
}

export const DEFAULT_MAX_DISTANCE = 5;
const DEFAULT_LIMIT = 25;

@ApiSchema({
  name: 'CustomerAddress',
  description:
    "The customer's address, and optionally the device's position. The search measures from `lat`/`lng` when given; else, where the service has a geocoder (GEOCODER), from the street address; else from the ZIP code's point. The `Customer-Position` header of the answer says which.",
})
export class CustomerAddress {
  @ValidateText({ optional: true, description: 'Street address.', maxLength: 200, example: '350 5th Ave' })
  address?: string;

  @ValidateText({ optional: true, description: 'City name.', maxLength: 200, example: 'New York' })
  city?: string;

  @ValidateUsState({ optional: true, description: 'State code: a US state or territory, two letters, any case.', example: 'NY' })
  state?: string;

  @ValidateZip({
    description: 'ZIP code, a string: `12345`, `12345-6789` or `123456789` (surrounding white space ignored; the first five digits are used).',
    example: '10001',
  })
  zip: string;

  @ValidateDegrees('lng', inUsLatitudes, '-15 to 72', {
    description:
      "The customer's latitude in degrees, e.g. from the phone's location (an extension of this service): with `lng`, it takes precedence over the address. Within the US and its territories: -15 to 72.",
    example: 40.748441,
  })
  lat?: number;

  @ValidateDegrees('lat', inUsLongitudes, '-180 to -64, or 144 to 180', {
    description:
      "The customer's longitude in degrees, with `lat`. Within the US and its territories: -180 to -64, or 144 to 180 (Guam, the Northern Marianas, the western Aleutians).",
    example: -73.985664,
  })
  lng?: number;
}

/**
 * `region`: checked by these decorators, and written inline in the request's schema (REGION_PROPERTIES)
 * rather than as a schema of its own, so that the document's schemas stay the spec's.
 */
export class SearchRegion {
  @ValidateUsState({ description: 'State code: a US state or territory, two letters, any case.', example: 'KS' })
  state: string;

  @ValidateText({
    optional: true,
    minLength: 1,
    maxLength: 200,
    notBlank: true,
    description: "Only the stores of this city of the state, compared without regard to case or surrounding white space (`' garden city '` is `Garden City`).",
    example: 'Garden City',
  })
  city?: string;
}

const REGION_PROPERTIES = {
  state: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'State code: a US state or territory, two letters, any case.', example: 'KS' },
  city: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: "Only the stores of this city of the state, compared without regard to case or surrounding white space (`' garden city '` is `Garden City`).",
    example: 'Garden City',
  },
} as const;

@ApiSchema({ name: 'NearestLocationsRequest' })
export class NearestLocationsRequest {
  @ApiProperty({ type: CustomerAddress })
  @IsObject({ message: 'customer_address must be an object' })
  @ValidateNested()
  @Type(() => CustomerAddress)
  customer_address: CustomerAddress;

  @ValidateMaxDistance({
    default: DEFAULT_MAX_DISTANCE,
    maximum: 500,
    description:
      'Maximum search distance in `distance_unit` (miles by default): greater than 0, at most 500 miles, or 804.672 with `distance_unit` `"km"` (the same distance). Default: 5 (in the unit of the request). Not with `region`.',
    example: 5,
  })
  max_distance?: number | null;

  @ValidateInteger({
    optional: true,
    minimum: 1,
    maximum: 200,
    default: DEFAULT_LIMIT,
    description: 'Maximum number of locations returned (an extension of this service). Default: 25.',
    example: 25,
  })
  limit: number = DEFAULT_LIMIT;

  @ValidateOpenAt({
    description:
      'Ask about a moment (an extension of this service): `"now"`, or an RFC 3339 date-time with an offset (`2026-11-25T14:30:00-05:00`, `2026-11-25T19:30:00Z`). Each location then also carries `open`, `time_zone`, `next_change` and `hours_today`, worked out in the store\'s own time zone from its weekly hours, its special days, a temporary closure and the chain\'s holidays. Left out: the locations are exactly as without it.',
    example: 'now',
  })
  open_at?: string;

  @ValidateOpenOnly({
    description: 'With `open_at`: only the stores open at that moment; `limit` then counts open stores. Default: false.',
    default: false,
    example: false,
  })
  open_only?: boolean;

  @ValidateDistanceUnit({
    description:
      'The unit of `max_distance` and of each location\'s `distance` (an extension of this service): `"mi"` or `"km"` (1 mi = 1.609344 km). The `Distance-Unit` header of the answer repeats it. Default: `"mi"`.',
    default: 'mi',
    example: 'km',
  })
  distance_unit?: 'mi' | 'km';

  @ValidateNearestIfNone({
    description:
      'When no store is within `max_distance` (open at `open_at`, with `open_only`), answer the single nearest one (nearest open one) at whatever distance instead of an empty list (an extension of this service); the `Search-Scope` header then says `nearest`. Still empty when there is no store (or none open) at all. Not `true` with `region`. Default: false.',
    default: false,
    example: true,
  })
  nearest_if_none?: boolean;

  @ValidateTravelMode({
    description:
      'Order the stores by travel time instead (an extension of this service): `"driving"`. The stores are the ones the search finds without it (radius, `region`, `nearest_if_none`, `open_only`); each location then also carries `travel_time` and `travel_distance`, and the `Travel-Source` header says where the times came from. When the service has no routing engine, or it fails or is slow, the answer is the straight-line one with both fields null and `Travel-Source: straight-line`.',
    example: 'driving',
  })
  travel_mode?: TravelMode;

  @ValidateMaxTravelTime({
    description:
      'With `travel_mode`: leave out the stores further than this many minutes away (and those no road reaches). Not applied to a straight-line answer (`Travel-Source: straight-line`), which has no times to compare.',
    example: 20,
  })
  max_travel_time?: number;

  @ValidateList({
    max: MAX_SEARCH_SERVICES,
    rule: SERVICE_SLUG_RULE,
    isEntry: (slug) => SERVICE_SLUG.test(slug),
    description:
      'Only the stores that offer every one of these services of the chain, by slug (an extension of this service), with whatever else the request asks (radius, `region`, `nearest_if_none`, `open_only`, `travel_mode`): `limit` then counts such stores. A slug the chain does not have is a 400 naming it. Each once, at most 32. Left out or `[]`: every store.',
    example: ['curbside_pickup'],
  })
  services?: string[];

  @ValidateList({
    max: INCLUDE_NAMES.length,
    rule: `is not one of ${INCLUDE_NAMES.join(', ')}`,
    isEntry: (name) => (INCLUDE_NAMES as readonly string[]).includes(name),
    items: { type: 'string', enum: [...INCLUDE_NAMES] },
    description: `Fields to add to each location (an extension of this service), each once: ${INCLUDE_NAMES.map((name) => `\`${name}\``).join(', ')}. They follow the location's other fields, in this order whatever the request's. Left out or \`[]\`: the locations are exactly as without it.`,
    example: ['code', 'services'],
  })
  include?: IncludeName[];

  // Not ValidateField: ApiPropertyOptional would overwrite the object's own `required` list.
  @ApiProperty({
    type: 'object',
    properties: REGION_PROPERTIES,
    required: ['state'],
    selfRequired: false,
    description:
      'Every store of a state (`{"state": "KS"}`) or of a city of it (`{"state": "KS", "city": "Garden City"}`), nearest first from the customer\'s position, at most `limit`, whatever the distance (an extension of this service): `max_distance` is not given with it. `open_at`, `open_only` and `distance_unit` apply as to a radius search. The `Search-Scope` header then says `region`.',
  })
  @Transform(({ value }: { value: unknown }) => (value === null ? undefined : value))
  @IsOptional()
  @IsObject({ message: 'region must be an object' })
  @ValidateNested()
  @Type(() => SearchRegion)
  region?: SearchRegion;
}

/**
 * The request body's examples, offered by Swagger UI (the first one fills the body): a radius search
 * first, as a first-time user expects, then each extension. Every one answers 200 on the demo stores.
 */
export const NEAREST_REQUEST_EXAMPLES = {
  radius: { summary: 'Stores within 5 miles of a ZIP code', value: { customer_address: { zip: '10001' }, max_distance: 5 } },
  kilometres: { summary: 'Stores within 8 km, distances in kilometres', value: { customer_address: { zip: '10001' }, max_distance: 8, distance_unit: 'km' } },
  nearest: { summary: 'The nearest store, however far, when none is within 5 miles', value: { customer_address: { zip: '59001' }, nearest_if_none: true } },
  region: {
    summary: 'Every store of a city, nearest first',
    value: { customer_address: { zip: '10001' }, region: { state: 'NY', city: 'New York' }, limit: 10 },
  },
  include: {
    summary: "Stores within 5 miles, with each one's code and services",
    value: { customer_address: { zip: '10001' }, include: ['code', 'services'] },
  },
  openNow: { summary: 'The stores open now within 2 miles', value: { customer_address: { zip: '10001' }, max_distance: 2, open_at: 'now', open_only: true } },
  driving: {
    summary: 'The stores within a 15-minute drive, quickest first',
    value: { customer_address: { zip: '10001' }, max_distance: 10, travel_mode: 'driving', max_travel_time: 15 },
  },
};

const hours = (day: string, example: string) =>
  ApiProperty({ description: `Hours on ${day}: "Closed", or ranges like "9:00 AM - 6:00 PM" joined by ", ".`, example });

@ApiSchema({ name: 'BusinessHours', description: 'Weekly hours: exactly seven fields, one per weekday.' })
export class BusinessHours {
  @hours('Monday', '9:00 AM - 6:00 PM') Monday: string;
  @hours('Tuesday', '9:00 AM - 6:00 PM') Tuesday: string;
  @hours('Wednesday', '9:00 AM - 6:00 PM') Wednesday: string;
  @hours('Thursday', '9:00 AM - 8:00 PM') Thursday: string;
  @hours('Friday', '9:00 AM - 8:00 PM') Friday: string;
  @hours('Saturday', '10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM') Saturday: string;
  @hours('Sunday', 'Closed') Sunday: string;
}

@ApiSchema({ name: 'HoursToday', description: "A store's hours on its own local date at `open_at`, and what decided them." })
export class HoursToday {
  @ApiProperty({ description: "The store's local date at `open_at`.", format: 'date', example: '2026-12-24' }) date: string;
  @ApiProperty({ description: 'Its hours that day: `Closed`, or ranges as `business_hours` writes them.', example: '9:00 AM - 2:00 PM' }) hours: string;
  @ApiProperty({
    description:
      "What decided them, in this order of precedence: `temporarily_closed` (a closure holds), `special` (the store's own special day), `holiday` (the chain's holiday), else `weekly` (the weekday's hours).",
    enum: ['weekly', 'special', 'holiday', 'temporarily_closed'],
    example: 'special',
  })
  kind: string;
  @ApiProperty({ description: "The holiday's name when a holiday decided the day; else null.", type: 'string', nullable: true, example: null })
  holiday: string | null;
}

@ApiSchema({ name: 'Location', description: 'A store location.' })
export class Location {
  @ApiProperty({ description: 'Location name.', example: 'Fern & Fig Chelsea' }) name: string;
  @ApiProperty({ description: 'Street address.', example: '214 Linden Avenue' }) address: string;
  @ApiProperty({ description: 'City name.', example: 'New York' }) city: string;
  @ApiProperty({ description: 'State code.', example: 'NY' }) state: string;
  @ApiProperty({ description: 'ZIP code.', example: '10001' }) zip: string;
  @ApiProperty({ type: BusinessHours }) business_hours: BusinessHours;
  @ApiProperty({ description: 'Latitude, carried as a string with six decimals.', example: '40.750650' }) lat: string;
  @ApiProperty({ description: 'Longitude, carried as a string with six decimals.', example: '-73.997293' }) lng: string;
  @ApiProperty({
    type: 'number',
    format: 'float',
    description:
      "Great-circle distance from the customer's position (see the `Customer-Position` header), in the request's `distance_unit` (miles by default; see the `Distance-Unit` header), rounded to two decimals.",
    example: 0.42,
  })
  distance: number;

  @ApiPropertyOptional({ description: "Only with `open_at`: whether the store is open at that moment, in its own time zone's wall-clock time.", example: true })
  open?: boolean;

  @ApiPropertyOptional({ description: 'Only with `open_at`: the IANA time zone the hours are in.', example: 'America/New_York' })
  time_zone?: string;

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      "Only with `open_at`: when the store next opens (if closed) or closes (if open) after that moment, RFC 3339 with the store's UTC offset then, following its special days, a temporary closure and the chain's holidays (so possibly weeks ahead: the end of a closure); null for a store that never changes (closed every day, open around the clock, closed until further notice) or whose next change is more than 400 days ahead.",
    example: '2026-11-25T18:00:00-05:00',
  })
  next_change?: string | null;

  @ApiPropertyOptional({ type: HoursToday, description: "Only with `open_at`: the store's hours on its local date at that moment, and what decided them." })
  hours_today?: HoursToday;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    nullable: true,
    description:
      "Only with `travel_mode`: the time to get there from the customer's position, in minutes with one decimal; null when no road reaches the store or the answer is the straight-line one (`Travel-Source: straight-line`).",
    example: 7.9,
  })
  travel_time?: number | null;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    nullable: true,
    description: "Only with `travel_mode`: the distance by road, in the request's `distance_unit`, two decimals; null when `travel_time` is.",
    example: 4.88,
  })
  travel_distance?: number | null;

  // The fields `include` can add, in the field table's order (INCLUDE_NAMES), as they are written.
  @ApiPropertyOptional({ description: "Only with `include` naming it: the store's code, its key.", example: 'NY-0042' })
  code?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "Only with `include` naming it: the store's phone number in E.164, or null.",
    example: '+12125550142',
  })
  phone?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "Only with `include` naming it: the store's website, or null.",
    example: 'https://fernandfig.example/chelsea',
  })
  website?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: "Only with `include` naming it: the store's email address, or null.",
    example: 'chelsea@fernandfig.example',
  })
  email?: string | null;

  @ApiPropertyOptional({
    type: [String],
    description: "Only with `include` naming it: the store's services, by slug, sorted (`GET /admin/services` names them).",
    example: ['curbside_pickup', 'delivery'],
  })
  services?: string[];
}

@ApiSchema({ name: 'NearestLocationsResponse' })
export class NearestLocationsResponse {
  @ApiProperty({ description: 'Response status code (capital C): "Success" for a successful search.', example: 'Success' })
  Code: string;

  @ApiProperty({
    type: Location,
    isArray: true,
    description:
      'Locations within max_distance (or of the region, or the single nearest store: see the `Search-Scope` header), nearest first (ties by name, then store code); empty when none.',
  })
  locations: Location[];
}
