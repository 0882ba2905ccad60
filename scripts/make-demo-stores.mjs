#!/usr/bin/env node
// Builds assets/demo-stores.csv: FICTIONAL plant stores (invented names and street addresses)
// placed at REAL US places, for demos and tests.
//
// - zip/city/state come from the `zipcodes` package, so every combination is a real one;
// - lat/lng is the ZIP's point from assets/zip-points.csv plus a small seeded jitter, so the
//   "nearest store" answers are geographically sensible;
// - everything random comes from a seeded PRNG, so the output is identical byte for byte on
//   every run (as long as the data below and assets/zip-points.csv do not change).
//
// Usage: node scripts/build-zip-points.mjs && node scripts/make-demo-stores.mjs
// Exits 1, writing nothing, when a coverage requirement the tests rely on is not met.

import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url); // `zipcodes` is a CommonJS package
const { codes: zipcodes } = require('zipcodes');

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ZIP_POINTS = join(ROOT, 'assets', 'zip-points.csv');
const OUT = join(ROOT, 'assets', 'demo-stores.csv');

const SEED = 0x9e3779b9;
const MAX_JITTER_MILES = 0.5; // keeps every store well inside ~0.6 miles of its ZIP point
const EARTH_RADIUS_MILES = 3958.8; // same radius the service uses (src/shared/great-circle.ts)

