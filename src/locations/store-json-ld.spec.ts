import { schemaOrgProblems } from '../../test/support/schema-org.js';
import { storeJsonLd } from './store-json-ld.js';
import type { StorePage } from './store-page.js';

const NINE_TO_FIVE = [[540, 1020]] as const;

/** A page as storePage makes it; the builder reads only these fields. */
const page = (overrides: Partial<StorePage> = {}): StorePage => ({
  code: 'PS-0001',
  location: {
    name: 'Fern & Fig Chelsea',
    address: '1083 Cedar Lane',
    city: 'New York',
    state: 'NY',
    zip: '10001',
    business_hours: {
      Monday: '9:00 AM - 5:00 PM',
      Tuesday: '9:00 AM - 5:00 PM',
      Wednesday: '9:00 AM - 5:00 PM',
      Thursday: '9:00 AM - 5:00 PM',
      Friday: '9:00 AM - 5:00 PM',
      Saturday: '9:00 AM - 5:00 PM',
      Sunday: 'Closed',
    },
    lat: '40.755823',
    lng: '-74.001164',
  },
  zone: 'America/New_York',
  details: {},
  week: [NINE_TO_FIVE, NINE_TO_FIVE, NINE_TO_FIVE, NINE_TO_FIVE, NINE_TO_FIVE, NINE_TO_FIVE, []],
  days: [],
  closure: null,
  open: true,
  nextChange: '2026-12-18T17:00:00-05:00',
  today: { date: '2026-12-18', hours: '9:00 AM - 5:00 PM', kind: 'weekly', holiday: null },
  changesAt: 0,
  daysChangeAt: 0,
  ...overrides,
});

const ID = 'https://plants.example.com/locations/PS-0001';
const day = (name: string) => `https://schema.org/${name}`;
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

