// The search at a moment (`open_at`) over a catalogue whose days differ from its weeks, against the
// same search over the same stores without them, in one run (npm run bench, the part `open_at
// with special days`): a tenth of the stores carry 20 special days each (dates of their own, so
// that each of those stores has a schedule of its own), one in a hundred a temporary closure (some
// until further notice), and one holiday names all 50 states. Both catalogues are copies of the
// bench's stores in databases of their own, each served by a process started for it; the two
// alternate ROUNDS times per search.
import mysql from 'mysql2/promise';
import { cpuSeconds, freshDatabase, load, startProcess } from './lib.mjs';

const STATES_50 =
  'AK,AL,AR,AZ,CA,CO,CT,DE,FL,GA,HI,IA,ID,IL,IN,KS,KY,LA,MA,MD,ME,MI,MN,MO,MS,MT,NC,ND,NE,NH,NJ,NM,NV,NY,OH,OK,OR,PA,RI,SC,SD,TN,TX,UT,VA,VT,WA,WI,WV,WY';
const HOURS = ['Closed', '9:00 AM - 2:00 PM', '10:00 AM - 6:00 PM', '12:00 PM - 5:00 PM', '8:00 AM - 12:00 AM'];
const DAY = 86_400_000;
const FIRST = Date.UTC(2026, 10, 1);
/** Christmas Eve at 10:00 AM in New York, when special days, closures and the holiday all decide something. */
const OPEN_AT = '2026-12-24T10:00:00-05:00';

const date = (t) => new Date(t).toISOString().slice(0, 10);

/** Store `id`'s 20 special days: its own dates between November 2026 and the end of 2027, Christmas Eve among them for some. */
function specialDays(id) {
  const days = new Map();
  for (let k = 0; days.size < 20; k++) days.set(date(FIRST + ((id * 37 + k * 19) % 420) * DAY), HOURS[(id + k) % HOURS.length]);
  return [...days]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([day, hours]) => `${day}=${hours}`)
    .join('; ');
}

/** Copies the stores and tokens of `sourceUrl` into a fresh database (migrated by starting a service on it once), adding the days that differ when `exceptions`. */
async function copyCatalogue(sourceUrl, suffix, env, exceptions) {
  const url = await freshDatabase(suffix);
  // A start migrates the new database; the rows go in before the measured process starts.
  const migrated = await startProcess(`${new URL('../dist/main.js', import.meta.url).pathname}`, { ...env, DATABASE_URL: url });
  await migrated.stop();
  const source = new URL(sourceUrl).pathname.slice(1);
  const target = new URL(url).pathname.slice(1);
  const db = await mysql.createConnection(url);
  await db.query(`INSERT INTO \`${target}\`.api_tokens SELECT * FROM \`${source}\`.api_tokens`);
  await db.query(`INSERT INTO \`${target}\`.stores SELECT * FROM \`${source}\`.stores`);
  if (exceptions) {
    const [rows] = await db.query('SELECT id FROM stores ORDER BY id');
    const ids = rows.map((row) => Number(row.id));
    const special = ids.filter((id) => id % 10 === 3);
    for (let i = 0; i < special.length; i += 500) {
      const chunk = special.slice(i, i + 500);
      await db.query(`UPDATE stores SET special_hours = CASE id ${chunk.map(() => 'WHEN ? THEN ?').join(' ')} END WHERE id IN (?)`, [
        ...chunk.flatMap((id) => [id, specialDays(id)]),
        chunk,
      ]);
    }
    await db.query("UPDATE stores SET temporarily_closed = IF(id % 200 = 7, '2026-12-01/..', '2026-12-01/2027-02-15') WHERE id % 100 = 7");
    await db.query("INSERT INTO holidays (date, name, hours, states, updated_at) VALUES ('2026-12-24', 'Christmas Eve', '9:00 AM - 3:00 PM', ?, NOW(3))", [
      STATES_50,
    ]);
    await db.query('UPDATE store_catalog SET version = version + 1 WHERE id = 1');
  }
  const [[{ special }]] = await db.query("SELECT COUNT(*) AS special FROM stores WHERE special_hours <> ''");
  const [[{ closed }]] = await db.query("SELECT COUNT(*) AS closed FROM stores WHERE temporarily_closed <> ''");
  await db.end();
  return { url, special: Number(special), closed: Number(closed) };
}