// ---------------------------------------------------------------------------------------------
// Where the stores are. One entry per metro area; each store is "ZIP" or "ZIP Label", where the
// label (a neighbourhood or town) goes into the store name. Without a label the ZIP's city name
// is used. Big metros get more stores, roughly following population.
// ---------------------------------------------------------------------------------------------
const METROS = [
  [
    'New York',
    [
      // Manhattan: a dense cluster around 10001 for the "several stores nearby" tests.
      '10001 Chelsea',
      '10018 Garment District',
      '10036 Times Square',
      '10010 Flatiron',
      '10016 Murray Hill',
      '10014 West Village',
      "10019 Hell's Kitchen",
      '10003 East Village',
      '10012 SoHo',
      '10013 Tribeca',
      '10002 Lower East Side',
      '10022 Midtown East',
      '10023 Lincoln Square',
      '10024 Upper West Side',
      '10028 Upper East Side',
      '10027 Harlem',
      '11201 Brooklyn Heights',
      '11211 Williamsburg',
      '11215 Park Slope',
      '11222 Greenpoint',
      '11101 Long Island City',
      '11375 Forest Hills',
      '11354 Flushing',
      '10463 Riverdale',
      '10301 St. George',
      '07302 Jersey City',
      '07030 Hoboken',
      '07102 Newark',
      '07042 Montclair',
      '10601 White Plains',
      '06901 Stamford',
    ],
  ],
  [
    'Los Angeles',
    [
      '90012 Downtown LA',
      '90026 Echo Park',
      '90027 Los Feliz',
      '90028 Hollywood',
      '90039 Atwater Village',
      '90042 Highland Park',
      '90291 Venice',
      '90401 Santa Monica',
      '90069 West Hollywood',
      '91101 Pasadena',
      '91423 Sherman Oaks',
      '90802 Long Beach',
      '92805 Anaheim',
      '92618 Irvine',
    ],
  ],
  [
    'Chicago',
    [
      '60614 Lincoln Park',
      '60622 Wicker Park',
      '60647 Logan Square',
      '60657 Lakeview',
      '60640 Uptown',
      '60607 West Loop',
      '60605 South Loop',
      '60615 Hyde Park',
      '60626 Rogers Park',
      '60608 Pilsen',
      '60201 Evanston',
      '60302 Oak Park',
      '60540 Naperville',
    ],
  ],
  [
    'Houston',
    [
      '77002 Downtown Houston',
      '77006 Montrose',
      '77008 Houston Heights',
      '77019 River Oaks',
      '77005 West University',
      '77098 Upper Kirby',
      '77024 Memorial',
      '77056 Galleria',
      '77494 Katy',
      '77380 The Woodlands',
    ],
  ],
  [
    'Dallas-Fort Worth',
    [
      '75201 Downtown Dallas',
      '75204 Uptown Dallas',
      '75206 Lower Greenville',
      '75214 Lakewood',
      '75208 Bishop Arts',
      '76104 Near Southside',
      '76107 West 7th',
      '75024 Plano',
      '76011 Arlington',
      '76201 Denton',
    ],
  ],
  [
    'Washington',
    [
      '20001 Shaw',
      '20009 Adams Morgan',
      '20003 Capitol Hill',
      '20007 Georgetown',
      '20010 Columbia Heights',
      '20002 H Street',
      '22201 Clarendon',
      '22314 Old Town Alexandria',
      '20814 Bethesda',
      '20910 Silver Spring',
      '21701 Frederick',
    ],
  ],
  [
    'Miami',
    [
      '33131 Brickell',
      '33137 Design District',
      '33127 Wynwood',
      '33133 Coconut Grove',
      '33134 Coral Gables',
      '33139 South Beach',
      '33301 Fort Lauderdale',
      '33401 West Palm Beach',
      '33020 Downtown Hollywood',
      '33432 Boca Raton',
    ],
  ],
  [
    'Philadelphia',
    [
      '19103 Rittenhouse',
      '19106 Old City',
      '19123 Northern Liberties',
      '19147 Queen Village',
      '19125 Fishtown',
      '19104 University City',
      '19119 Mount Airy',
      '19010 Bryn Mawr',
      '19801 Wilmington',
    ],
  ],
  [
    'Atlanta',
    [
      '30306 Virginia-Highland',
      '30307 Inman Park',
      '30308 Midtown Atlanta',
      '30312 Grant Park',
      '30318 West Midtown',
      '30305 Buckhead',
      '30030 Decatur',
      '30060 Marietta',
    ],
  ],
  [
    'Phoenix',
    ['85004 Downtown Phoenix', '85003 Roosevelt Row', '85018 Arcadia', '85281 Tempe', '85251 Scottsdale', '85201 Mesa', '85225 Chandler', '85301 Glendale'],
  ],
  [
    'Boston',
    [
      '02116 Back Bay',
      '02118 South End',
      '02114 Beacon Hill',
      '02130 Jamaica Plain',
      '02139 Central Square',
      '02138 Harvard Square',
      '02143 Somerville',
      '02446 Brookline',
    ],
  ],
  [
    'San Francisco',
    [
      '94110 Mission District',
      '94117 Haight-Ashbury',
      '94114 Noe Valley',
      '94103 SoMa',
      '94123 Marina',
      '94122 Inner Sunset',
      '94612 Downtown Oakland',
      '94609 Temescal',
      '94704 Berkeley',
    ],
  ],
  ['Riverside-San Bernardino', ['92501 Riverside', '92401 San Bernardino', '92262 Palm Springs']],
  ['Detroit', ['48201 Midtown Detroit', '48207 Lafayette Park', '48226 Downtown Detroit', '48216 Corktown', '48067 Royal Oak']],
  [
    'Seattle',
    [
      '98101 Downtown Seattle',
      '98122 Capitol Hill',
      '98103 Fremont',
      '98107 Ballard',
      '98105 University District',
      '98116 West Seattle',
      '98004 Bellevue',
      '98052 Redmond',
      '98402 Tacoma',
    ],
  ],
  ['Minneapolis-St. Paul', ['55401 North Loop', '55408 Lyn-Lake', '55414 Dinkytown', '55104 Hamline-Midway', '55102 Cathedral Hill']],
  [
    'San Diego',
    [
      '92101 Gaslamp',
      '92103 Hillcrest',
      '92104 North Park',
      '92107 Ocean Beach',
      '92109 Pacific Beach',
      '92037 La Jolla',
      '92024 Encinitas',
      '91910 Chula Vista',
    ],
  ],
  ['Tampa', ['33602 Downtown Tampa', '33606 Hyde Park Village', '33701 St. Petersburg']],
  ['Denver', ['80202 LoDo', '80205 Five Points', '80206 Cherry Creek', '80209 Washington Park', '80211 Highland', '80401 Golden']],
  ['Baltimore', ['21231 Fells Point', '21211 Hampden', '21230 Federal Hill', '21201 Mount Vernon', '21401 Annapolis']],
  ['St. Louis', ['63104 Soulard', '63110 The Grove', '63130 Delmar Loop', '63108 Central West End']],
  ['Orlando', ['32801 Downtown Orlando', '32803 Mills 50', '32789 Winter Park']],
  ['Charlotte', ['28202 Uptown Charlotte', '28203 Dilworth', '28205 Plaza Midwood']],
  ['San Antonio', ['78205 Downtown San Antonio', '78209 Alamo Heights', '78212 Monte Vista', '78204 King William', '78258 Stone Oak']],
  ['Portland', ['97209 Pearl District', '97214 Hawthorne', '97211 Alberta Arts', '97202 Sellwood', '98660 Vancouver']],
  ['Sacramento', ['95814 Downtown Sacramento', '95816 Midtown Sacramento']],
  ['Pittsburgh', ['15222 Strip District', '15232 Shadyside', '15201 Lawrenceville']],
  ['Austin', ['78701 Downtown Austin', '78704 South Lamar', '78702 East Austin', '78705 West Campus', '78664 Round Rock']],
  ['Las Vegas', ['89101 Downtown Las Vegas', '89104 Arts District', '89052 Henderson', '89135 Summerlin']],
  ['Cincinnati', ['45202 Over-the-Rhine', '45208 Hyde Park Square']],
  ['Kansas City', ['64108 Crossroads', '64111 Westport', '64113 Brookside', '66212 Overland Park']],
  ['Columbus', ['43215 Downtown Columbus', '43201 Short North', '43206 German Village']],
  ['Indianapolis', ['46202 Mass Ave', '46220 Broad Ripple', '46032 Carmel']],
  ['Cleveland', ['44113 Ohio City', '44106 University Circle', '44107 Lakewood Ohio']],
  ['San Jose', ['95113 Downtown San Jose', '94301 Palo Alto']],
  ['Nashville', ['37203 The Gulch', '37206 East Nashville', '37204 12 South', '37064 Franklin']],
  ['Raleigh-Durham', ['27601 Downtown Raleigh', '27701 Durham', '27514 Chapel Hill']],
  ['Richmond', ['23220 The Fan', '23219 Downtown Richmond']],
  ['Virginia Beach-Norfolk', ['23510 Norfolk', '23451 Virginia Beach']],
  ['Jacksonville', ['32204 Riverside Avondale', '32207 San Marco']],
  ['Milwaukee', ['53202 Third Ward', '53212 Riverwest']],
  ['Oklahoma City', ['73102 Downtown OKC', '73106 Plaza District']],
  ['Louisville', ['40202 Downtown Louisville', '40204 The Highlands', '40206 Crescent Hill']],
  ['Memphis', ['38103 Downtown Memphis', '38104 Cooper-Young']],
  ['New Orleans', ['70130 Warehouse District', '70115 Magazine Street', '70116 Marigny', '70119 Mid-City']],
  ['Salt Lake City', ['84101 Downtown Salt Lake', '84106 Sugar House']],
  ['Hartford', ['06103 Hartford']],
  ['New Haven', ['06511 New Haven']],
  ['Buffalo', ['14222 Elmwood Village']],
  ['Rochester', ['14607 Park Avenue']],
  ['Albany', ['12203 Albany']],
  ['Birmingham', ['35203 Downtown Birmingham', '35205 Five Points South']],
  ['Tucson', ['85701 Downtown Tucson', '85719 Sam Hughes']],
  ['Albuquerque', ['87102 Downtown Albuquerque', '87106 Nob Hill']],
  ['Honolulu', ['96813 Downtown Honolulu', '96815 Waikiki', '96822 Manoa']],
  ['Omaha', ['68102 Old Market']],
  ['Tulsa', ['74120 Tulsa']],
  ['Fresno', ['93721 Fresno']],
  ['Bakersfield', ['93301 Bakersfield']],
  ['El Paso', ['79901 El Paso']],
  ['Providence', ['02903 Providence', '02840 Newport']],
  ['Worcester', ['01608 Worcester']],
  ['Springfield, MA', ['01103 Springfield', '01060 Northampton']],
  ['Grand Rapids', ['49503 Grand Rapids']],
  ['Ann Arbor', ['48104 Ann Arbor']],
  ['Lansing', ['48933 Lansing']],
  ['Knoxville', ['37902 Knoxville']],
  ['Chattanooga', ['37402 Chattanooga']],
  ['Greenville', ['29601 Greenville']],
  ['Charleston, SC', ['29401 Downtown Charleston']],
  ['Columbia, SC', ['29201 The Vista']],
  ['Savannah', ['31401 Savannah']],
  ['Asheville', ['28801 Asheville']],
  ['Greensboro', ['27401 Greensboro']],
  ['Wilmington, NC', ['28401 Wilmington']],
  ['Sarasota', ['34236 Sarasota']],
  ['Fort Myers', ['33901 Fort Myers']],
  ['Tallahassee', ['32301 Tallahassee']],
  ['Gainesville', ['32601 Gainesville']],
  ['Pensacola', ['32502 Pensacola']],
  ['Baton Rouge', ['70802 Baton Rouge']],
  ['Shreveport', ['71101 Shreveport']],
  ['Lexington', ['40507 Lexington']],
  ['Dayton', ['45402 Dayton']],
  ['Akron', ['44308 Akron']],
  ['Toledo', ['43604 Toledo']],
  ['Fort Wayne', ['46802 Fort Wayne']],
  ['Bloomington', ['47404 Bloomington']],
  ['Madison', ['53703 Madison']],
  ['Duluth', ['55802 Duluth']],
  ['Rochester, MN', ['55902 Rochester']],
  ['Des Moines', ['50309 Des Moines']],
  ['Iowa City', ['52240 Iowa City']],
  ['Cedar Rapids', ['52401 Cedar Rapids']],
  ['Springfield, IL', ['62701 Springfield']],
  ['Champaign-Urbana', ['61820 Champaign']],
  ['Springfield, MO', ['65806 Springfield']],
  ['Columbia, MO', ['65201 Columbia']],
  ['Wichita', ['67202 Wichita']],
  ['Lawrence', ['66044 Lawrence']],
  ['Lincoln', ['68508 Lincoln']],
  ['Little Rock', ['72201 Little Rock']],
  ['Fayetteville', ['72701 Fayetteville']],
  ['Jackson, MS', ['39202 Belhaven']],
  ['Gulfport', ['39501 Gulfport']],
  ['Oxford', ['38655 Oxford']],
  ['Huntsville', ['35801 Huntsville']],
  ['Mobile', ['36602 Mobile']],
  ['Montgomery', ['36104 Montgomery']],
  ['Harrisburg', ['17101 Harrisburg']],
  ['Lancaster', ['17603 Lancaster']],
  ['Allentown', ['18101 Allentown']],
  ['Scranton', ['18503 Scranton']],
  ['Erie', ['16501 Erie']],
  ['Trenton-Princeton', ['08540 Princeton']],
  ['Charlottesville', ['22902 Charlottesville']],
  ['Roanoke', ['24011 Roanoke']],
  ['Charleston, WV', ['25301 Kanawha']],
  ['Huntington', ['25701 Huntington']],
  ['Morgantown', ['26505 Morgantown']],
  ['Salisbury', ['19958 Lewes']],
  ['Portland, ME', ['04101 Old Port', '04240 Lewiston']],
  ['Bangor', ['04401 Bangor']],
  ['Burlington', ['05401 Burlington', '05602 Montpelier']],
  ['Brattleboro', ['05301 Brattleboro']],
  ['Manchester', ['03101 Manchester', '03301 Concord']],
  ['Portsmouth', ['03801 Portsmouth']],
  ['Colorado Springs', ['80903 Colorado Springs']],
  ['Fort Collins', ['80524 Fort Collins']],
  ['Boulder', ['80302 Boulder']],
  ['Provo', ['84601 Provo']],
  ['Ogden', ['84401 Ogden']],
  ['Boise', ['83702 Boise']],
  ["Coeur d'Alene", ["83814 Coeur d'Alene"]],
  ['Spokane', ['99201 Spokane']],
  ['Eugene', ['97401 Eugene']],
  ['Bend', ['97701 Bend']],
  ['Reno', ['89501 Reno']],
  ['Flagstaff', ['86001 Flagstaff']],
  ['Santa Fe', ['87501 Santa Fe']],
  ['Las Cruces', ['88001 Las Cruces']],
  ['Corpus Christi', ['78401 Corpus Christi']],
  ['Lubbock', ['79401 Lubbock']],
  ['Santa Barbara', ['93101 Santa Barbara']],
  ['San Luis Obispo', ['93401 San Luis Obispo']],
  ['Santa Cruz', ['95060 Santa Cruz']],
  ['Monterey', ['93940 Monterey']],
  ['Fargo', ['58102 Fargo']],
  ['Bismarck', ['58501 Bismarck']],
  ['Sioux Falls', ['57104 Sioux Falls']],
  ['Rapid City', ['57701 Rapid City']],
  ['Billings', ['59101 Billings']],
  ['Missoula', ['59802 Missoula']],
  ['Bozeman', ['59715 Bozeman']],
  ['Helena', ['59601 Helena']],
  ['Cheyenne', ['82001 Cheyenne']],
  ['Laramie', ['82070 Laramie']],
  ['Jackson, WY', ['83001 Jackson Hole']],
  // Alaska: Anchorage only, so Ketchikan (99950) has no store within 100 miles.
  ['Anchorage', ['99501 Downtown Anchorage', '99503 Midtown Anchorage']],
  ['San Juan', ['00901 Old San Juan', '00907 Condado']],
  ['Ponce', ['00716 Ponce']],
];

