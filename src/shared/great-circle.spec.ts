import { haversineMiles } from './great-circle.js';

describe('haversineMiles', () => {
  it('is zero for one point and symmetric', () => {
    const a = { lat: 40.75065, lng: -73.997293 };
    const b = { lat: 34.100517, lng: -118.41463 };
    expect(haversineMiles(a, a)).toBe(0);
    expect(haversineMiles(a, b)).toBeCloseTo(haversineMiles(b, a), 9);
  });

  it('matches known distances with R = 3958.8 miles', () => {
    // One degree of latitude is R * pi / 180 miles.
    expect(haversineMiles({ lat: 10, lng: 20 }, { lat: 11, lng: 20 })).toBeCloseTo((3958.8 * Math.PI) / 180, 9);
    // A quarter of the equator.
    expect(haversineMiles({ lat: 0, lng: 0 }, { lat: 0, lng: 90 })).toBeCloseTo((3958.8 * Math.PI) / 2, 9);
  });

  it('agrees with the spherical law of cosines', () => {
    const rad = Math.PI / 180;
    const a = { lat: 40.75065, lng: -73.997293 };
    const b = { lat: 34.100517, lng: -118.41463 };
    const cosines =
      3958.8 * Math.acos(Math.sin(a.lat * rad) * Math.sin(b.lat * rad) + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.cos((b.lng - a.lng) * rad));
    expect(haversineMiles(a, b)).toBeCloseTo(cosines, 6);
  });
});

describe('haversineMiles along any bearing', () => {
  it('puts a point reached by walking `miles` along a bearing exactly `miles` away', () => {
    const center = { lat: 47.6, lng: -122.3 };
    const miles = 50;
    for (let bearing = 0; bearing < 360; bearing += 5) {
      // Walk exactly `miles` along the bearing (spherical destination formula).
      const d = miles / 3958.8;
      const b = (bearing * Math.PI) / 180;
      const lat1 = (center.lat * Math.PI) / 180;
      const lng1 = (center.lng * Math.PI) / 180;
      const lat2 = Math.asin(Math.sin(lat1) * Math.cos(d) + Math.cos(lat1) * Math.sin(d) * Math.cos(b));
      const lng2 = lng1 + Math.atan2(Math.sin(b) * Math.sin(d) * Math.cos(lat1), Math.cos(d) - Math.sin(lat1) * Math.sin(lat2));
      expect(haversineMiles(center, { lat: (lat2 * 180) / Math.PI, lng: (lng2 * 180) / Math.PI })).toBeCloseTo(miles, 6);
    }
  });
});