/**
 * Runs the searches with `open_at` at 5 and 50 miles from four ZIP codes on both catalogues,
 * alternating, `rounds` times of `duration` seconds each. Returns a row per search: req/s, p50,
 * p99 and CPU per request of each, and the ratio with exceptions over without.
 */
export async function specialDaysSearches({ env, sourceUrl, token, rounds, duration, logFile }) {
  const plain = await copyCatalogue(sourceUrl, 'days_plain', env, false);
  const varied = await copyCatalogue(sourceUrl, 'days_varied', env, true);
  const services = {
    plain: await startProcess(new URL('../dist/main.js', import.meta.url).pathname, { ...env, DATABASE_URL: plain.url }, { logFile: logFile('days-plain') }),
    varied: await startProcess(new URL('../dist/main.js', import.meta.url).pathname, { ...env, DATABASE_URL: varied.url }, { logFile: logFile('days-varied') }),
  };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const rows = [];
  try {
    for (const miles of [5, 50]) {
      // Four places, one request each in turn: New York, Chicago, Denver, Los Angeles.
      const requests = ['10001', '60601', '80202', '90012'].map((zip) => ({
        method: 'POST',
        path: '/locations/nearest',
        headers,
        body: JSON.stringify({ customer_address: { zip }, max_distance: miles, open_at: OPEN_AT }),
      }));
      const runs = { plain: [], varied: [] };
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? ['plain', 'varied'] : ['varied', 'plain'];
        for (const name of order) {
          const before = cpuSeconds(services[name].pid);
          const result = await load({ url: services[name].url, duration, requests });
          runs[name].push({ ...result, cpuMs: ((cpuSeconds(services[name].pid) - before) * 1000) / Math.max(1, result.total) });
        }
      }
      const mean = (list, key) => list.reduce((sum, r) => sum + r[key], 0) / list.length;
      const of = (list) => ({
        rps: mean(list, 'rps'),
        p50: mean(list, 'p50'),
        p99: Math.max(...list.map((r) => r.p99)),
        cpuMs: mean(list, 'cpuMs'),
        errors: list.reduce((sum, r) => sum + r.errors + r.non2xx, 0),
      });
      const [a, b] = [of(runs.plain), of(runs.varied)];
      rows.push({ name: `open_at ${miles} mi`, plain: a, varied: b, ratio: b.rps / a.rps, rounds: runs.varied.map((r, i) => r.rps / runs.plain[i].rps) });
    }
  } finally {
    await services.plain.stop();
    await services.varied.stop();
  }
  return { rows, special: varied.special, closed: varied.closed };
}

export function describeSpecialDays({ rows, special, closed }, stores, fmt) {
  const lines = [
    `\nopen_at with special days: ${stores} stores, ${special} with 20 special days each, ${closed} temporarily closed, one holiday in 50 states, against the same stores without them (same searches, alternating, open_at ${OPEN_AT}).\n`,
    '| search | without req/s | p50 ms | p99 ms | CPU ms/req | with req/s | p50 ms | p99 ms | CPU ms/req | errors | with / without (rounds) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { name, plain, varied, ratio, rounds } of rows) {
    lines.push(
      `| ${name} | ${fmt(plain.rps)} | ${fmt(plain.p50, 1)} | ${plain.p99} | ${fmt(plain.cpuMs, 3)} | ${fmt(varied.rps)} | ${fmt(varied.p50, 1)} | ${varied.p99} | ${fmt(varied.cpuMs, 3)} | ${plain.errors + varied.errors} | ${fmt(ratio, 2)} (${rounds.map((r) => fmt(r, 2)).join(', ')}) |`,
    );
  }
  return lines.join('\n');
}