// Invented banner names (checked against the big US garden/plant chains; none of those).
const BRANDS = ['Fern & Fig', 'Greenhouse Row', 'Leaf & Loam', 'Moss Lantern', 'Willow & Wren', 'Terracotta Lane', 'Canopy Corner', 'Pothos & Pine'];

// Generic street names for invented addresses.
const STREETS = [
  'Linden Avenue',
  'Maple Street',
  'Cedar Lane',
  'Juniper Road',
  'Magnolia Boulevard',
  'Aspen Way',
  'Hawthorn Street',
  'Birch Avenue',
  'Sycamore Drive',
  'Laurel Street',
  'Chestnut Avenue',
  'Willow Road',
  'Hazel Court',
  'Rowan Avenue',
  'Alder Street',
  'Poplar Lane',
  'Cypress Avenue',
  'Orchard Street',
  'Garden Terrace',
  'Larkspur Way',
  'Primrose Lane',
  'Clover Street',
  'Fernwood Drive',
  'Ivy Place',
];

// Opening-hours templates: [weight, [monday..sunday]], each day a list of [open, close] in
// minutes after midnight (empty = Closed). Kept within one day: no range crosses midnight.
const h = (hh, mm = 0) => hh * 60 + mm;
const SCHEDULES = [
  // Standard: six days, short Sunday.
  [30, [[[h(9), h(18)]], [[h(9), h(18)]], [[h(9), h(18)]], [[h(9), h(18)]], [[h(9), h(18)]], [[h(9), h(18)]], [[h(10), h(16)]]]],
  // Closed Monday, lunch break on Saturday.
  [
    15,
    [
      [],
      [[h(10), h(19)]],
      [[h(10), h(19)]],
      [[h(10), h(19)]],
      [[h(10), h(19)]],
      [
        [h(9), h(12)],
        [h(13), h(17)],
      ],
      [[h(11), h(16)]],
    ],
  ],
  // Closed Sunday, long weekdays.
  [15, [[[h(8), h(20)]], [[h(8), h(20)]], [[h(8), h(20)]], [[h(8), h(20)]], [[h(8), h(20)]], [[h(9), h(18)]], []]],
  // Late opener, half-hour times, Saturday break, Sunday from noon.
  [
    10,
    [
      [[h(10, 30), h(18, 30)]],
      [[h(10, 30), h(18, 30)]],
      [[h(10, 30), h(18, 30)]],
      [[h(10, 30), h(18, 30)]],
      [[h(10, 30), h(19, 30)]],
      [
        [h(9), h(12, 30)],
        [h(13, 30), h(17)],
      ],
      [[h(12), h(17)]],
    ],
  ],
  // Seven days, early to late.
  [10, [[[h(7, 30), h(21)]], [[h(7, 30), h(21)]], [[h(7, 30), h(21)]], [[h(7, 30), h(21)]], [[h(7, 30), h(22)]], [[h(7, 30), h(22)]], [[h(8), h(20)]]]],
  // Small-town shop: lunch break every weekday, Saturday mornings, closed Sunday.
  [
    10,
    [
      [
        [h(9), h(13)],
        [h(14), h(18)],
      ],
      [
        [h(9), h(13)],
        [h(14), h(18)],
      ],
      [
        [h(9), h(13)],
        [h(14), h(18)],
      ],
      [
        [h(9), h(13)],
        [h(14), h(18)],
      ],
      [
        [h(9), h(13)],
        [h(14), h(18)],
      ],
      [[h(9), h(13)]],
      [],
    ],
  ],
  // Boutique: closed Sunday and Monday.
  [10, [[], [[h(11), h(19)]], [[h(11), h(19)]], [[h(11), h(19)]], [[h(11), h(20)]], [[h(10), h(18)]], []]],
];

