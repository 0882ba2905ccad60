import { STORE_FIELDS, type CatalogStore } from '../shared/store-fields.js';
import { buildSnapshot, locationBytes, writeLocation } from './store-snapshot.js';

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

// The Location JSON is written by hand (store-snapshot.ts, once per store at load); the store
// field table (shared/store-fields.ts) says which fields the contract's Location shows.
describe('the Location of the search and the store field table', () => {
  it("names exactly the fields the search's Location shows, the hours as its business_hours", async () => {
    const snapshot = await buildSnapshot(1, [[STORE]]);
    const bytes = Buffer.alloc(locationBytes(snapshot, 0));
    writeLocation(snapshot, 0, bytes, 0);
    const location = JSON.parse(`${bytes.toString()}}`) as Record<string, unknown>;
    const shown = STORE_FIELDS.filter((field) => field.location);
    expect(Object.keys(location).sort()).toEqual([...shown.filter((f) => f.kind !== 'hours').map((f) => f.name), 'business_hours'].sort());
    expect(Object.keys(location.business_hours as object)).toEqual(
      shown.filter((f) => f.kind === 'hours').map((f) => `${f.name[0].toUpperCase()}${f.name.slice(1)}`),
    );
  });
});
