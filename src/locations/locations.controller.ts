import { Body, Controller, Get, HttpCode, NotAcceptableException, NotFoundException, Param, Post, Req, Res, UseFilters } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { responseHeaders, storePageHeaders } from '../common/api-headers.js';
import { ErrorBody } from '../common/error-body.js';
import { STORE_CODE_LENGTH } from '../shared/store-fields.js';
import { NEAREST_REQUEST_EXAMPLES, NearestLocationsRequest, NearestLocationsResponse } from './dto/nearest-locations.dto.js';
import { STORE_PAGE_EXAMPLE, STORE_PAGE_JSON_LD_EXAMPLE, StorePageJsonLd, StorePageResponse } from './dto/store-page.dto.js';
import { LocationsService, sendNearest } from './locations.service.js';
import { storeJsonLd } from './store-json-ld.js';
import { entityTag, noneMatch, pageCacheControl, PAGE_MAX_AGE_SECONDS, storePageJson, type StorePage } from './store-page.js';
import { UnknownZipFilter } from './unknown-zip.filter.js';

/** The forms of a store's page, the default first (no Accept header, or any type). */
const PAGE_MEDIA_TYPES = ['application/json', 'application/ld+json'];

@ApiTags('locations')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(UnknownZipFilter)
@ApiExtraModels(StorePageResponse, StorePageJsonLd)
@Controller('locations')
export class LocationsController {
  constructor(private readonly locations: LocationsService) {}

  @Post('nearest')
  @HttpCode(200)
  @ApiBodyErrors()
  @ApiBody({ type: NearestLocationsRequest, examples: NEAREST_REQUEST_EXAMPLES })
  @ApiOperation({
    operationId: 'findNearestLocations',
    summary: 'Find the nearest store locations',
    description:
      "Stores within `max_distance` miles (or kilometres, with `distance_unit`) of the customer (great-circle distance, boundary included), nearest first, at most `limit` of them; with `nearest_if_none`, the single nearest store when none is in range; with `region`, every store of a state or city instead, nearest first. The customer's position is the device's `lat`/`lng` when the request has them; else, where the service runs a geocoder, the street address; else the ZIP code's point. The `Customer-Position`, `Distance-Unit` and `Search-Scope` headers say which position, unit and scope were used.",
  })
  @ApiOkResponse({
    type: NearestLocationsResponse,
    description: 'Code "Success" and the locations (an empty array when none is in range, or the region has none).',
    headers: responseHeaders('Customer-Position', 'Distance-Unit', 'Search-Scope', 'Travel-Source'),
  })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description:
      'Invalid request parameters: a malformed or unknown ZIP code, a bad max_distance, limit, state, distance_unit, nearest_if_none, region, open_at, open_only, travel_mode or max_travel_time, max_distance given with region, an unknown field, or a body that is not valid JSON. The message names the field.',
    example: { error: 400, message: 'unknown ZIP code 00000' },
  })
  nearest(@Body() body: NearestLocationsRequest, @Res() res: Response): void | Promise<void> {
    return sendNearest(res, this.locations.nearest(body));
  }

  @Get(':code')
  @ApiOperation({
    operationId: 'getStorePage',
    summary: "A store's page",
    description: `One store by its code, as storefronts (\`application/json\`, the default) and search engines (\`application/ld+json\`: schema.org's GardenStore) read it, from the search's index: what a search would show now, an edit through the admin API included. The JSON says whether the store is open now and when that changes next. Each answer carries a strong \`ETag\` (a digest of its bytes: it changes with the store, with the days ahead and, in JSON, with \`open\`/\`next_change\`), \`Cache-Control: private, max-age=…, must-revalidate\` (at most ${PAGE_MAX_AGE_SECONDS} s, and never past the next change of \`open\` or the store's midnight) and \`Vary: Accept\`; \`If-None-Match\` with the ETag answers 304.`,
  })
  @ApiParam({ name: 'code', description: `The store's code, 1 to ${STORE_CODE_LENGTH} characters (a longer one: 404).`, example: 'PS-0001' })
  @ApiOkResponse({
    description: "The store's page, in the form `Accept` asked for.",
    headers: storePageHeaders(),
    content: {
      'application/json': { schema: { $ref: getSchemaPath(StorePageResponse) }, example: STORE_PAGE_EXAMPLE },
      'application/ld+json': { schema: { $ref: getSchemaPath(StorePageJsonLd) }, example: STORE_PAGE_JSON_LD_EXAMPLE },
    },
  })
  @ApiResponse({
    status: 304,
    description: "`If-None-Match` named this form's current ETag (or `*`): the cached page is still right.",
    headers: storePageHeaders(),
  })
  @ApiNotFoundResponse({
    type: ErrorBody,
    description: `No store has this code (a code longer than ${STORE_CODE_LENGTH} characters included).`,
    example: { error: 404, message: 'store "PS-9999" not found' },
  })
  @ApiResponse({
    status: 406,
    type: ErrorBody,
    description: '`Accept` allows neither `application/json` nor `application/ld+json`.',
    example: { error: 406, message: 'a store page is application/json or application/ld+json' },
  })
  page(@Param('code') code: string, @Req() req: Request, @Res() res: Response): void {
    const type = req.accepts(PAGE_MEDIA_TYPES);
    if (type === false) throw new NotAcceptableException('a store page is application/json or application/ld+json');
    // A code no store can have is not looked up (nor echoed back).
    if (code.length > STORE_CODE_LENGTH && [...code].length > STORE_CODE_LENGTH)
      throw new NotFoundException(`no store has a code longer than ${STORE_CODE_LENGTH} characters`);
    const page = this.locations.page(code);
    if (!page) throw new NotFoundException(`store ${JSON.stringify(code)} not found`);
    sendStorePage(req, res, page, type === 'application/ld+json');
  }
}

/**
 * A store's page in one of its forms, or 304 when `If-None-Match` names it: the body is written
 * first, as its ETag is its digest. The JSON-LD has no `open`: only its days move it (at the
 * store's midnight), so it may be kept until then, within the cap.
 */
function sendStorePage(req: Request, res: Response, page: StorePage, jsonLd: boolean): void {
  const body = jsonLd ? JSON.stringify(storeJsonLd(page, pageUrl(req, page.code))) : storePageJson(page);
  const tag = entityTag(body);
  res.setHeader('ETag', tag);
  res.setHeader('Cache-Control', pageCacheControl(jsonLd ? page.daysChangeAt : page.changesAt, Date.now()));
  res.vary('Accept');
  if (noneMatch(req.headers['if-none-match'], tag)) {
    res.status(304).end();
    return;
  }
  res.status(200).setHeader('Content-Type', `${jsonLd ? 'application/ld+json' : 'application/json'}; charset=utf-8`);
  res.send(body);
}

/** The page's absolute URL (the JSON-LD's `@id`), as the client reached it (TRUST_PROXY says whether X-Forwarded-Proto and -Host count). */
function pageUrl(req: Request, code: string): string {
  const host = req.get('host');
  const path = `/locations/${encodeURIComponent(code)}`;
  return host ? `${req.protocol}://${host}${path}` : path;
}
