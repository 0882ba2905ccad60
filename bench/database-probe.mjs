// Where MariaDB/MySQL spends its time during a benchmark run, for `npm run bench:events`:
// the server's own time per statement shape (performance_schema's digests, when the server
// runs with --performance-schema=ON; off by default in MariaDB, and it costs some throughput
// itself, so the rates of such a run are not the figures to quote) and the server's CPU split
// between its connection threads (statements, commits) and its background threads (InnoDB's
// purge of deleted rows, page flushing, the redo log's writer), read per thread from /proc.
import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds of each thread of `pid`, by thread id. */
function threadCpu(pid) {
  const seconds = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      seconds.set(Number(tid), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return seconds;
}

/**
 * `db`: a mysql2/promise connection to the server; `pid`: its process. `start()` before a run,
 * `stop()` after it answers { statements, threads } for that run: statements as
 * { digest, calls, ms } (server time, all calls) and threads as CPU seconds by kind.
 */
export async function databaseProbe(db, pid) {
  const [[{ enabled }]] = await db.query('SELECT @@performance_schema AS enabled');
  let before = new Map();
  return {
    digests: Boolean(enabled),
    async start() {
      if (enabled) await db.query('TRUNCATE TABLE performance_schema.events_statements_summary_by_digest');
      before = threadCpu(pid);
    },
    async stop() {
      const after = threadCpu(pid);
      const threads = {};
      const kinds = new Map();
      if (enabled) {
        const [rows] = await db.query('SELECT THREAD_OS_ID AS tid, NAME AS name FROM performance_schema.threads');
        for (const { tid, name } of rows) kinds.set(Number(tid), name === 'thread/sql/one_connection' ? 'connections' : 'background');
      }
      for (const [tid, seconds] of after) {
        const kind = kinds.get(tid) ?? (enabled ? 'background' : 'all threads');
        threads[kind] = (threads[kind] ?? 0) + seconds - (before.get(tid) ?? 0);
      }
      let statements = [];
      if (enabled) {
        const [rows] = await db.query(
          'SELECT DIGEST_TEXT AS digest, COUNT_STAR AS calls, SUM_TIMER_WAIT / 1e9 AS ms FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = DATABASE() ORDER BY SUM_TIMER_WAIT DESC LIMIT 20',
        );
        statements = rows.map((r) => ({ digest: r.digest, calls: Number(r.calls), ms: Number(r.ms) }));
      }
      return { statements, threads };
    },
  };
}