describe('storeJsonLd', () => {
  it("writes the store as schema.org's GardenStore: its address, point and week grouped by equal days", () => {
    const document = storeJsonLd(page(), ID);
    expect(schemaOrgProblems(document)).toEqual([]);
    expect(document).toEqual({
      '@context': 'https://schema.org',
      '@type': 'GardenStore',
      '@id': ID,
      name: 'Fern & Fig Chelsea',
      branchCode: 'PS-0001',
      address: {
        '@type': 'PostalAddress',
        streetAddress: '1083 Cedar Lane',
        addressLocality: 'New York',
        addressRegion: 'NY',
        postalCode: '10001',
        addressCountry: 'US',
      },
      geo: { '@type': 'GeoCoordinates', latitude: 40.755823, longitude: -74.001164 },
      openingHoursSpecification: [
        { '@type': 'OpeningHoursSpecification', dayOfWeek: WEEKDAYS.slice(0, 6).map(day), opens: '09:00', closes: '17:00' },
        { '@type': 'OpeningHoursSpecification', dayOfWeek: [day('Sunday')], opens: '00:00', closes: '00:00' },
      ],
    });
    // No key at all for a detail the store lacks.
    expect(Object.keys(document)).toEqual(['@context', '@type', '@id', 'name', 'branchCode', 'address', 'geo', 'openingHoursSpecification']);
  });

  it('groups days that are not next to each other, keeps each range apart, and writes midnight and a whole day as Google reads them', () => {
    const split = [
      [600, 720],
      [780, 1440],
    ] as const;
    const document = storeJsonLd(page({ week: [split, [[0, 1440]], split, [], [], [[0, 1440]], [[1260, 1440]]] }), ID);
    expect(schemaOrgProblems(document)).toEqual([]);
    expect(document.openingHoursSpecification.map(({ dayOfWeek, opens, closes }) => [dayOfWeek.map((d) => d.slice(19)), opens, closes])).toEqual([
      [['Monday', 'Wednesday'], '10:00', '12:00'],
      // Closing at 12:00 AM: midnight, written 00:00 (a closing before the opening runs into the next day).
      [['Monday', 'Wednesday'], '13:00', '00:00'],
      // Open all day: 00:00 to 23:59, since 00:00 to 00:00 says closed.
      [['Tuesday', 'Saturday'], '00:00', '23:59'],
      [['Thursday', 'Friday'], '00:00', '00:00'],
      [['Sunday'], '21:00', '00:00'],
    ]);
  });

  it('adds each special day and holiday valid on its date only, on its weekday, and a closure on every day of it', () => {
    const document = storeJsonLd(
      page({
        days: [
          { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null, ranges: [[540, 840]] },
          { date: '2026-12-25', hours: 'Closed', kind: 'holiday', holiday: 'Christmas Day', ranges: [] },
        ],
        closure: { from: '2027-01-04', until: '2027-01-10' },
      }),
      ID,
    );
    expect(schemaOrgProblems(document)).toEqual([]);
    expect(document.openingHoursSpecification.slice(2)).toEqual([
      {
        '@type': 'OpeningHoursSpecification',
        dayOfWeek: [day('Thursday')],
        opens: '09:00',
        closes: '14:00',
        validFrom: '2026-12-24',
        validThrough: '2026-12-24',
      },
      {
        '@type': 'OpeningHoursSpecification',
        dayOfWeek: [day('Friday')],
        opens: '00:00',
        closes: '00:00',
        validFrom: '2026-12-25',
        validThrough: '2026-12-25',
      },
      {
        '@type': 'OpeningHoursSpecification',
        dayOfWeek: WEEKDAYS.map(day),
        opens: '00:00',
        closes: '00:00',
        validFrom: '2027-01-04',
        validThrough: '2027-01-10',
      },
    ]);
  });

  it('leaves validThrough out of a closure until further notice', () => {
    const document = storeJsonLd(page({ closure: { from: '2027-01-04', until: null } }), ID);
    expect(document.openingHoursSpecification.at(-1)).toEqual({
      '@type': 'OpeningHoursSpecification',
      dayOfWeek: WEEKDAYS.map(day),
      opens: '00:00',
      closes: '00:00',
      validFrom: '2027-01-04',
    });
  });

  it('writes the contact details and services as telephone, url, email and amenityFeature', () => {
    const details = {
      phone: '+12125550142',
      website: 'https://example.com/stores/chelsea',
      email: 'chelsea@example.com',
      services: [
        { slug: 'plant-doctor', label: 'Plant doctor' },
        { slug: 'repotting', label: 'Repotting' },
      ],
    };
    const document = storeJsonLd(page({ details }), ID);
    expect(schemaOrgProblems(document)).toEqual([]);
    expect(document).toMatchObject({
      telephone: '+12125550142',
      url: 'https://example.com/stores/chelsea',
      email: 'chelsea@example.com',
      amenityFeature: [
        { '@type': 'LocationFeatureSpecification', name: 'Plant doctor', value: true },
        { '@type': 'LocationFeatureSpecification', name: 'Repotting', value: true },
      ],
    });
  });
});

describe('the schema.org checker the specs use', () => {
  it('refuses a property the type does not have, a wrong type, a day outside DayOfWeek and a bad time', () => {
    const document = storeJsonLd(page(), ID) as unknown as Record<string, unknown>;
    const broken = {
      ...document,
      openingHours: 'Mo-Fr 09:00-17:00x',
      geo: { '@type': 'GeoCoordinate', latitude: 1, longitude: 2 },
      openingHoursSpecification: [{ '@type': 'OpeningHoursSpecification', dayOfWeek: ['Mon'], opens: '9:00', closes: '17:00' }],
    };
    expect(schemaOrgProblems(broken)).toEqual([
      '$.geo: @type "GeoCoordinate" is not GeoCoordinates',
      '$.openingHoursSpecification[0].dayOfWeek[0]: not a DayOfWeek: "Mon"',
      '$.openingHoursSpecification[0].opens: expected Time (hh:mm), got "9:00"',
      "$: schema.org's GardenStore has no property openingHours",
    ]);
  });
});
