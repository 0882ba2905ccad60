import { ApiProperty, ApiPropertyOptional, ApiSchema, PickType } from '@nestjs/swagger';
import { CLOSURE_SCHEMA } from '../../stores/dto/admin-store.dto.js';
import { storeJsonLd } from '../store-json-ld.js';
import { PAGE_DAYS, storePageJson, type StorePage } from '../store-page.js';
import { HoursToday, Location } from './nearest-locations.dto.js';

@ApiSchema({ name: 'StoreService', description: 'A service the store offers: its slug and its label in the vocabulary.' })
export class StoreService {
  @ApiProperty({ description: "The service's slug.", example: 'plant-doctor' }) slug: string;
  @ApiProperty({ description: "The service's label.", example: 'Plant doctor' }) label: string;
}

@ApiSchema({ name: 'StoreSpecialDay', description: "A day whose hours are not the weekday's: the store's own special day, or the chain's holiday." })
export class StoreSpecialDay {
  @ApiProperty({ description: "The date, in the store's calendar.", format: 'date', example: '2026-12-24' }) date: string;
  @ApiProperty({ description: 'Its hours: `Closed`, or ranges as `business_hours` writes them.', example: '9:00 AM - 2:00 PM' }) hours: string;
  @ApiProperty({
    description: "What decided them: `special` (the store's own special day, which wins over a holiday) or `holiday` (the chain's holiday).",
    enum: ['special', 'holiday'],
    example: 'special',
  })
  kind: string;
  @ApiProperty({ description: "The holiday's name when a holiday decided the day; else null.", type: 'string', nullable: true, example: null })
  holiday: string | null;
}

@ApiSchema({
  name: 'StorePage',
  description:
    "One store, as `application/json`: the search's Location (without `distance`), its code and time zone, its contact details and services when it has them, its special days ahead, a closure, and whether it is open now.",
})
export class StorePageResponse extends PickType(Location, ['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng'] as const) {
  @ApiProperty({ description: "The store's code, its key (the path).", example: 'PS-0001' }) code: string;
  @ApiProperty({ description: 'The IANA time zone the hours are in.', example: 'America/New_York' }) time_zone: string;
  @ApiPropertyOptional({ description: 'Phone number, E.164; left out when the store has none.', example: '+12125550142' }) phone?: string;
  @ApiPropertyOptional({
    description: "The store's web page (https); left out when it has none.",
    format: 'uri',
    example: 'https://example.com/stores/chelsea',
  })
  website?: string;
  @ApiPropertyOptional({ description: 'E-mail address; left out when the store has none.', format: 'email', example: 'chelsea@example.com' }) email?: string;
  @ApiPropertyOptional({ type: StoreService, isArray: true, description: 'The services the store offers; left out when it lists none.' })
  services?: StoreService[];
  @ApiProperty({
    type: StoreSpecialDay,
    isArray: true,
    description: `The special days and the chain's holidays of the next ${PAGE_DAYS} days (today, in the store's calendar, and the ${PAGE_DAYS - 1} after it), by date; a day that a closure covers is not listed (see \`temporarily_closed\`).`,
  })
  special_days: StoreSpecialDay[];
  @ApiProperty({
    ...CLOSURE_SCHEMA,
    description: 'A temporary closure that has not ended yet (under way or ahead), both dates inclusive; null when there is none.',
  })
  temporarily_closed: { from: string; until: string | null } | null;
  @ApiProperty({ description: "Whether the store is open now, in its own time zone's wall-clock time.", example: true }) open: boolean;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      "When the store next opens (if closed) or closes (if open), RFC 3339 with the store's UTC offset then, following its special days, a closure and the chain's holidays; null for a store that never changes (closed every day, open around the clock, closed until further notice) or whose next change is more than 400 days ahead.",
    example: '2026-11-25T18:00:00-05:00',
  })
  next_change: string | null;
  @ApiProperty({ type: HoursToday, description: "The store's hours today (its own calendar), and what decided them." }) hours_today: HoursToday;
}

// The JSON-LD form: schema.org's types, as Google's LocalBusiness structured data reads them.

@ApiSchema({ name: 'SchemaOrgPostalAddress', description: "schema.org's PostalAddress." })
export class SchemaOrgPostalAddress {
  @ApiProperty({ name: '@type', enum: ['PostalAddress'], example: 'PostalAddress' }) type: string;
  @ApiProperty({ example: '1083 Cedar Lane' }) streetAddress: string;
  @ApiProperty({ description: 'The city.', example: 'New York' }) addressLocality: string;
  @ApiProperty({ description: 'The state code.', example: 'NY' }) addressRegion: string;
  @ApiProperty({ example: '10001' }) postalCode: string;
  @ApiProperty({ description: 'The country, ISO 3166-1 alpha-2.', enum: ['US'], example: 'US' }) addressCountry: string;
}

@ApiSchema({ name: 'SchemaOrgGeoCoordinates', description: "schema.org's GeoCoordinates, in decimal degrees (six decimals)." })
export class SchemaOrgGeoCoordinates {
  @ApiProperty({ name: '@type', enum: ['GeoCoordinates'], example: 'GeoCoordinates' }) type: string;
  @ApiProperty({ type: 'number', example: 40.755823 }) latitude: number;
  @ApiProperty({ type: 'number', example: -74.001164 }) longitude: number;
}

