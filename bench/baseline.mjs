// The reference for "close to the limit" on this machine: plain node:http + mysql2, no
// framework, answering the same reads as the service on the same tables, with the same
// SHA-256 token look-up (one query per request) and the same JSON.
//
// The search is the naive one the issue describes: fetch the bounding box, then filter and
// sort in JavaScript.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import mysql from 'mysql2/promise';

const pool = mysql.createPool({ uri: process.env.DATABASE_URL, connectionLimit: 10, supportBigNumbers: true, bigNumberStrings: false });
const zips = new Map(
  readFileSync(new URL('../assets/zip-points.csv', import.meta.url), 'utf8')
    .split('\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(','))
    .map(([zip, lat, lng]) => [zip, { lat: Number(lat), lng: Number(lng) }]),
);
const R = 3958.8;
const RAD = Math.PI / 180;
const haversine = (a, b) => {
  const h = Math.sin(((b.lat - a.lat) * RAD) / 2) ** 2 + Math.cos(a.lat * RAD) * Math.cos(b.lat * RAD) * Math.sin(((b.lng - a.lng) * RAD) / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
};

function send(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function team(req) {
  const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
  if (!match) return undefined;
  const hash = createHash('sha256').update(match[1]).digest('hex');
  const [rows] = await pool.execute('SELECT team FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > NOW(3))', [
    hash,
  ]);
  return rows[0]?.team;
}

const server = createServer(async (req, res) => {
  try {
    if (req.url === '/health/ready') return send(res, 200, { status: 'ok' });
    const caller = await team(req);
    if (!caller) return send(res, 401, { error: 401, message: 'invalid or expired bearer token' });
    const url = new URL(req.url, 'http://x');
    if (req.method === 'GET' && url.pathname === '/plants') {
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const [rows] = await pool.execute('SELECT id, name, tag FROM plants WHERE team = ? ORDER BY id LIMIT ?', [caller, String(limit + 1)]);
      const page = rows.slice(0, limit);
      const headers = rows.length > limit ? { link: `</plants?limit=${limit}&after=${page[limit - 1].id}>; rel="next"` } : {};
      return send(
        res,
        200,
        page.map(({ name, tag }) => (tag === null ? { name } : { name, tag })),
        headers,
      );
    }
    if (req.method === 'POST' && url.pathname === '/locations/nearest') {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = JSON.parse(raw);
      const center = zips.get(body.customer_address.zip.trim().slice(0, 5));
      const miles = body.max_distance ?? 5;
      const dLat = miles / 69;
      const dLng = miles / (69 * Math.cos(center.lat * RAD));
      const [rows] = await pool.execute(
        'SELECT * FROM stores WHERE lat BETWEEN ? AND ? AND lng BETWEEN ? AND ?',
        [center.lat - dLat, center.lat + dLat, center.lng - dLng, center.lng + dLng].map(String),
      );
      const locations = rows
        .map((s) => ({ s, d: haversine(center, { lat: Number(s.lat), lng: Number(s.lng) }) }))
        .filter(({ d }) => d <= miles)
        .sort((a, b) => a.d - b.d || a.s.name.localeCompare(b.s.name))
        .slice(0, body.limit ?? 25)
        .map(({ s, d }) => ({
          name: s.name,
          address: s.address,
          city: s.city,
          state: s.state,
          zip: s.zip,
          business_hours: {
            Monday: s.monday,
            Tuesday: s.tuesday,
            Wednesday: s.wednesday,
            Thursday: s.thursday,
            Friday: s.friday,
            Saturday: s.saturday,
            Sunday: s.sunday,
          },
          lat: Number(s.lat).toFixed(6),
          lng: Number(s.lng).toFixed(6),
          distance: Math.round(d * 100) / 100,
        }));
      return send(res, 200, { Code: 'Success', locations });
    }
    send(res, 404, { error: 404, message: 'not found' });
  } catch (error) {
    send(res, 500, { error: 500, message: String(error) });
  }
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
