interface Collector {
  (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }): void;
}

/**
 * A full collection that gives the memory the heap no longer uses back to the system; returns the
 * milliseconds it took (the event loop waits for it). Nothing to do where Node was started without
 * `--expose-gc` (the image's NODE_OPTIONS and npm start give it; see memoryReleasable).
 *
 * Node 24's V8 keeps the pages its collections empty in a pool of its own, still resident, until
 * a collection made to reduce memory, which it makes by itself only once the process goes idle. A
 * service under steady searches never does: after loading 100,000 stores it held some 35 MB of
 * such pages, and the pages an import's garbage had filled were still held when the search's
 * index was built again beside the one serving, which is where a 256 MiB container was killed
 * (docs/performance.md, "V8's page pool"). Node 20's V8 unmapped them at once.
 *
 * The collector is the one `--expose-gc` puts on the global object at start-up. Setting that flag
 * at run time instead (v8.setFlagsFromString, as jest's leak detector does) cost every request
 * 10-24 % CPU in bench:compare, the flag alone as much as the collections. Meant for the moments a
 * whole catalogue changes hands, not for a request's path: with 100,000 stores it takes some 100 ms.
 */
export function releaseMemory(): number {
  const started = performance.now();
  collector()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return performance.now() - started;
}

/** Whether releaseMemory can collect: Node was started with `--expose-gc`. */
export const memoryReleasable = (): boolean => collector() !== undefined;

const collector = (): Collector | undefined => {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === 'function' ? (gc as Collector) : undefined;
};
