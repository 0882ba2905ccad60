import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's collector, reached as jest's leak detector reaches it: the flag that exposes it set for
 * one new context and unset again, so that no `gc` appears on the service's global object and it
 * works however Node was started (an operator's own NODE_OPTIONS included).
 */
setFlagsFromString('--expose-gc');
const collector = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
setFlagsFromString('--no-expose-gc');

/**
 * A full collection that gives the memory the heap no longer uses back to the system; returns
 * the milliseconds it took (the event loop waits for it).
 *
 * Node 24's V8 keeps the pages its collections empty in a pool of its own, still resident, until
 * a collection made to reduce memory, which it makes by itself only once the process goes idle. A
 * service under steady searches never does: after loading 100,000 stores it held some 35 MB of
 * such pages, and the pages an import's garbage had filled were still held when the search's
 * index was built again beside the one serving, which is where a 256 MiB container was killed
 * (docs/performance.md, "V8's page pool"). Node 20's V8 unmapped them at once. Meant for the
 * moments a whole catalogue changes hands, not for a request's path: with 100,000 stores it
 * takes some 100 ms.
 */
export function releaseMemory(): number {
  const started = performance.now();
  collector({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return performance.now() - started;
}
