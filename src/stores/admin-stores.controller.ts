import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Logger,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseFilters,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPayloadTooLargeResponse,
  ApiPreconditionFailedResponse,
  ApiProduces,
  ApiTags,
  ApiUnprocessableEntityResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { adminHeaders, responseHeaders } from '../common/api-headers.js';
import { AdminScope, CurrentCaller } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { AdminErrorBody, ErrorBody } from '../common/error-body.js';
import { nextPageLink } from '../common/next-page-link.js';
import {
  ExportQuery,
  ImportQuery,
  ImportView,
  importView,
  ListStoresQuery,
  parseColumns,
  StoreRequest,
  storeFields,
  storeView,
  storeWrittenView,
  StoreView,
  StoreWrittenView,
} from './dto/admin-store.dto.js';
import { StoreAdminService } from './store-admin.service.js';
import { StoreExportService } from './store-export.service.js';
import { StoreErrorsFilter } from './store-errors.filter.js';
import { GUARDED_FIELDS, STORE_CODE_LENGTH, STORE_FIELD_NAMES } from '../shared/store-fields.js';
import { MAX_LISTED_CHANGES } from './store-import-plan.js';
import { StoreImportService } from './store-import.service.js';
import { StoreUploadInterceptor, UploadedStoreList, type StoreList } from './store-upload.interceptor.js';

/** The path of the CSV upload: the JSON body reader leaves its stream alone (json-body.ts). */
export const STORE_IMPORT_PATH = '/admin/stores.csv';
/**
 * The share of the process an upload's import or the export may take (Pacer): `npm run bench:memory`
 * measures the searches beside each. The command line's import and export are not paced.
 */
const CATALOGUE_CPU_SHARE = 0.5;

const CODE_PARAM = {
  name: 'code',
  description: `The store's code (its key in the CSV), 1 to ${STORE_CODE_LENGTH} characters.`,
  schema: { type: 'string' as const, maxLength: STORE_CODE_LENGTH, example: 'NY-0042' },
};
const NOT_FOUND = { description: 'No store with this code.', type: ErrorBody, example: { error: 404, message: 'store "NY-0042" not found' } };

