import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Logger,
  Param,
  PayloadTooLargeException,
  Post,
  Put,
  Query,
  Req,
  Res,
  UnprocessableEntityException,
  UnsupportedMediaTypeException,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiProduces,
  ApiTags,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { adminHeaders } from '../common/api-headers.js';
import { AdminScope, CurrentCaller } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { ErrorBody } from '../common/error-body.js';
import { nextPageLink } from '../common/next-page-link.js';
import type { EnvironmentVariables } from '../config/environment.js';
import { ExportQuery, ImportQuery, ImportView, ListStoresQuery, parseColumns, StoreRequest, storeView, StoreView, StoreWrittenView } from './dto/admin-store.dto.js';
import { StoreAdminService } from './store-admin.service.js';
import { STORE_CSV_COLUMNS } from './store-csv.js';
import { StoreExportService } from './store-export.service.js';
import { StoreImportError, StoreImportService } from './store-import.service.js';

/** The path of the CSV upload: the JSON body reader leaves its stream alone (json-body.ts). */
export const STORE_IMPORT_PATH = '/admin/stores.csv';
/** The share of the process an upload's import may take (StoreImportService's pacing): `npm run bench` measures searches during one. */
const IMPORT_CPU_SHARE = 0.5;

const CODE_PARAM = { name: 'code', description: "The store's code (its key in the CSV), 1 to 64 characters.", schema: { type: 'string' as const, maxLength: 64, example: 'NY-0042' } };
const NOT_FOUND = { description: 'No store with this code.', type: ErrorBody, example: { error: 404, message: 'store "NY-0042" not found' } };

