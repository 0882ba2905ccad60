import { getMetadataArgsStorage } from 'typeorm';
import { StoreRequest, storeView, StoreView } from './dto/admin-store.dto.js';
import { headerColumns, STORE_CSV_HEADER_RULE, STORE_CSV_REQUIRED_COLUMNS } from './store-csv.js';
import { GUARDED_FIELDS, INDEX_FIELD_NAMES, KEPT_FIELDS, STORE_FIELD_NAMES, STORE_FIELDS, STORED_FIELDS, type CatalogStore } from '../shared/store-fields.js';
import { Store } from './store.entity.js';
import { WEEKDAYS } from '../shared/weekdays.js';

/** The Store entity's columns as TypeORM reads them, by property: the entity is written by hand and must say what the table says. */
function entityColumns() {
  return getMetadataArgsStorage()
    .columns.filter((column) => column.target === Store && column.mode === 'regular' && !column.options.primary)
    .map(({ propertyName, options }) => ({
      propertyName,
      name: options.name ?? propertyName,
      type: options.type,
      length: options.length,
      precision: options.precision,
      scale: options.scale,
    }));
}

/** The properties a class shows in the OpenAPI document, in its order. */
const schemaProperties = (type: object): string[] =>
  ((Reflect.getMetadata('swagger/apiModelPropertiesArray', (type as { prototype: object }).prototype) ?? []) as string[]).map((key) => key.slice(1));

const STORE: CatalogStore = {
  code: 'NY-1',
  name: 'Fern',
  address: '1 Main St',
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat: '40.750650',
  lng: -73.99,
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: '9:00 AM - 6:00 PM',
  thursday: '9:00 AM - 6:00 PM',
  friday: '9:00 AM - 6:00 PM',
  saturday: '10:00 AM - 4:00 PM',
  sunday: 'Closed',
  time_zone: 'America/New_York',
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services: '',
};

describe('the store field table', () => {
  it('is what the Store entity maps: each field a column of its own name, of the type and length its kind says, in the same order', () => {
    const columns = entityColumns();
    expect(columns.map((column) => column.propertyName)).toEqual(STORE_FIELD_NAMES);
    for (const field of STORE_FIELDS) {
      const column = columns.find((c) => c.propertyName === field.name)!;
      expect(column.name).toBe(field.name);
      if (field.kind === 'coordinate') expect(column).toMatchObject({ type: 'decimal', precision: 9, scale: 6 });
      else if (field.kind === 'special_days' || field.kind === 'services') expect(column).toMatchObject({ type: 'text', length: undefined });
      else expect(column).toMatchObject({ type: 'varchar', length: 'length' in field ? field.length : undefined });
    }
  });

  it("keeps the contract's CSV header, the optional columns after it, and the hours as the weekdays in order", () => {
    expect(STORE_CSV_REQUIRED_COLUMNS.join(',')).toBe('code,name,address,city,state,zip,lat,lng,monday,tuesday,wednesday,thursday,friday,saturday,sunday');
    expect(STORE_FIELD_NAMES).toEqual([
      ...STORE_CSV_REQUIRED_COLUMNS,
      'time_zone',
      'special_hours',
      'temporarily_closed',
      'phone',
      'website',
      'email',
      'services',
    ]);
    expect(STORE_CSV_HEADER_RULE).toBe(
      `the header must be exactly: ${STORE_CSV_REQUIRED_COLUMNS.join(',')} (optionally followed by any of ,time_zone,special_hours,temporarily_closed,phone,website,email,services, in this order)`,
    );
    expect(headerColumns([...STORE_CSV_REQUIRED_COLUMNS, ' Special_Hours '])).toEqual([...STORE_CSV_REQUIRED_COLUMNS, 'special_hours']);
    expect(headerColumns([...STORE_CSV_REQUIRED_COLUMNS, 'temporarily_closed', 'time_zone'])).toBeUndefined();
    expect(headerColumns([...STORE_CSV_REQUIRED_COLUMNS, 'time_zone', 'time_zone'])).toBeUndefined();
    expect(KEPT_FIELDS).toEqual(['special_hours', 'temporarily_closed', 'phone', 'website', 'email', 'services']);
    expect(STORE_FIELDS.filter((field) => field.kind === 'hours').map((field) => field.name)).toEqual(WEEKDAYS);
    expect(STORED_FIELDS).toEqual(STORE_FIELD_NAMES.slice(1));
    expect(GUARDED_FIELDS).toEqual(['code', 'name', 'address', 'city', 'phone', 'email']);
    // The contact fields and the services are in the index: a store's page and the search's `include` show them.
    expect(INDEX_FIELD_NAMES.filter((name) => ['phone', 'website', 'email', 'services'].includes(name))).toEqual(['phone', 'website', 'email', 'services']);
    // The search's index reads what its Location shows, the code (ties) and the zone (open_at).
    expect(INDEX_FIELD_NAMES).toEqual(
      expect.arrayContaining(['code', 'time_zone', ...STORE_FIELDS.filter((field) => field.location).map((field) => field.name)]),
    );
  });

  it("gives the admin API's request and view their properties in the table's order", () => {
    expect(schemaProperties(StoreRequest)).toEqual(STORE_FIELDS.filter((field) => 'request' in field).map((field) => field.name));
    expect(schemaProperties(StoreView)).toEqual([...STORE_FIELD_NAMES, 'updated_at']);
    const contact = { phone: '', website: '', email: '' };
    const store = Object.assign(new Store(), { ...STORE, ...contact, lat: 40.75065, lng: -73.99, updatedAt: new Date('2026-11-24T10:00:00Z') });
    expect(JSON.stringify(storeView(store))).toBe(
      JSON.stringify({
        ...STORE,
        lat: '40.750650',
        lng: '-73.990000',
        special_hours: [],
        temporarily_closed: null,
        phone: null,
        website: null,
        email: null,
        services: [],
        updated_at: '2026-11-24T10:00:00.000Z',
      }),
    );
    const reachable = Object.assign(new Store(), {
      ...STORE,
      phone: '+12125550142',
      website: 'https://fernandfig.example/chelsea',
      email: 'chelsea@fernandfig.example',
      updatedAt: new Date('2026-11-24T10:00:00Z'),
    });
    expect(storeView(reachable)).toMatchObject({ phone: '+12125550142', website: 'https://fernandfig.example/chelsea', email: 'chelsea@fernandfig.example' });
    const special = Object.assign(new Store(), {
      ...STORE,
      special_hours: '2026-12-24=9:00 AM - 2:00 PM; 2026-12-25=Closed',
      temporarily_closed: '2027-01-04/..',
      services: 'curbside_pickup|delivery',
      updatedAt: new Date('2026-11-24T10:00:00Z'),
    });
    expect(storeView(special)).toMatchObject({
      special_hours: [
        { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' },
        { date: '2026-12-25', hours: 'Closed' },
      ],
      temporarily_closed: { from: '2027-01-04', until: null },
      services: ['curbside_pickup', 'delivery'],
    });
  });
});
