// Synthetic store lists for load and scale tests: N stores spread like the US population.
//
//   node scripts/make-synthetic-stores.mjs <count> <out.csv> [seed]
//
// 85% of the stores sit around the 60 largest metro areas, each drawing a share equal to its
// population and scattered with a normal spread that grows with the metro's size; the rest
// sit at random ZCTA points (assets/zip-points.csv), so rural areas are not empty. Output is
// the import format and deterministic for a given count and seed.
import { createWriteStream, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const zipcodes = createRequire(import.meta.url)('zipcodes');

const [count = '100000', out, seedText = '42'] = process.argv.slice(2);
if (!out || !/^\d+$/.test(count)) {
  console.error('usage: node scripts/make-synthetic-stores.mjs <count> <out.csv> [seed]');
  process.exit(2);
}

// Metro areas: [name, state, ZIP near the centre, population in millions (approx., 2020 census)].
const METROS = [
  ['New York', 'NY', '10001', 20.1],
  ['Los Angeles', 'CA', '90012', 13.2],
  ['Chicago', 'IL', '60602', 9.6],
  ['Dallas', 'TX', '75201', 7.6],
  ['Houston', 'TX', '77002', 7.1],
  ['Washington', 'DC', '20001', 6.4],
  ['Philadelphia', 'PA', '19103', 6.2],
  ['Miami', 'FL', '33130', 6.1],
  ['Atlanta', 'GA', '30303', 6.1],
  ['Boston', 'MA', '02108', 4.9],
  ['Phoenix', 'AZ', '85004', 4.8],
  ['San Francisco', 'CA', '94103', 4.7],
  ['Riverside', 'CA', '92501', 4.6],
  ['Detroit', 'MI', '48226', 4.4],
  ['Seattle', 'WA', '98101', 4.0],
  ['Minneapolis', 'MN', '55401', 3.7],
  ['San Diego', 'CA', '92101', 3.3],
  ['Tampa', 'FL', '33602', 3.2],
  ['Denver', 'CO', '80202', 3.0],
  ['Baltimore', 'MD', '21201', 2.8],
  ['St. Louis', 'MO', '63101', 2.8],
  ['Orlando', 'FL', '32801', 2.7],
  ['Charlotte', 'NC', '28202', 2.7],
  ['San Antonio', 'TX', '78205', 2.6],
  ['Portland', 'OR', '97204', 2.5],
  ['Sacramento', 'CA', '95814', 2.4],
  ['Pittsburgh', 'PA', '15222', 2.4],
  ['Austin', 'TX', '78701', 2.3],
  ['Las Vegas', 'NV', '89101', 2.3],
  ['Cincinnati', 'OH', '45202', 2.3],
  ['Kansas City', 'MO', '64106', 2.2],
  ['Columbus', 'OH', '43215', 2.1],
  ['Indianapolis', 'IN', '46204', 2.1],
  ['Cleveland', 'OH', '44113', 2.1],
  ['San Jose', 'CA', '95113', 2.0],
  ['Nashville', 'TN', '37203', 2.0],
  ['Virginia Beach', 'VA', '23451', 1.8],
  ['Providence', 'RI', '02903', 1.7],
  ['Jacksonville', 'FL', '32202', 1.6],
  ['Milwaukee', 'WI', '53202', 1.6],
  ['Raleigh', 'NC', '27601', 1.4],
  ['Oklahoma City', 'OK', '73102', 1.4],
  ['Memphis', 'TN', '38103', 1.3],
  ['Richmond', 'VA', '23219', 1.3],
  ['Louisville', 'KY', '40202', 1.3],
  ['New Orleans', 'LA', '70112', 1.3],
  ['Salt Lake City', 'UT', '84111', 1.3],
  ['Hartford', 'CT', '06103', 1.2],
  ['Buffalo', 'NY', '14202', 1.2],
  ['Birmingham', 'AL', '35203', 1.1],
  ['Rochester', 'NY', '14604', 1.1],
  ['Grand Rapids', 'MI', '49503', 1.1],
  ['Tucson', 'AZ', '85701', 1.0],
  ['Honolulu', 'HI', '96813', 1.0],
  ['Tulsa', 'OK', '74103', 1.0],
  ['Fresno', 'CA', '93721', 1.0],
  ['Worcester', 'MA', '01608', 0.98],
  ['Omaha', 'NE', '68102', 0.97],
  ['Albuquerque', 'NM', '87102', 0.92],
  ['Anchorage', 'AK', '99501', 0.4],
];
const HOURS = [
  ['9:00 AM - 6:00 PM', '9:00 AM - 6:00 PM', '9:00 AM - 6:00 PM', '9:00 AM - 8:00 PM', '9:00 AM - 8:00 PM', '10:00 AM - 6:00 PM', 'Closed'],
  ['8:00 AM - 8:00 PM', '8:00 AM - 8:00 PM', '8:00 AM - 8:00 PM', '8:00 AM - 8:00 PM', '8:00 AM - 8:00 PM', '9:00 AM - 6:00 PM', '10:00 AM - 4:00 PM'],
  [
    'Closed',
    '10:00 AM - 6:00 PM',
    '10:00 AM - 6:00 PM',
    '10:00 AM - 6:00 PM',
    '10:00 AM - 7:00 PM',
    '9:00 AM - 12:00 PM, 1:00 PM - 5:00 PM',
    '11:00 AM - 5:00 PM',
  ],
];

// mulberry32: small, fast, and the same numbers on every machine.
let seed = Number(seedText) >>> 0;
function random() {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
// Clamped at 2.5 sigma, so that a store stays well within 100 miles of its metro's ZIP.
const gaussian = () => Math.max(-2.5, Math.min(2.5, Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())));

const zips = readFileSync(new URL('../assets/zip-points.csv', import.meta.url), 'utf8')
  .split('\n')
  .slice(1)
  .filter(Boolean)
  .map((line) => line.split(','))
  .filter(([, , , source]) => source === 'zcta')
  .map(([zip, lat, lng]) => ({ zip, lat: Number(lat), lng: Number(lng) }));
const zipPoint = new Map(zips.map((z) => [z.zip, z]));
const totalPopulation = METROS.reduce((sum, m) => sum + m[3], 0);

const output = createWriteStream(out);
output.write('code,name,address,city,state,zip,lat,lng,monday,tuesday,wednesday,thursday,friday,saturday,sunday\n');
const n = Number(count);
for (let i = 1; i <= n; i++) {
  let city, state, zip, lat, lng;
  if (random() < 0.85) {
    let pick = random() * totalPopulation;
    const metro = METROS.find((m) => (pick -= m[3]) < 0) ?? METROS[0];
    const centre = zipPoint.get(metro[2]);
    // Spread in miles: about 6 for a 1-million metro, 25 for New York.
    const spread = 6 * Math.sqrt(metro[3]);
    lat = centre.lat + (gaussian() * spread) / 69;
    lng = centre.lng + (gaussian() * spread) / (69 * Math.cos((centre.lat * Math.PI) / 180));
    [city, state, zip] = [metro[0], metro[1], metro[2]];
  } else {
    const z = zips[Math.floor(random() * zips.length)];
    lat = z.lat + (random() - 0.5) * 0.02;
    lng = z.lng + (random() - 0.5) * 0.02;
    const place = zipcodes.lookup(z.zip);
    [city, state, zip] = [place?.city ?? 'Unknown', place?.state ?? 'NY', z.zip];
  }
  lat = Math.max(-90, Math.min(90, lat));
  lng = ((((lng + 180) % 360) + 360) % 360) - 180;
  const code = `SYN-${String(i).padStart(6, '0')}`;
  const hours = HOURS[i % HOURS.length].map((h) => (h.includes(',') ? `"${h}"` : h));
  output.write(
    `${code},Synthetic Store ${i},${100 + (i % 9000)} Synthetic Way,${city},${state},${zip},${lat.toFixed(6)},${lng.toFixed(6)},${hours.join(',')}\n`,
  );
}
output.end(() => console.error(`synthetic stores: ${n} written to ${out}`));
