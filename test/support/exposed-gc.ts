import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Runs `body` with V8's collector on the global object, as `node --expose-gc` (the image's flag)
 * puts it there; jest runs without the flag. The collector is reached as jest's leak detector
 * reaches it: the flag set for one new context and unset again.
 */
export async function withExposedGc<T>(body: () => T | Promise<T>): Promise<T> {
  const global = globalThis as { gc?: unknown };
  const before = global.gc;
  setFlagsFromString('--expose-gc');
  try {
    global.gc = runInNewContext('gc');
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  try {
    return await body();
  } finally {
    if (before === undefined) delete global.gc;
    else global.gc = before;
  }
}

/** Runs `body` with no collector on the global object, as Node runs without `--expose-gc`. */
export async function withoutExposedGc<T>(body: () => T | Promise<T>): Promise<T> {
  const global = globalThis as { gc?: unknown };
  const before = global.gc;
  delete global.gc;
  try {
    return await body();
  } finally {
    if (before !== undefined) global.gc = before;
  }
}
