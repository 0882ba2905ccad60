// node bench/road-grid.mjs <streets per side> [out.osm]: a square grid of two-way streets as an
// OpenStreetMap XML extract, for scripts/load-roads.sh at scale (the drive-time benchmarks, and the
// load time docs/routing.md gives). Streets run the whole grid, 0.005° apart (about 550 m north to
// south), from 39.0 N, 100.0 W; osm2pgrouting splits each at every crossing, so N streets a side
// give 2·N·(N−1) ways and N² vertices (224: 99,904 ways). Every fifth street is a 70 km/h
// secondary road, the others 40 km/h residential streets. Written to stdout without a file name.
import { createWriteStream } from 'node:fs';

const n = Number(process.argv[2]);
if (!Number.isInteger(n) || n < 2 || n > 2000) {
  console.error('usage: node bench/road-grid.mjs <streets per side, 2 to 2000> [out.osm]');
  process.exit(2);
}
const out = process.argv[3] ? createWriteStream(process.argv[3]) : process.stdout;
const STEP = 0.005;
const node = (row, column) => row * n + column + 1;
const lines = [];
const flush = () => {
  if (lines.length > 0) out.write(lines.join('\n') + '\n');
  lines.length = 0;
};

lines.push('<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="bench/road-grid.mjs">');
for (let row = 0; row < n; row++) {
  for (let column = 0; column < n; column++) {
    lines.push(`  <node id="${node(row, column)}" lat="${(39 + row * STEP).toFixed(6)}" lon="${(-100 + column * STEP).toFixed(6)}" version="1"/>`);
  }
  flush();
}
const way = (id, refs, index) => {
  const [highway, speed] = index % 5 === 0 ? ['secondary', 70] : ['residential', 40];
  lines.push(`  <way id="${id}" version="1">`, ...refs.map((ref) => `    <nd ref="${ref}"/>`));
  lines.push(`    <tag k="highway" v="${highway}"/>`, `    <tag k="maxspeed" v="${speed}"/>`, '  </way>');
};
for (let i = 0; i < n; i++) {
  way(
    i + 1,
    Array.from({ length: n }, (_, column) => node(i, column)),
    i,
  ); // east-west street i
  way(
    n + i + 1,
    Array.from({ length: n }, (_, row) => node(row, i)),
    i,
  ); // north-south street i
  flush();
}
lines.push('</osm>');
flush();
if (out !== process.stdout) out.end();