// --- helpers ----------------------------------------------------------------------------------

/** mulberry32: tiny, well-known seeded PRNG; returns floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 570 -> "9:30 AM", 720 -> "12:00 PM", 1230 -> "8:30 PM". */
function clock(minutes) {
  const hh = Math.floor(minutes / 60);
  const mm = minutes % 60;
  const hour12 = hh % 12 === 0 ? 12 : hh % 12;
  return `${hour12}:${String(mm).padStart(2, '0')} ${hh < 12 ? 'AM' : 'PM'}`;
}

function formatDay(ranges) {
  if (ranges.length === 0) return 'Closed';
  for (const [open, close] of ranges) {
    if (!(open >= 0 && open < close && close < 24 * 60)) throw new Error(`bad range ${open}-${close}`);
  }
  return ranges.map(([open, close]) => `${clock(open)} - ${clock(close)}`).join(', ');
}

/** RFC 4180 quoting: only when needed, doubling embedded quotes. */
function csvField(value) {
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function haversineMiles(a, b) {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLng = (b.lng - a.lng) * rad;
  const x = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_MILES * Math.asin(Math.min(1, Math.sqrt(x)));
}

function pickWeighted(rand, items) {
  const total = items.reduce((sum, [w]) => sum + w, 0);
  let r = rand() * total;
  for (const [w, item] of items) {
    if ((r -= w) < 0) return item;
  }
  return items[items.length - 1][1];
}

function loadZipPoints() {
  if (!existsSync(ZIP_POINTS)) {
    console.error(`demo-stores: ${ZIP_POINTS} is missing; run node scripts/build-zip-points.mjs first`);
    process.exit(1);
  }
  const points = new Map();
  for (const line of readFileSync(ZIP_POINTS, 'utf8').split('\n').slice(1)) {
    if (!line) continue;
    const [zip, lat, lng] = line.split(',');
    points.set(zip, { lat: Number(lat), lng: Number(lng) });
  }
  return points;
}

// --- build ------------------------------------------------------------------------------------

const zipPoints = loadZipPoints();
const rand = mulberry32(SEED);
const problems = [];
const stores = [];
const usedNames = new Set();
const usedAddresses = new Set();

for (const [metro, entries] of METROS) {
  for (const entry of entries) {
    const [, zip, label] = /^(\d{5})(?: (.+))?$/.exec(entry) ?? [];
    const place = zipcodes[zip];
    const point = zipPoints.get(zip);
    if (!zip || !place || place.country !== 'US' || !point) {
      problems.push(`unknown ZIP in "${entry}" (${metro})`);
      continue;
    }

    // Brands rotate through the list; skip a brand whose name with this label is taken.
    let name;
    for (let i = 0; i < BRANDS.length && !name; i++) {
      const candidate = `${BRANDS[(stores.length + i) % BRANDS.length]} ${label ?? place.city}`;
      if (!usedNames.has(candidate)) name = candidate;
    }
    if (!name) {
      problems.push(`no unique name left for "${entry}"`);
      continue;
    }
    usedNames.add(name);

    // Invented address, unique within the ZIP.
    let address;
    do {
      const number = 10 + Math.floor(rand() * 2990);
      address = `${number} ${STREETS[Math.floor(rand() * STREETS.length)]}`;
    } while (usedAddresses.has(`${zip} ${address}`));
    usedAddresses.add(`${zip} ${address}`);

    // Uniform point in a disc of MAX_JITTER_MILES around the ZIP point (sqrt for uniform area).
    const r = MAX_JITTER_MILES * Math.sqrt(rand());
    const theta = 2 * Math.PI * rand();
    const degPerMile = 180 / (Math.PI * EARTH_RADIUS_MILES);
    const lat = point.lat + r * Math.cos(theta) * degPerMile;
    const lng = point.lng + (r * Math.sin(theta) * degPerMile) / Math.cos((point.lat * Math.PI) / 180);

    const week = pickWeighted(rand, SCHEDULES).map(formatDay);

    stores.push({
      code: `PS-${String(stores.length + 1).padStart(4, '0')}`,
      name,
      address,
      city: place.city,
      state: place.state,
      zip,
      lat: Number(lat.toFixed(6)),
      lng: Number(lng.toFixed(6)),
      week,
      metro,
    });
  }
}

// --- coverage checks the tests rely on ---------------------------------------------------------

const REQUIRED_STATES = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
  'DC',
];
const states = new Set(stores.map((s) => s.state));
const metros = new Set(stores.map((s) => s.metro));
const p10001 = zipPoints.get('10001');
const p99950 = zipPoints.get('99950');
const manhattan = stores.filter((s) => /^100\d\d$/.test(s.zip));
const near10001 = stores.filter((s) => haversineMiles(s, p10001) <= 2);
const nearKetchikan = stores.filter((s) => haversineMiles(s, p99950) <= 100);
const maxJitter = Math.max(...stores.map((s) => haversineMiles(s, zipPoints.get(s.zip))));