@ApiSchema({
  name: 'SchemaOrgOpeningHoursSpecification',
  description:
    'When the store is open on the days of `dayOfWeek`: `opens` to `closes` (a closing before the opening runs into the next day; `00:00` to `00:00` closed all day; `00:00` to `23:59` open all day). With `validFrom` (and `validThrough`, both inclusive), only on those dates: a special day, a holiday, a closure.',
})
export class SchemaOrgOpeningHoursSpecification {
  @ApiProperty({ name: '@type', enum: ['OpeningHoursSpecification'], example: 'OpeningHoursSpecification' }) type: string;
  @ApiProperty({
    type: 'string',
    isArray: true,
    description: "schema.org's DayOfWeek members.",
    example: ['https://schema.org/Monday', 'https://schema.org/Tuesday'],
  })
  dayOfWeek: string[];
  @ApiProperty({ description: 'Opening time, HH:MM in the store’s time zone.', example: '09:00' }) opens: string;
  @ApiProperty({ description: 'Closing time, HH:MM.', example: '18:00' }) closes: string;
  @ApiPropertyOptional({ format: 'date', example: '2026-12-24' }) validFrom?: string;
  @ApiPropertyOptional({ format: 'date', example: '2026-12-24' }) validThrough?: string;
}

@ApiSchema({ name: 'SchemaOrgLocationFeatureSpecification', description: "A service of the store as schema.org's LocationFeatureSpecification." })
export class SchemaOrgLocationFeatureSpecification {
  @ApiProperty({ name: '@type', enum: ['LocationFeatureSpecification'], example: 'LocationFeatureSpecification' }) type: string;
  @ApiProperty({ description: "The service's label.", example: 'Plant doctor' }) name: string;
  @ApiProperty({ description: 'Always true: the store offers it.', enum: [true], example: true }) value: boolean;
}

@ApiSchema({
  name: 'StorePageJsonLd',
  description:
    "One store, as `application/ld+json`: schema.org's GardenStore (a LocalBusiness), as search engines read a store's page. Its `@id` is the page's URL.",
})
export class StorePageJsonLd {
  @ApiProperty({ name: '@context', enum: ['https://schema.org'], example: 'https://schema.org' }) context: string;
  @ApiProperty({ name: '@type', enum: ['GardenStore'], example: 'GardenStore' }) type: string;
  @ApiProperty({
    name: '@id',
    format: 'uri',
    description: "The page's URL: the store's stable identifier.",
    example: 'https://plants.example.com/locations/PS-0001',
  })
  id: string;
  @ApiProperty({ example: 'Fern & Fig Chelsea' }) name: string;
  @ApiProperty({ description: "The store's code.", example: 'PS-0001' }) branchCode: string;
  @ApiProperty({ type: SchemaOrgPostalAddress }) address: SchemaOrgPostalAddress;
  @ApiProperty({ type: SchemaOrgGeoCoordinates }) geo: SchemaOrgGeoCoordinates;
  @ApiPropertyOptional({ format: 'uri', description: "The store's web page, when it has one.", example: 'https://example.com/stores/chelsea' }) url?: string;
  @ApiPropertyOptional({ description: 'Phone number (E.164), when it has one.', example: '+12125550142' }) telephone?: string;
  @ApiPropertyOptional({ description: 'E-mail address, when it has one.', example: 'chelsea@example.com' }) email?: string;
  @ApiProperty({
    type: SchemaOrgOpeningHoursSpecification,
    isArray: true,
    description: `One per group of weekdays with the same hours (and per range of them), then one per special day or holiday of the next ${PAGE_DAYS} days, then a closure's.`,
  })
  openingHoursSpecification: SchemaOrgOpeningHoursSpecification[];
  @ApiPropertyOptional({ type: SchemaOrgLocationFeatureSpecification, isArray: true, description: 'The services the store offers, when it lists any.' })
  amenityFeature?: SchemaOrgLocationFeatureSpecification[];
}

const NINE_TO_SIX = [[540, 1080]] as const;

/** The documented examples of both forms, written by the page's own writers from one page: a Christmas Eve special day, Christmas Day, a closure in January. */
const EXAMPLE_PAGE: StorePage = {
  code: 'PS-0001',
  location: {
    name: 'Fern & Fig Chelsea',
    address: '1083 Cedar Lane',
    city: 'New York',
    state: 'NY',
    zip: '10001',
    business_hours: {
      Monday: '9:00 AM - 6:00 PM',
      Tuesday: '9:00 AM - 6:00 PM',
      Wednesday: '9:00 AM - 6:00 PM',
      Thursday: '9:00 AM - 6:00 PM',
      Friday: '9:00 AM - 6:00 PM',
      Saturday: '10:00 AM - 4:00 PM',
      Sunday: 'Closed',
    },
    lat: '40.755823',
    lng: '-74.001164',
  },
  zone: 'America/New_York',
  details: {},
  week: [NINE_TO_SIX, NINE_TO_SIX, NINE_TO_SIX, NINE_TO_SIX, NINE_TO_SIX, [[600, 960]], []],
  days: [
    { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null, ranges: [[540, 840]] },
    { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day', ranges: [] },
  ],
  closure: { from: '2027-01-04', until: '2027-01-10' },
  open: true,
  nextChange: '2026-12-18T18:00:00-05:00',
  today: { date: '2026-12-18', hours: '9:00 AM - 6:00 PM', kind: 'weekly', holiday: null },
  changesAt: Date.parse('2026-12-18T18:00:00-05:00'),
  daysChangeAt: Date.parse('2026-12-19T00:00:00-05:00'),
};

export const STORE_PAGE_EXAMPLE: unknown = JSON.parse(storePageJson(EXAMPLE_PAGE));
export const STORE_PAGE_JSON_LD_EXAMPLE = storeJsonLd(EXAMPLE_PAGE, 'https://plants.example.com/locations/PS-0001');
