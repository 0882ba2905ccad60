import type { CatalogStore } from '../stores/store-catalog.js';
import { buildSnapshot, cityKey, GROUP_TREE_MIN, locationBytes, writeLocation, type Snapshot } from './store-snapshot.js';

const WEEK = {
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: 'Closed',
  thursday: 'Closed',
  friday: 'Closed',
  saturday: 'Closed',
  sunday: 'Closed',
};

const store = (code: string, name: string, lat: number | string, lng: number | string, hours: Partial<typeof WEEK> = {}): CatalogStore => ({
  code,
  name,
  address: `${code} Main St`,
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat,
  lng,
  ...WEEK,
  ...hours,
  time_zone: 'America/New_York',
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services: '',
});

/** Store n's Location as the response carries it, without `distance`. */
function location(snapshot: Snapshot, n: number): unknown {
  const bytes = Buffer.alloc(locationBytes(snapshot, n));
  expect(writeLocation(snapshot, n, bytes, 0)).toBe(bytes.length);
  return JSON.parse(`${bytes.toString('utf8')}}`);
}

describe('buildSnapshot', () => {
  it('writes each store as a Location, hours in place, coordinates with six decimals, across pages', async () => {
    // DECIMAL comes as text from mysql2 and as a number from better-sqlite3; multi-byte text shifts byte offsets.
    const snapshot = await buildSnapshot(7, [
      [store('A', 'Café "Ferns"', '40.750650', '-73.997293')],
      [store('B', 'Ñandú', 34.1, -118.4, { sunday: '10:00 AM - 2:00 PM' })],
    ]);
    expect(snapshot.version).toBe(7);
    expect(location(snapshot, 0)).toEqual({
      name: 'Café "Ferns"',
      address: 'A Main St',
      city: 'New York',
      state: 'NY',
      zip: '10001',
      business_hours: {
        Monday: WEEK.monday,
        Tuesday: WEEK.tuesday,
        Wednesday: 'Closed',
        Thursday: 'Closed',
        Friday: 'Closed',
        Saturday: 'Closed',
        Sunday: 'Closed',
      },
      lat: '40.750650',
      lng: '-73.997293',
    });
    expect(location(snapshot, 1)).toMatchObject({ name: 'Ñandú', lat: '34.100000', lng: '-118.400000', business_hours: { Sunday: '10:00 AM - 2:00 PM' } });
    expect(Array.from(snapshot.points)).toEqual([-73.997293, 40.75065, -118.4, 34.1]);
  });

  it('keeps each distinct week of hours once', async () => {
    const snapshot = await buildSnapshot(1, [[store('A', 'a', 1, 1), store('B', 'b', 2, 2, { sunday: 'Open' }), store('C', 'c', 3, 3)]]);
    expect(snapshot.hours).toHaveLength(2);
    expect(Array.from(snapshot.hoursOf)).toEqual([0, 1, 0]);
  });

  it('keeps each distinct (week, zone) schedule once, for open_at', async () => {
    const snapshot = await buildSnapshot(1, [
      [store('A', 'a', 40.7, -74), { ...store('B', 'b', 31.76, -106.48), time_zone: 'America/Denver' }, store('C', 'c', 40.8, -74)],
    ]);
    expect(snapshot.schedules.map((s) => s.zone)).toEqual(['America/New_York', 'America/Denver']);
    expect(Array.from(snapshot.scheduleOf)).toEqual([0, 1, 0]);
  });

  it("loads a row edited by hand past the checks: hours that do not parse are closed, an unknown zone gives way to the coordinates'", async () => {
    const snapshot = await buildSnapshot(1, [
      [{ ...store('EP', 'El Paso', 31.76, -106.48, { monday: 'Open', tuesday: '9:00 AM - 6:00 PM' }), time_zone: 'Mars/Olympus' }],
    ]);
    const [{ hours, zone }] = snapshot.schedules;
    expect(zone).toBe('America/Denver');
    expect(hours.days.slice(0, 2)).toEqual([[], [[540, 1080]]]);
  });

  it('ranks stores by name, then code, for distance ties', async () => {
    const snapshot = await buildSnapshot(1, [[store('Z2', 'Beta', 0, 0), store('Z1', 'Beta', 0, 0), store('A9', 'Alpha', 0, 0)]]);
    expect(Array.from(snapshot.rank)).toEqual([2, 1, 0]);
  });

  it("keeps the stores' JSON in pieces of 2,048 stores, each store whole in its own, whatever the pages it was read in", async () => {
    const count = 4100;
    // Pages of 1,000 and names of one to three bytes a character: pieces and pages do not line up, nor bytes and characters.
    const names = Array.from({ length: count }, (_, n) => `${'é'.repeat(n % 3)}Store ${n}`);
    const pages = Array.from({ length: Math.ceil(count / 1000) }, (_, p) =>
      names.slice(p * 1000, (p + 1) * 1000).map((name, i) => store(`C${p * 1000 + i}`, name, 40 + (p * 1000 + i) / 1e4, -74)),
    );
    const snapshot = await buildSnapshot(1, pages);
    expect(snapshot.json).toHaveLength(3);
    expect(Array.from(snapshot.jsonStarts)).toEqual([0, snapshot.offsets[2048], snapshot.offsets[4096]]);
    expect(snapshot.json.reduce((bytes, piece) => bytes + piece.length, 0)).toBe(snapshot.offsets[count]);
    for (const n of [0, 2047, 2048, 4095, 4096, count - 1]) expect(location(snapshot, n)).toMatchObject({ name: names[n], lat: (40 + n / 1e4).toFixed(6) });
  });

  it('an empty catalogue has no tree and no JSON', async () => {
    const snapshot = await buildSnapshot(3, [[]]);
    expect(snapshot.index).toBeUndefined();
    expect(snapshot.rank).toHaveLength(0);
    expect(snapshot.json).toHaveLength(0);
    expect(Array.from(snapshot.offsets)).toEqual([0]);
  });

  it('groups the stores by state (in capitals) and by city within it (without regard to case or surrounding spaces), with a tree for a big group only', async () => {
    const inState = (code: string, state: string, city: string, lat = 40, lng = -74): CatalogStore => ({ ...store(code, code, lat, lng), state, city });
    const big = Array.from({ length: GROUP_TREE_MIN + 1 }, (_, i) => inState(`K${i}`, 'KS', i % 2 ? 'Wichita' : 'Topeka', 37 + i / 100, -97));
    const snapshot = await buildSnapshot(1, [
      [inState('G1', 'KS', 'Garden City'), inState('G2', 'ks', ' garden CITY ')],
      big,
      [inState('GNY', 'NY', 'Garden City')],
    ]);
    const kansas = snapshot.states.get('KS')!;
    expect([...kansas.stores]).toEqual(Array.from({ length: GROUP_TREE_MIN + 3 }, (_, n) => n));
    expect(kansas.index?.numItems).toBe(GROUP_TREE_MIN + 3);
    expect([...kansas.cities.get(cityKey('Garden City'))!.stores]).toEqual([0, 1]);
    expect(kansas.cities.get(cityKey('Garden City'))!.index).toBeUndefined();
    expect(kansas.cities.get('wichita')!.stores).toHaveLength(32);
    expect([...snapshot.states.get('NY')!.stores]).toEqual([GROUP_TREE_MIN + 3]);
    expect(snapshot.states.get('NY')!.index).toBeUndefined();
    expect([...snapshot.states.keys()].sort()).toEqual(['KS', 'NY']);
  });
});
