import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's collector as `node --expose-gc` gives it, for a process started without the flag (jest's
 * workers): reached as jest's leak detector reaches it, the flag set for one new context and unset
 * again. Left set, every context created afterwards would get a `gc` of its own that cannot be
 * deleted: the next test files of the same worker included.
 */
export function exposedCollector(): (options?: object) => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as (options?: object) => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** Runs `body` with `gc` on the global object set to `value`, then puts back what was there. */
async function withGlobalGc<T>(value: unknown, body: () => T | Promise<T>): Promise<T> {
  const global = globalThis as { gc?: unknown };
  const had = Object.hasOwn(global, 'gc');
  const before = global.gc;
  // Assigned, not deleted: a `gc` that --expose-gc put there is writable but cannot be deleted.
  global.gc = value;
  try {
    return await body();
  } finally {
    if (had) global.gc = before;
    else delete global.gc;
  }
}

/** Runs `body` with V8's collector on the global object, as `node --expose-gc` (the image's flag) puts it there. */
export const withExposedGc = <T>(body: () => T | Promise<T>): Promise<T> => withGlobalGc(exposedCollector(), body);

/** Runs `body` with no collector on the global object, as Node runs without `--expose-gc`. */
export const withoutExposedGc = <T>(body: () => T | Promise<T>): Promise<T> => withGlobalGc(undefined, body);
