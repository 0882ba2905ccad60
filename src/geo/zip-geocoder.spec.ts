import { readFileSync } from 'node:fs';
import { ZIP_POINTS_FILE, ZipGeocoder } from './zip-geocoder.js';

describe('ZipGeocoder', () => {
  const geocoder = new ZipGeocoder();
  const rows = readFileSync(ZIP_POINTS_FILE, 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(','));

  it('knows every ZIP of the packaged file, with its exact point, and no other', () => {
    for (const [zip, lat, lng] of rows) expect(geocoder.lookup(zip)).toEqual({ lat: Number(lat), lng: Number(lng) });
    const known = Array.from({ length: 100_000 }, (_, n) => String(n).padStart(5, '0')).filter((zip) => geocoder.lookup(zip));
    expect(known).toHaveLength(rows.length);
  });

  it('keeps leading zeros apart: 02108 is Boston, 00501 a PO-box ZIP', () => {
    expect(geocoder.lookup('02108')).toEqual({ lat: expect.closeTo(42.36, 1), lng: expect.closeTo(-71.06, 1) });
    expect(geocoder.lookup('00501')).toBeDefined();
    expect(geocoder.lookup('2108')).toBeUndefined();
  });

  it('answers undefined for unknown or malformed ZIPs', () => {
    const known = new Set(rows.map(([zip]) => zip));
    const unknown = ['00000', '99999', '00001'].filter((zip) => !known.has(zip));
    expect(unknown.length).toBeGreaterThan(0);
    for (const zip of unknown) expect(geocoder.lookup(zip)).toBeUndefined();
    for (const zip of ['', '1000', '100011', '1e3 ', ' 10001', '1000a', '-1000', '10001-1234']) expect(geocoder.lookup(zip)).toBeUndefined();
  });
});
