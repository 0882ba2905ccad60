import autocannon from 'autocannon';
import type { OpenAPIObject } from '@nestjs/swagger';
import { responseChecker } from './openapi.js';

/** Plants every team has before the traffic starts, ids 1…SEEDED_PLANTS: the deletes' targets. */
export const SEEDED_PLANTS = 1500;
/** Ids of plants created by the traffic start here, above the seeded ones. */
const CREATED_IDS_FROM = 1_000_000;

/** A plain SQL query (`?` placeholders) on the database under test: a DataSource's, or a mysql2 connection's. */
export type Query = (sql: string, params?: unknown[]) => Promise<Array<Record<string, unknown>>>;

export async function seedPlants(query: Query, teams: string[]): Promise<void> {
  for (const team of teams) {
    for (let first = 1; first <= SEEDED_PLANTS; first += 250) {
      const ids = Array.from({ length: Math.min(250, SEEDED_PLANTS - first + 1) }, (_, i) => first + i);
      await query(
        `INSERT INTO plants (team, id, name, tag) VALUES ${ids.map(() => '(?, ?, ?, ?)').join(', ')}`,
        ids.flatMap((id) => [team, id, `seed ${id}`, id % 3 ? 'seeded' : null]),
      );
    }
  }
}

// A Buffer: autocannon sizes a string body by its length in UTF-16 units, not in bytes, and
// the rest of a non-ASCII body then spoils the next request on the connection.
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

type Op = { kind: 'create'; id: number; name: string } | { kind: 'delete'; id: number } | { kind: 'list' } | { kind: 'nearest' } | { kind: 'invalid' };

export interface TrafficResult {
  /** Responses by operation kind and status. */
  statuses: Record<string, Record<number, number>>;
  /** Creates answered 201 and deletes answered 204, per team: what must hold afterwards. */
  created: Map<string, Map<number, string>>;
  deleted: Map<string, Set<number>>;
  /**
   * Every create and delete sent, per team, and those answered with anything: a write sent but
   * never answered (in flight when autocannon stopped, at most one per connection) may or may not
   * have happened; every other write happened exactly when it was acknowledged.
   */
  sent: Map<string, { creates: Map<number, string>; deletes: Set<number>; answered: Set<string> }>;
  /** Responses the OpenAPI document does not describe (first 20). */
  nonConforming: string[];
  /** Timestamps (ms) and statuses of every response, for tests that cut the database. */
  timeline: Array<{ at: number; kind: string; status: number; latencyMs: number }>;
  requests: number;
  errors: number;
  timeouts: number;
}

/**
 * Mixed traffic of several teams against one server with autocannon, bounded in time,
 * on loopback only: creates with fresh ids, deletes of seeded plants (each once), list
 * pages, location searches and invalid bodies, round robin on every connection. Every
 * response is checked against the OpenAPI document; acknowledged writes are recorded.
 */
export async function runTraffic(options: {
  url: string;
  teams: Array<{ team: string; token: string }>;
  /** How long the traffic runs; with `stop`, the most it runs. */
  seconds: number;
  connectionsPerTeam: number;
  document: OpenAPIObject;
  /** Ends the traffic when it settles, so that a test's phases are counted rather than timed. */
  stop?: Promise<unknown>;
  /** Gets the result as it fills, response by response: a test reads its counts while the traffic runs. */
  live?: (result: TrafficResult) => void;
}): Promise<TrafficResult> {
  if (!/^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(options.url)) throw new Error(`load only on loopback, not ${options.url}`);
  const checker = responseChecker(options.document);
  const result: TrafficResult = {
    statuses: {},
    created: new Map(),
    deleted: new Map(),
    sent: new Map(),
    nonConforming: [],
    timeline: [],
    requests: 0,
    errors: 0,
    timeouts: 0,
  };
  options.live?.(result);
  const started = Date.now();

  const runs = options.teams.map(({ team, token }, teamIndex) => {
    let turn = 0;
    let nextCreate = CREATED_IDS_FROM;
    let nextDelete = 1;
    const created = new Map<number, string>();
    const deleted = new Set<number>();
    result.created.set(team, created);
    result.deleted.set(team, deleted);
    const sent = { creates: new Map<number, string>(), deletes: new Set<number>(), answered: new Set<string>() };
    result.sent.set(team, sent);
    // Copied into every request: autocannon adds Content-Length to the headers object it is given.
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const kinds = ['create', 'list', 'delete', 'nearest', 'create', 'invalid'] as const;

    return autocannon({
      url: options.url,
      connections: options.connectionsPerTeam,
      duration: options.seconds,
      timeout: 10,
      requests: [
        {
          setupRequest: (request, context) => {
            const kind = kinds[turn++ % kinds.length];
            let op: Op;
            if (kind === 'create') op = { kind, id: nextCreate++, name: `load ${team} ${teamIndex} ✓ ${nextCreate}` };
            else if (kind === 'delete') op = { kind, id: nextDelete <= SEEDED_PLANTS ? nextDelete++ : CREATED_IDS_FROM - 1 };
            else op = { kind };
            if (op.kind === 'create') sent.creates.set(op.id, op.name);
            if (op.kind === 'delete') sent.deletes.add(op.id);
            Object.assign(context, { op, sentAt: Date.now() });
            switch (op.kind) {
              case 'create':
                return { ...request, method: 'POST', path: '/plants', headers: { ...headers }, body: json({ id: op.id, name: op.name, tag: 'load' }) };
              case 'delete':
                return { ...request, method: 'DELETE', path: `/plants/${op.id}`, headers: { ...headers }, body: undefined };
              case 'list':
                return { ...request, method: 'GET', path: '/plants?limit=20&tag=seeded', headers: { ...headers }, body: undefined };
              case 'nearest':
                return {
                  ...request,
                  method: 'POST',
                  path: '/locations/nearest',
                  headers: { ...headers },
                  body: json({ customer_address: { zip: '10001' }, max_distance: 3 }),
                };
              default:
                return { ...request, method: 'POST', path: '/plants', headers: { ...headers }, body: json({ name: 42 }) };
            }
          },
          onResponse: (status, body, context, rawHeaders) => {
            const { op, sentAt } = context as { op: Op; sentAt: number };
            const path = op.kind === 'delete' ? `/plants/${op.id}` : op.kind === 'nearest' ? '/locations/nearest' : '/plants';
            const method = op.kind === 'delete' ? 'DELETE' : op.kind === 'list' ? 'GET' : 'POST';
            (result.statuses[op.kind] ??= {})[status] = (result.statuses[op.kind][status] ?? 0) + 1;
            result.timeline.push({ at: Date.now() - started, kind: op.kind, status, latencyMs: Date.now() - sentAt });
            if (op.kind === 'create' && status === 201) created.set(op.id, op.name);
            if (op.kind === 'delete' && status === 204) deleted.add(op.id);
            if (op.kind === 'create' || op.kind === 'delete') sent.answered.add(`${op.kind} ${op.id}`);
            let parsed: unknown;
            try {
              parsed = body ? JSON.parse(body) : undefined;
            } catch {
              parsed = undefined;
            }
            const headers = Object.fromEntries(Object.entries(rawHeaders ?? {}).map(([name, value]) => [name.toLowerCase(), value as string | string[]]));
            const problem = checker.problem({ method, url: path, status, headers, body: parsed, text: body });
            if (problem && result.nonConforming.length < 20) result.nonConforming.push(problem);
          },
        },
      ],
    });
  });

  // What autocannon returns without a callback is its instance as well as a promise (its types say
  // only the promise): stop() ends the run, which then settles with what it counted.
  void options.stop?.then(() => runs.forEach((run) => (run as unknown as { stop(): void }).stop()));
  for (const run of await Promise.all(runs)) {
    result.requests += run.requests.total;
    result.errors += run.errors;
    result.timeouts += run.timeouts;
  }
  return result;
}