/**
 * The store list for operators without a shell. One store at a time goes through
 * StoreAdminService, a whole file through the same StoreImportService as `locations import`
 * (all or nothing, `dry_run`, `prune`), and the export is the command line's. Every change
 * reaches the search index of every instance within STORE_INDEX_REFRESH_MS.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@Controller('admin')
export class AdminStoresController {
  private readonly audit = new Logger('Audit');
  private readonly maxImportBytes: number;

  constructor(
    private readonly stores: StoreAdminService,
    private readonly imports: StoreImportService,
    private readonly exporter: StoreExportService,
    config: ConfigService<EnvironmentVariables, true>,
  ) {
    this.maxImportBytes = config.get('STORE_IMPORT_MAX_BYTES', { infer: true });
  }

  @Get('stores')
  @AdminScope('listing stores')
  @ApiOperation({ operationId: 'adminListStores', summary: 'List stores', description: 'Stores by code, a page at a time; `state` and `q` narrow the list down.' })
  @ApiOkResponse({ description: 'The stores.', type: StoreView, isArray: true, headers: adminHeaders('Link') })
  @ApiBadRequestResponse({ description: 'A query parameter is invalid or unknown.', type: ErrorBody, example: { error: 400, message: 'limit must be an integer from 1 to 1000' } })
  async list(@Query() query: ListStoresQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<StoreView[]> {
    const { stores, nextAfter } = await this.stores.page(query);
    if (nextAfter !== undefined) {
      res.setHeader('Link', nextPageLink(req, '/admin/stores', { limit: query.limit, after: nextAfter, state: query.state, q: query.q }));
    }
    return stores.map(storeView);
  }

  // The whole list is `/admin/stores.csv` (GET exports it, POST imports one), beside `stores`
  // rather than under it: every path under `/admin/stores/` is a store code, `export` and `import` included.
  @Get('stores.csv')
  @AdminScope('exporting stores')
  @ApiOperation({
    operationId: 'adminExportStores',
    summary: 'Export the store list',
    description:
      "Every store as CSV, ordered by code, in the format the import takes back. Streamed. A code, name, address or city that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return, after any `'`s) gets a leading `'`, which the import takes off again.",
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: 'The CSV, with its header row.', content: { 'text/csv': { schema: { type: 'string', example: `${STORE_CSV_COLUMNS.join(',')}\n` } } } })
  @ApiBadRequestResponse({ description: 'A query parameter is invalid or unknown.', type: ErrorBody, example: { error: 400, message: `columns must be a comma-separated list of ${STORE_CSV_COLUMNS.join(', ')}, each at most once` } })
  async export(@CurrentCaller() caller: Caller, @Query() query: ExportQuery, @Res() res: Response): Promise<void> {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="stores.csv"');
    const count = await this.exporter.export(res, query.columns === undefined ? undefined : parseColumns(query.columns));
    this.audit.log({ event: 'admin.stores.exported', team: caller.team, tokenId: caller.tokenId, target: { stores: count } });
  }

  @Get('stores/:code')
  @AdminScope('reading stores')
  @ApiOperation({ operationId: 'adminGetStore', summary: 'Show a store', description: 'One store by its code.' })
  @ApiParam(CODE_PARAM)
  @ApiOkResponse({ description: 'The store.', type: StoreView })
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@Param('code') code: string): Promise<StoreView> {
    return storeView(await this.stores.get(code));
  }

  @Put('stores/:code')
  @AdminScope('changing stores')
  @ApiBodyErrors()
  @ApiOperation({ operationId: 'adminPutStore', summary: 'Create or replace a store', description: 'The store with this code, checked as a row of the import; 201 when it is new, 200 when it replaced one.' })
  @ApiParam(CODE_PARAM)
  @ApiCreatedResponse({ description: 'Created; `Location` is the store.', type: StoreWrittenView, headers: adminHeaders('Location') })
  @ApiOkResponse({ description: 'Replaced (or already equal).', type: StoreWrittenView })
  @ApiBadRequestResponse({ description: 'A field is missing, not text, or breaks a rule of the store CSV; the message names each, with the import\'s words.', type: ErrorBody, example: { error: 400, message: 'state: "XX" is not a US state or territory code' } })
  async put(@CurrentCaller() caller: Caller, @Param('code') code: string, @Body() body: StoreRequest, @Res({ passthrough: true }) res: Response): Promise<StoreWrittenView> {
    const { store, created, warnings } = await this.stores.upsert(code, body);
    this.audit.log({ event: 'admin.store.upserted', team: caller.team, tokenId: caller.tokenId, target: { code, created } });
    if (created) {
      res.status(201);
      res.setHeader('Location', `/admin/stores/${encodeURIComponent(code)}`);
    }
    return { ...storeView(store), warnings };
  }

  @Delete('stores/:code')
  @HttpCode(204)
  @AdminScope('changing stores')
  @ApiOperation({ operationId: 'adminDeleteStore', summary: 'Delete a store', description: 'Deletes the store with this code.' })
  @ApiParam(CODE_PARAM)
  @ApiNoContentResponse({ description: 'Deleted. No body.' })
  @ApiNotFoundResponse(NOT_FOUND)
  async remove(@CurrentCaller() caller: Caller, @Param('code') code: string): Promise<void> {
    await this.stores.remove(code);
    this.audit.log({ event: 'admin.store.deleted', team: caller.team, tokenId: caller.tokenId, target: { code } });
  }

  @Post('stores.csv')
  @HttpCode(200)
  @AdminScope('importing stores')
  @ApiOperation({
    operationId: 'adminImportStores',
    summary: 'Import a store list (CSV)',
    description:
      'The CSV of `locations import`, uploaded as `text/csv` and streamed to a temporary file: every row is checked first, then all are written in one transaction, upserting by code. A bad file writes nothing and answers 422 listing the bad lines (the first 50, then how many more). An upload cut off writes nothing.',
  })
  @ApiConsumes('text/csv')
  @ApiBody({ description: `The CSV, header \`${STORE_CSV_COLUMNS.join(',')}\`.`, schema: { type: 'string', format: 'binary' } })
  @ApiOkResponse({ description: 'Imported (or, with `dry_run`, checked).', type: ImportView })
  @ApiBadRequestResponse({ description: 'A query parameter is invalid or unknown.', type: ErrorBody, example: { error: 400, message: 'dry_run must be true or false' } })
  @ApiPayloadTooLargeResponse({ description: 'The file is larger than STORE_IMPORT_MAX_BYTES (50 MiB by default).', type: ErrorBody, example: { error: 413, message: 'the file exceeds the limit of 52428800 bytes (STORE_IMPORT_MAX_BYTES)' } })
  @ApiUnsupportedMediaTypeResponse({ description: 'The body is not sent as text/csv.', type: ErrorBody, example: { error: 415, message: 'the store list must be sent as text/csv' } })
  @ApiUnprocessableEntityResponse({
    description: 'The file has bad rows; nothing was written. The message lists each bad line and column with its reason.',
    type: ErrorBody,
    example: { error: 422, message: 'the file was not imported, 1 problem found:\n  line 3, state: "XX" is not a US state or territory code' },
  })
  async import(@CurrentCaller() caller: Caller, @Query() query: ImportQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<ImportView> {
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'text/csv') throw new UnsupportedMediaTypeException('the store list must be sent as text/csv');
    const tooLarge = () => new PayloadTooLargeException(`the file exceeds the limit of ${this.maxImportBytes} bytes (STORE_IMPORT_MAX_BYTES)`);
    if (Number(req.headers['content-length'] ?? 0) > this.maxImportBytes) throw tooLarge();
    const dir = await mkdtemp(join(tmpdir(), 'plant-store-import-'));
    try {
      const file = join(dir, 'stores.csv');
      // Not pipeline(req, …): on a refusal it would destroy the request's socket before the 413 is sent.
      const limiter = byteLimit(this.maxImportBytes, tooLarge);
      req.once('close', () => !req.complete && limiter.destroy(new Error('the upload was cut off')));
      req.pipe(limiter);
      try {
        await pipeline(limiter, createWriteStream(file));
      } catch (error) {
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
      const dryRun = query.dry_run ?? false;
      // Half of the process at most: searches and the other requests keep going meanwhile.
      const summary = await this.imports.importFile(file, { dryRun, prune: query.prune ?? false, cpuShare: IMPORT_CPU_SHARE }).catch((error: unknown) => {
        throw error instanceof StoreImportError ? new UnprocessableEntityException(error.message) : error;
      });
      this.audit.log({ event: 'admin.stores.imported', team: caller.team, tokenId: caller.tokenId, target: { ...summary, warnings: summary.warnings.length, dryRun } });
      return { read: summary.read, inserted: summary.inserted, updated: summary.updated, unchanged: summary.unchanged, pruned: summary.pruned, dry_run: dryRun, warnings: summary.warnings };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

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
