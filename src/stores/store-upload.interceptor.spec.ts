import { readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { lastValueFrom, defer } from 'rxjs';
import type { StoresSettings } from './stores.config.js';
import { StoreUploadInterceptor, type StoreList } from './store-upload.interceptor.js';

const spools = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('plant-store-import-')));

/** Uploads `body` through the interceptor; `handle` runs as the handler, given the received list. */
async function upload<T>(body: string, handle: (list: StoreList) => Promise<T>): Promise<T> {
  const req = Object.assign(new PassThrough(), { headers: { 'content-type': 'text/csv', 'content-length': String(Buffer.byteLength(body)) }, complete: true });
  const context = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({ setHeader: () => undefined }) }),
  } as unknown as ExecutionContext;
  const next: CallHandler = { handle: () => defer(() => handle((req as unknown as { storeList: StoreList }).storeList)) };
  req.end(body);
  const interceptor = new StoreUploadInterceptor({ STORE_IMPORT_MAX_BYTES: 50 * 1024 * 1024 } as StoresSettings);
  return (await lastValueFrom(interceptor.intercept(context, next))) as T;
}

describe(StoreUploadInterceptor.name, () => {
  // 20,000 rows of a store list: repetitive, as real lists are (hours, states, street names).
  const header = 'code,name,address,city,state,zip,lat,lng,monday,tuesday,wednesday,thursday,friday,saturday,sunday';
  const rows = Array.from(
    { length: 20_000 },
    (_, n) =>
      `S-${n},Store ${n},${n} Main St,Springfield,IL,62701,39.78,-89.65,9:00 AM - 6:00 PM,9:00 AM - 6:00 PM,9:00 AM - 6:00 PM,9:00 AM - 6:00 PM,9:00 AM - 6:00 PM,10:00 AM - 4:00 PM,Closed`,
  );
  const csv = [header, ...rows].join('\n') + '\n';

  it('keeps the upload compressed while it is imported, gives its bytes back unchanged on every read, and removes it after the answer', async () => {
    const before = spools();
    const seen = await upload(csv, async (open) => {
      const [dir] = [...spools()].filter((name) => !before.has(name));
      const files = readdirSync(join(tmpdir(), dir));
      const kept = statSync(join(tmpdir(), dir, files[0])).size;
      // Each pass of the import opens the list again.
      const reads = [await text(open()), await text(open())];
      return { files, kept, reads };
    });
    expect(seen.files).toEqual(['stores.csv.gz']);
    expect(seen.kept).toBeLessThan(Buffer.byteLength(csv) / 5);
    expect(seen.reads).toEqual([csv, csv]);
    expect([...spools()].filter((name) => !before.has(name))).toEqual([]);
  });

  it('lets a pass stop reading half way, the file closed, and the next pass read it whole', async () => {
    const reads = await upload(csv, async (open) => {
      const first: Readable = open();
      for await (const chunk of first) {
        expect((chunk as Buffer).length).toBeGreaterThan(0);
        break; // a bad row: the check stops there.
      }
      expect(first.destroyed).toBe(true);
      return text(open());
    });
    expect(reads).toBe(csv);
  });
});
