import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline as pipe, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGunzip, createGzip } from 'node:zlib';
import {
  BadRequestException,
  createParamDecorator,
  Inject,
  Injectable,
  PayloadTooLargeException,
  UnsupportedMediaTypeException,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import type { Request, Response } from 'express';
import { defer, lastValueFrom, type Observable } from 'rxjs';
import { storesConfig } from './stores.config.js';

/** An uploaded store list as the handler gets it: each call opens a new stream of its bytes as uploaded, from the first. */
export type StoreList = () => Readable;

type UploadRequest = Request & { storeList?: StoreList };

/**
 * The store list uploaded as `text/csv`, streamed to a temporary file of its own before the
 * handler runs (as Nest's FileInterceptor does for multipart), and removed once the handler has
 * answered: the handler reads it with `@UploadedStoreList()`.
 *
 * The file is kept gzip-compressed (level 1), because the import reads it three times and it
 * stays for the whole import, the reload of the search index after the commit included: where
 * `/tmp` is a tmpfs (compose.yaml, or a Kubernetes `emptyDir` in memory) every byte of it is the
 * container's memory, which the kernel cannot take back, and on disk it is page cache charged to
 * the container. A 100,000-row list of 22 MB is 3 MB so; zlib works on libuv's threads, off the
 * event loop, and bench:import measured the upload 4 % longer, the dry run and the apply as before
 * (docs/performance.md, "V8's page pool, and the import within 256 MiB").
 *
 * Another content type is a 415;
 * a file over STORE_IMPORT_MAX_BYTES a 413, by its Content-Length or while it streams; an upload
 * cut off a 400 that nobody reads. The JSON body reader leaves this path's stream alone (json-body.ts).
 *
 * Nest runs interceptors before the pipes that validate the query, so a request wrong in its query
 * and in its content type or size gets the 415 or 413, and a bad query alone is answered once the
 * file has been received (the handler's own checks, `If-Match` and `expected_removals`, likewise).
 */
@Injectable()
export class StoreUploadInterceptor implements NestInterceptor {
  private readonly maxBytes: number;

  constructor(@Inject(storesConfig.KEY) settings: ConfigType<typeof storesConfig>) {
    this.maxBytes = settings.STORE_IMPORT_MAX_BYTES;
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<UploadRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    return defer(async () => {
      const dir = await this.receive(req, res);
      try {
        const file = join(dir, SPOOLED);
        req.storeList = () => pipe(createReadStream(file), createGunzip({ chunkSize: READ_CHUNK }), ignoreError);
        return await lastValueFrom(next.handle());
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  /** Streams the body, compressed, to SPOOLED in a new temporary directory and returns the directory; nothing is left behind on a refusal. */
  private async receive(req: Request, res: Response): Promise<string> {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'text/csv') throw new UnsupportedMediaTypeException('the store list must be sent as text/csv');
    const tooLarge = () => new PayloadTooLargeException(`the file exceeds the limit of ${this.maxBytes} bytes (STORE_IMPORT_MAX_BYTES)`);
    if (Number(req.headers['content-length'] ?? 0) > this.maxBytes) throw tooLarge();
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-import-'));
    // Not pipeline(req, …): on a refusal it would destroy the request's socket before the 413 is sent.
    const limiter = byteLimit(this.maxBytes, tooLarge);
    req.once('close', () => !req.complete && limiter.destroy(new Error('the upload was cut off')));
    req.pipe(limiter);
    try {
      await pipeline(limiter, createGzip({ level: constants.Z_BEST_SPEED }), createWriteStream(join(dir, SPOOLED)));
      return dir;
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      req.unpipe(limiter);
      req.resume();
      if (error instanceof PayloadTooLargeException) {
        // The rest of the upload is read and dropped; the connection is not kept for another request.
        res.setHeader('Connection', 'close');
        throw error;
      }
      // The client went away mid-upload: nothing was imported, and there is nobody to answer.
      throw new BadRequestException('the upload was cut off before its end; nothing was imported');
    }
  }
}

/** The store list StoreUploadInterceptor received. */
export const UploadedStoreList = createParamDecorator((_data: unknown, context: ExecutionContext): StoreList => {
  const file = context.switchToHttp().getRequest<UploadRequest>().storeList;
  if (file === undefined) throw new Error('UploadedStoreList needs StoreUploadInterceptor on its route');
  return file;
});

/** The received file's name in its temporary directory. */
const SPOOLED = 'stores.csv.gz';
/**
 * Bytes a pass reads at a time, as a file's read stream gives them (zlib's default is 16 KiB): the
 * import's per-chunk work (the CSV parser, its pacing) stays what it was before the spool was compressed.
 */
const READ_CHUNK = 64 * 1024;

/**
 * pipeline's callback: an error of a pass (the reader gone, the file unreadable) destroys the
 * gunzip stream with it, and the import reading that stream gets it there.
 */
const ignoreError = () => undefined;

/** Passes bytes through until `limit`, then fails the stream with the error of `tooLarge`. */
function byteLimit(limit: number, tooLarge: () => Error): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > limit ? tooLarge() : null, chunk);
    },
  });
}
