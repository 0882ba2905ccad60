import { isKnownZone, zoneOf } from './time-zones.js';

describe('zoneOf', () => {
  // Points in the places named (city halls or downtowns), and the zone the tz database gives them.
  it.each([
    ['El Paso, TX (Mountain, unlike the rest of Texas)', 31.7619, -106.485, 'America/Denver'],
    ['Houston, TX', 29.7604, -95.3698, 'America/Chicago'],
    ['Phoenix, AZ (no daylight saving)', 33.4484, -112.074, 'America/Phoenix'],
    ['Tuba City, AZ (Navajo Nation, daylight saving)', 36.1347, -111.2399, 'America/Denver'],
    ['Boise, ID', 43.615, -116.2023, 'America/Boise'],
    ["Coeur d'Alene, ID (Pacific)", 47.6777, -116.7805, 'America/Los_Angeles'],
    ['Ontario, OR (Malheur County, Mountain)', 44.0266, -116.9629, 'America/Boise'],
    ['Portland, OR', 45.5152, -122.6784, 'America/Los_Angeles'],
    ['San Juan, PR', 18.4655, -66.1057, 'America/Puerto_Rico'],
    ['Charlotte Amalie, VI', 18.3419, -64.9307, 'America/St_Thomas'],
    ['Indianapolis, IN', 39.7684, -86.1581, 'America/Indiana/Indianapolis'],
    ['Gary, IN (Central)', 41.5934, -87.3464, 'America/Chicago'],
    ['Evansville, IN (Central)', 37.9716, -87.5711, 'America/Chicago'],
    ['Tell City, IN', 37.9514, -86.7678, 'America/Indiana/Tell_City'],
    ['Louisville, KY', 38.2527, -85.7585, 'America/Kentucky/Louisville'],
    ['Bowling Green, KY (Central)', 36.9685, -86.4808, 'America/Chicago'],
    ['Lexington, KY', 38.0406, -84.5037, 'America/New_York'],
    ['Knoxville, TN', 35.9606, -83.9207, 'America/New_York'],
    ['Nashville, TN', 36.1627, -86.7816, 'America/Chicago'],
    ['Bismarck, ND', 46.8083, -100.7837, 'America/Chicago'],
    ['Dickinson, ND (Mountain)', 46.8792, -102.7896, 'America/Denver'],
    ['Beulah, ND (Mercer County)', 47.2633, -101.7779, 'America/North_Dakota/Beulah'],
    ['Center, ND (Oliver County)', 47.1164, -101.2993, 'America/North_Dakota/Center'],
    ['Pensacola, FL (the panhandle, Central)', 30.4213, -87.2169, 'America/Chicago'],
    ['Tallahassee, FL', 30.4383, -84.2807, 'America/New_York'],
    ['Detroit, MI', 42.3314, -83.0458, 'America/Detroit'],
    ['Menominee, MI (Central)', 45.1078, -87.6143, 'America/Menominee'],
    ['Hagåtña, GU', 13.4757, 144.7489, 'Pacific/Guam'],
    ['Saipan, MP', 15.1778, 145.7508, 'Pacific/Saipan'],
    ['Pago Pago, AS', -14.2756, -170.702, 'Pacific/Pago_Pago'],
    ['Honolulu, HI', 21.3069, -157.8583, 'Pacific/Honolulu'],
    ['Anchorage, AK', 61.2181, -149.9003, 'America/Anchorage'],
    ['Juneau, AK', 58.3019, -134.4197, 'America/Juneau'],
    ['Nome, AK', 64.5011, -165.4064, 'America/Nome'],
    ['Adak, AK', 51.88, -176.6581, 'America/Adak'],
    ['New York, NY', 40.7128, -74.006, 'America/New_York'],
  ])('%s is in %s', (_place, lat, lng, zone) => {
    expect(zoneOf({ lat, lng })).toBe(zone);
    expect(isKnownZone(zone)).toBe(true);
  });

  it('gives a nautical zone at sea, and throws on coordinates out of range', () => {
    expect(zoneOf({ lat: 35, lng: -45 })).toBe('Etc/GMT+3'); // mid-Atlantic
    expect(() => zoneOf({ lat: 91, lng: 0 })).toThrow();
    expect(() => zoneOf({ lat: 0, lng: NaN })).toThrow();
  });
});

describe('isKnownZone', () => {
  it.each([
    'America/Denver',
    'America/Indiana/Indianapolis',
    'America/Kentucky/Louisville',
    'America/Port-au-Prince',
    'US/Eastern',
    'Asia/Kolkata',
    'Asia/Calcutta',
    'UTC',
    'Etc/UTC',
    'EST5EDT',
    'Etc/GMT+5',
  ])('knows %s', (name) => expect(isKnownZone(name)).toBe(true));

  it.each([
    'america/denver',
    'America/DENVER',
    'America/NEW_YORK',
    'America/Nowhere',
    'Mars/Olympus_Mons',
    '+05:00',
    'GMT-5',
    '',
    'America/',
    '/Denver',
    'America//Denver',
    'America/Denver ',
  ])('refuses %j', (name) => expect(isKnownZone(name)).toBe(false));
});