/**
 * The store list for operators without a shell. One store at a time goes through
 * StoreAdminService, a whole file through the same StoreImportService as `locations import`
 * (all or nothing, `dry_run`, `prune`), and the export is the command line's. Every change
 * reaches the search index of every instance within STORE_INDEX_REFRESH_MS. The services throw
 * the store domain's errors; StoreErrorsFilter answers them (status, audit line, ETag). An upload
 * reaches its handler as a file (StoreUploadInterceptor).
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(StoreErrorsFilter)
@Controller('admin')
export class AdminStoresController {
  private readonly audit = new Logger('Audit');

  constructor(
    private readonly stores: StoreAdminService,
    private readonly imports: StoreImportService,
    private readonly exporter: StoreExportService,
  ) {}

  @Get('stores')
  @AdminScope('listing stores')
  @ApiOperation({
    operationId: 'adminListStores',
    summary: 'List stores',
    description: 'Stores by code, a page at a time; `state` and `q` narrow the list down.',
  })
  @ApiOkResponse({ description: 'The stores.', type: StoreView, isArray: true, headers: adminHeaders('Link') })
  @ApiBadRequestResponse({
    description: 'A query parameter is invalid or unknown.',
    type: AdminErrorBody,
    example: { error: 400, message: 'limit must be an integer from 1 to 1000' },
  })
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
    description: `Every store as CSV, ordered by code, in the format the import takes back. Streamed, at half the process's pace when the catalogue is large (searches beside it keep at least about half their rate). A ${GUARDED_FIELDS.slice(0, -1).join(', ')} or ${GUARDED_FIELDS.at(-1)} cell that a spreadsheet would run as a formula (starting with =, +, -, @, a tab or a carriage return, after any \`'\`s) gets a leading \`'\`, which the import takes off again.`,
  })
  @ApiProduces('text/csv')
  @ApiOkResponse({
    description: 'The CSV, with its header row.',
    content: { 'text/csv': { schema: { type: 'string', example: `${STORE_FIELD_NAMES.join(',')}\n` } } },
  })
  @ApiBadRequestResponse({
    description: 'A query parameter is invalid or unknown.',
    type: AdminErrorBody,
    example: { error: 400, message: `columns must be a comma-separated list of ${STORE_FIELD_NAMES.join(', ')}, each at most once` },
  })
  async export(@CurrentCaller() caller: Caller, @Query() query: ExportQuery, @Res() res: Response): Promise<void> {
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', 'attachment; filename="stores.csv"');
    const count = await this.exporter.export(res, query.columns === undefined ? undefined : parseColumns(query.columns), CATALOGUE_CPU_SHARE);
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
  @ApiOperation({
    operationId: 'adminPutStore',
    summary: 'Create or replace a store',
    description: 'The store with this code, checked as a row of the import; 201 when it is new, 200 when it replaced one.',
  })
  @ApiParam(CODE_PARAM)
  @ApiCreatedResponse({ description: 'Created; `Location` is the store.', type: StoreWrittenView, headers: adminHeaders('Location') })
  @ApiOkResponse({ description: 'Replaced (or already equal).', type: StoreWrittenView })
  @ApiBadRequestResponse({
    description: "A field is missing, not text, or breaks a rule of the store CSV; the message names each, with the import's words.",
    type: AdminErrorBody,
    example: { error: 400, message: 'state: "XX" is not a US state or territory code' },
  })
  async put(
    @CurrentCaller() caller: Caller,
    @Param('code') code: string,
    @Body() body: StoreRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<StoreWrittenView> {
    const { store, created, warnings } = await this.stores.upsert(code, storeFields(body));
    this.audit.log({ event: 'admin.store.upserted', team: caller.team, tokenId: caller.tokenId, target: { code, created } });
    if (created) {
      res.status(201);
      res.setHeader('Location', `/admin/stores/${encodeURIComponent(code)}`);
    }
    return storeWrittenView(store, warnings);
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
    description: [
      'The CSV of `locations import`, uploaded as `text/csv` and streamed to a temporary file: every row is checked first, then all are written in one transaction, upserting by code. A bad file writes nothing and answers 422 listing the bad lines (the first 50, then how many more). An upload cut off writes nothing.',
      '',
      `Preview, then apply: a dry run (\`dry_run=true\`) lists every store it would add, update (each changed field, old and new) and remove, the first ${MAX_LISTED_CHANGES}, and answers the catalogue's version as \`ETag\`. The apply that sends it back as \`If-Match\` is refused with 412 when the catalogue changed meanwhile, through any instance or the command line, and then does exactly what the dry run listed. Without \`If-Match\` it applies to the catalogue as it is.`,
      '',
      'A `prune` that would remove more than `STORE_IMPORT_MAX_PRUNE_PERCENT` (10 %) of the catalogue is refused with 409 unless `expected_removals` states the number, as the dry run reported it.',
    ].join('\n'),
  })
  @ApiConsumes('text/csv')
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'The `ETag` of a dry run, e.g. `"42"`: apply only if the catalogue is still at that version, else 412. Ignored by a dry run. (No example: Swagger UI would send it with every try.)',
    schema: { type: 'string' },
  })
  @ApiHeader({
    name: 'Prefer',
    required: false,
    description:
      'With `handling=lenient` (RFC 7240), a dry run of a file with bad rows answers 200 listing them as data (`problems`, `problem_count`) instead of the 422, and says so in `Preference-Applied`. Ignored without `dry_run`.',
    schema: { type: 'string', example: 'handling=lenient' },
  })
  @ApiBody({ description: `The CSV, header \`${STORE_FIELD_NAMES.join(',')}\`.`, schema: { type: 'string', format: 'binary' } })
  @ApiOkResponse({
    description: 'Imported (or, with `dry_run`, checked), with the list of changes; a lenient dry run of a bad file lists its problems instead.',
    type: ImportView,
    headers: responseHeaders('ETag', 'Preference-Applied'),
  })
  @ApiBadRequestResponse({
    description: 'A query parameter or `If-Match` is invalid or unknown.',
    type: AdminErrorBody,
    example: { error: 400, message: 'dry_run must be true or false' },
  })
  @ApiConflictResponse({
    description:
      'The prune would remove more than `STORE_IMPORT_MAX_PRUNE_PERCENT` of the catalogue and `expected_removals` was not given, or it was and is not the number; nothing was written.',
    type: ErrorBody,
    example: {
      error: 409,
      message:
        'this import would remove 212 of 391 stores (54.2 %), more than the 10 % (STORE_IMPORT_MAX_PRUNE_PERCENT) allowed without confirmation; nothing was written. Check the list with dry_run=true, then send expected_removals=212 to confirm',
    },
  })
  @ApiPreconditionFailedResponse({
    description:
      "`If-Match` names a catalogue version that is no longer current: a store changed since the dry run. Nothing was written; the response's `ETag` is the current version. Check the file again.",
    type: ErrorBody,
    headers: responseHeaders('ETag'),
    example: {
      error: 412,
      message:
        'the store catalogue changed since the dry run (version 41, now 43); nothing was written. Check the file again (dry_run=true) and apply with its ETag',
    },
  })
  @ApiPayloadTooLargeResponse({
    description: 'The file is larger than STORE_IMPORT_MAX_BYTES (50 MiB by default).',
    type: ErrorBody,
    example: { error: 413, message: 'the file exceeds the limit of 52428800 bytes (STORE_IMPORT_MAX_BYTES)' },
  })
  @ApiUnsupportedMediaTypeResponse({
    description: 'The body is not sent as text/csv.',
    type: ErrorBody,
    example: { error: 415, message: 'the store list must be sent as text/csv' },
  })
  @ApiUnprocessableEntityResponse({
    description:
      'The file has bad rows; nothing was written. The message lists each bad line and column with its reason, and `problems` has them as data (the first 50).',
    type: AdminErrorBody,
    example: { error: 422, message: 'the file was not imported, 1 problem found:\n  line 3, state: "XX" is not a US state or territory code' },
  })
  @UseInterceptors(StoreUploadInterceptor)
  async import(
    @CurrentCaller() caller: Caller,
    @Query() query: ImportQuery,
    @UploadedStoreList() storeList: StoreList,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ImportView> {
    const dryRun = query.dry_run ?? false;
    const prune = query.prune ?? false;
    if (query.expected_removals !== undefined && !prune) throw new BadRequestException('expected_removals needs prune=true');
    const ifVersions = parseIfMatch(req.headers['if-match']);
    const lenient = dryRun && prefersLenient(req.headers.prefer);
    // Half of the process at most: searches and the other requests keep going meanwhile. Refusals: StoreErrorsFilter.
    const summary = await this.imports.import(storeList, {
      dryRun,
      prune,
      ifVersions,
      expectedRemovals: query.expected_removals,
      cpuShare: CATALOGUE_CPU_SHARE,
      listProblems: lenient,
    });
    this.audit.log({
      event: dryRun ? 'admin.stores.import_checked' : 'admin.stores.imported',
      team: caller.team,
      tokenId: caller.tokenId,
      target: {
        read: summary.read,
        inserted: summary.inserted,
        updated: summary.updated,
        unchanged: summary.unchanged,
        pruned: summary.pruned,
        warnings: summary.warningCount,
        dryRun,
        version: summary.version,
        ifMatch: ifVersions !== undefined,
      },
    });
    res.setHeader('ETag', `"${summary.version}"`);
    if (lenient) res.setHeader('Preference-Applied', 'handling=lenient');
    return importView(summary, dryRun);
  }
}

/** An entity tag of ours: the catalogue version in quotes. */
const ENTITY_TAG = /^(W\/)?"([^"]*)"$/;

