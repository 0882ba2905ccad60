import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, ValidateNested, registerDecorator } from 'class-validator';
import { IsIntegerIn, IsText, NullMeansDefault } from '../../common/validators.js';
import { isUsStateCode } from '../us-states.js';
import { ZIP_PATTERN } from '../zip-geocoder.js';

function IsUsState() {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isUsState',
      target: object.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isUsStateCode(value),
        defaultMessage: () => `${propertyName} must be a US state or territory code such as NY`,
      },
    });
}

const DEFAULT_MAX_DISTANCE = 5;
const DEFAULT_LIMIT = 25;

/** A JSON number of miles, > 0 and <= max; one message for every failure. */
function IsMiles(max: number) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isMiles',
      target: object.constructor,
      propertyName,
      options: { message: `${propertyName} must be a number of miles greater than 0 and at most ${max}` },
      validator: { validate: (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= max },
    });
}

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

@ApiSchema({ name: 'CustomerAddress', description: "The customer's address; only the ZIP code decides the search point." })
export class CustomerAddress {
  @ApiPropertyOptional({ description: 'Street address.', maxLength: 200, example: '350 5th Ave' })
  @IsOptional()
  @IsText(200, { allowEmpty: true })
  address?: string;

  @ApiPropertyOptional({ description: 'City name.', maxLength: 200, example: 'New York' })
  @IsOptional()
  @IsText(200, { allowEmpty: true })
  city?: string;

  @ApiPropertyOptional({ description: 'State code: a US state or territory, two letters, any case.', pattern: '^[A-Za-z]{2}$', example: 'NY' })
  @IsOptional()
  @IsUsState()
  state?: string;

  @ApiProperty({
    description: 'ZIP code, a string: `12345`, `12345-6789` or `123456789` (surrounding white space ignored; the first five digits are used).',
    pattern: '^\\s*[0-9]{5}(-?[0-9]{4})?\\s*$',
    example: '10001',
  })
  @Transform(trim)
  @IsString()
  @Matches(ZIP_PATTERN, { message: 'zip must be a US ZIP code such as 12345 or 12345-6789' })
  zip: string;
}

@ApiSchema({ name: 'NearestLocationsRequest' })
export class NearestLocationsRequest {
  @ApiProperty({ type: CustomerAddress })
  @IsObject({ message: 'customer_address must be an object' })
  @ValidateNested()
  @Type(() => CustomerAddress)
  customer_address: CustomerAddress;

  @ApiProperty({
    type: 'number',
    format: 'float',
    required: false,
    default: 5,
    minimum: 0,
    exclusiveMinimum: true,
    maximum: 500,
    description: 'Maximum search distance in miles: greater than 0, at most 500. Default: 5.',
    example: 5,
  })
  @NullMeansDefault(DEFAULT_MAX_DISTANCE)
  @IsOptional()
  @IsMiles(500)
  max_distance: number = DEFAULT_MAX_DISTANCE;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 25, description: 'Maximum number of locations returned (an extension of this service). Default: 25.', example: 25 })
  @NullMeansDefault(DEFAULT_LIMIT)
  @IsOptional()
  @IsIntegerIn(1, 200, 'limit must be an integer from 1 to 200')
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
