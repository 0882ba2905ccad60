import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsObject, IsString, Matches, ValidateBy, ValidateNested, type ValidationArguments } from 'class-validator';
import { type FieldOptions, ValidateField, ValidateInteger, ValidateText } from '../../common/validators.js';
import { ValidateUsState } from '../../geo/validate-us-state.js';
import { ZIP_PATTERN } from '../../geo/zip-geocoder.js';

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

/** A JSON number of miles, > 0 and <= maximum; one message for every failure. */
function ValidateMiles({ default: fallback, maximum, ...options }: FieldOptions & { maximum: number }) {
  const isMiles = ValidateBy({
    name: 'isMiles',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= maximum,
      defaultMessage: ({ property }: ValidationArguments) => `${property} must be a number of miles greater than 0 and at most ${maximum}`,
    },
  });
  return ValidateField({ type: 'number', format: 'float', default: fallback, minimum: 0, exclusiveMinimum: true, maximum, ...options }, isMiles);
}

const DEFAULT_MAX_DISTANCE = 5;
const DEFAULT_LIMIT = 25;

@ApiSchema({ name: 'CustomerAddress', description: "The customer's address; only the ZIP code decides the search point." })
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
}

@ApiSchema({ name: 'NearestLocationsRequest' })
export class NearestLocationsRequest {
  @ApiProperty({ type: CustomerAddress })
  @IsObject({ message: 'customer_address must be an object' })
  @ValidateNested()
  @Type(() => CustomerAddress)
  customer_address: CustomerAddress;

  @ValidateMiles({
    optional: true,
    default: DEFAULT_MAX_DISTANCE,
    maximum: 500,
    description: 'Maximum search distance in miles: greater than 0, at most 500. Default: 5.',
    example: 5,
  })
  max_distance: number = DEFAULT_MAX_DISTANCE;

  @ValidateInteger({
    optional: true,
    minimum: 1,
    maximum: 200,
    default: DEFAULT_LIMIT,
    description: 'Maximum number of locations returned (an extension of this service). Default: 25.',
    example: 25,
  })
  limit: number = DEFAULT_LIMIT;
}

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
  @ApiProperty({ type: 'number', format: 'float', description: 'Great-circle distance from the customer\'s ZIP point, in miles, rounded to two decimals.', example: 0.42 })
  distance: number;
}

@ApiSchema({ name: 'NearestLocationsResponse' })
export class NearestLocationsResponse {
  @ApiProperty({ description: 'Response status code (capital C): "Success" for a successful search.', example: 'Success' })
  Code: string;

  @ApiProperty({ type: Location, isArray: true, description: 'Locations within max_distance, nearest first (ties by name, then store code); empty when none.' })
  locations: Location[];
}