/** What the database must show afterwards: every acknowledged create there, every acknowledged delete gone. */
export async function lostWrites(query: Query, result: TrafficResult): Promise<string[]> {
  const lost: string[] = [];
  for (const [team, created] of result.created) {
    const rows = new Map((await query("SELECT id, name FROM plants WHERE team = ? AND tag = 'load'", [team])).map((p) => [Number(p.id), p.name]));
    for (const [id, name] of created) if (rows.get(id) !== name) lost.push(`${team}: created plant ${id} is not in the database`);
  }
  for (const [team, deleted] of result.deleted) {
    const ids = new Set((await query('SELECT id FROM plants WHERE team = ?', [team])).map((p) => Number(p.id)));
    for (const id of deleted) if (ids.has(id)) lost.push(`${team}: deleted plant ${id} is still in the database`);
  }
  return lost;
}

/**
 * What the database must not show afterwards: a write nobody asked for, or one the service
 * refused. Each team's created plants are exactly its acknowledged creates plus, possibly, creates
 * that were never answered; its seeded plants are exactly the seed less its acknowledged deletes
 * and, possibly, deletes that were never answered. At most `inFlight` writes per team went
 * unanswered (one per connection).
 */
export async function unexpectedWrites(query: Query, result: TrafficResult, inFlight: number): Promise<string[]> {
  const problems: string[] = [];
  for (const [team, sent] of result.sent) {
    const created = result.created.get(team)!;
    const deleted = result.deleted.get(team)!;
    const unanswered = [...sent.creates.keys()].map((id) => `create ${id}`).filter((key) => !sent.answered.has(key));
    unanswered.push(...[...sent.deletes].map((id) => `delete ${id}`).filter((key) => !sent.answered.has(key)));
    if (unanswered.length > inFlight) problems.push(`${team}: ${unanswered.length} writes unanswered, more than ${inFlight} in flight`);
    const rows = await query('SELECT id, name FROM plants WHERE team = ?', [team]);
    const ids = new Set(rows.map((p) => Number(p.id)));
    for (const row of rows) {
      const id = Number(row.id);
      if (id <= SEEDED_PLANTS) continue;
      if (created.get(id) === row.name) continue;
      if (sent.creates.get(id) === row.name && !sent.answered.has(`create ${id}`)) continue;
      problems.push(`${team}: plant ${id} (${String(row.name)}) is in the database, but no create of it was acknowledged or left unanswered`);
    }
    for (let id = 1; id <= SEEDED_PLANTS; id++) {
      if (ids.has(id) || deleted.has(id) || (sent.deletes.has(id) && !sent.answered.has(`delete ${id}`))) continue;
      problems.push(`${team}: seeded plant ${id} is gone, but no delete of it was acknowledged or left unanswered`);
    }
  }
  return problems;
}

/** Plants a team has now. */
export async function plantCount(query: Query, team: string): Promise<number> {
  return Number((await query('SELECT COUNT(*) AS n FROM plants WHERE team = ?', [team]))[0].n);
}