if (stores.length < 240) problems.push(`only ${stores.length} stores (need >= 240)`);
const missingStates = REQUIRED_STATES.filter((st) => !states.has(st));
if (missingStates.length) problems.push(`no store in ${missingStates.join(' ')}`);
if (metros.size < 40) problems.push(`only ${metros.size} metro areas (need >= 40)`);
if (manhattan.length < 12) problems.push(`only ${manhattan.length} Manhattan stores (need >= 12)`);
if (near10001.length < 3) problems.push(`only ${near10001.length} stores within 2 miles of 10001 (need >= 3)`);
if (!stores.some((s) => s.zip === '10001')) problems.push('no store in ZIP 10001');
if (nearKetchikan.length) problems.push(`stores within 100 miles of 99950: ${nearKetchikan.map((s) => s.code)}`);
if (stores.some((s) => s.zip === '96742')) problems.push('a store is in ZIP 96742');
for (const s of stores) {
  if (s.state === 'AK' && s.city !== 'Anchorage') problems.push(`${s.code}: Alaska store outside Anchorage`);
  if (s.state === 'HI' && s.city !== 'Honolulu') problems.push(`${s.code}: Hawaii store outside Honolulu`);
}
if (maxJitter > 0.6) problems.push(`a store is ${maxJitter.toFixed(3)} miles from its ZIP point (max 0.6)`);

console.error(`demo-stores: ${stores.length} stores, ${states.size} states/territories (${[...states].sort().join(' ')}), ` + `${metros.size} metro areas`);
console.error(`demo-stores: ${manhattan.length} in Manhattan, ${near10001.length} within 2 miles of 10001, ` + `max jitter ${maxJitter.toFixed(3)} miles`);

if (problems.length) {
  for (const p of problems) console.error(`demo-stores: FAILED: ${p}`);
  process.exit(1);
}

// --- write ------------------------------------------------------------------------------------

const HEADER = 'code,name,address,city,state,zip,lat,lng,monday,tuesday,wednesday,thursday,friday,saturday,sunday';
const lines = [HEADER];
for (const s of stores) {
  const fields = [s.code, s.name, s.address, s.city, s.state, s.zip, s.lat.toFixed(6), s.lng.toFixed(6), ...s.week];
  lines.push(fields.map(csvField).join(','));
}
writeFileSync(OUT, lines.join('\n') + '\n');
console.error(`demo-stores: wrote ${OUT}`);