/**
 * `If-Match` (RFC 9110, 13.1.1) as the catalogue versions it accepts: undefined when absent or `*`
 * (any catalogue), otherwise the versions of its strong tags. A weak tag, or one that is not a
 * version of ours, matches nothing: the apply is refused with 412. A header that is not a list of
 * entity tags is a 400.
 */
export function parseIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const tag = ENTITY_TAG.exec(part.trim());
    if (!tag) throw new BadRequestException('If-Match must be "*" or entity tags like "42", as the ETag of a dry run');
    if (!tag[1] && /^(0|[1-9][0-9]{0,14})$/.test(tag[2])) versions.push(Number(tag[2]));
  }
  return versions;
}

/**
 * Whether `Prefer` (RFC 7240, section 4.4) asks for `handling=lenient`: preferences are separated
 * by commas, may carry parameters after `;`, and a value may be quoted.
 *
 * Why a request preference and a 200: a refused file's problems must reach a program as data
 * (line, column, code, message), and every error body is exactly `{error, message}` (the
 * contract), so they cannot ride on the 422. A dry run is a preview, and "this file would be
 * refused, for these reasons" is a preview's answer; but a caller that checks files by the dry
 * run's status must keep getting its 422, so the 200 is asked for. A response header would not
 * do: a reason quotes the bad cell, and headers have size limits that bodies have not. Nothing is
 * kept between requests, so any instance answers.
 */
export function prefersLenient(header: string | string[] | undefined): boolean {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.flatMap((value) => value.split(',')).some((preference) => /^handling\s*=\s*(?:lenient|"lenient")$/i.test(preference.split(';')[0].trim()));
}
