import { BadRequestException, Body, Controller, Get, HttpCode, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiSchema, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { AdminScope } from '../common/auth.decorators.js';
import { POSITION_SOURCES, responseHeaders, type PositionSource } from '../common/api-headers.js';
import { ErrorBody } from '../common/error-body.js';
import { FALLBACK_REASONS, type FallbackReason } from '../geo/address-geocoder.js';
import { ZIP_PATTERN } from '../geo/zip-geocoder.js';
import { NEAREST_REQUEST_EXAMPLES, NearestLocationsRequest, NearestLocationsResponse } from './dto/nearest-locations.dto.js';
import { LocationsService, sendNearest } from './locations.service.js';
import { UnknownZipFilter } from './unknown-zip.filter.js';

@ApiSchema({ name: 'AdminZipPoint', description: 'The point a search from this ZIP code starts at.' })
export class ZipPointView {
  @ApiProperty({ description: 'The five-digit ZIP code.', example: '10001' }) zip: string;
  @ApiProperty({ description: 'Latitude.', example: 40.750633 }) lat: number;
  @ApiProperty({ description: 'Longitude.', example: -73.997177 }) lng: number;
}

@ApiSchema({ name: 'AdminCustomerPosition', description: 'Where a search with this body measures from, and the ZIP code point it would fall back to.' })
export class CustomerPositionView {
  @ApiProperty({
    description: 'What the search measures from, as its `Customer-Position` header says.',
    enum: POSITION_SOURCES,
    example: 'address',
  })
  source: PositionSource;
  @ApiProperty({ description: 'Latitude of the position.', example: 40.748441 }) lat: number;
  @ApiProperty({ description: 'Longitude of the position.', example: -73.985664 }) lng: number;
  @ApiProperty({ description: "The request's ZIP code point.", type: ZipPointView }) zip: ZipPointView;
  @ApiProperty({
    description: `Why the street address was not used, when the request had one and a geocoder runs: ${FALLBACK_REASONS.join(', ')}.`,
    enum: FALLBACK_REASONS,
    nullable: true,
    example: null,
  })
  fallback: FallbackReason | null;
}

/**
 * The spec's search for an admin token ("where would a customer land", the console's circle):
 * one search, two doors. A team token keeps POST /locations/nearest; an admin token, refused
 * there, asks here and gets the same body, byte for byte.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(UnknownZipFilter)
@Controller('admin')
export class AdminLocationsController {
  constructor(private readonly locations: LocationsService) {}

  @Post('locations/nearest')
  @HttpCode(200)
  @AdminScope('searching as a customer would')
  @ApiBodyErrors()
  @ApiBody({ type: NearestLocationsRequest, examples: NEAREST_REQUEST_EXAMPLES })
  @ApiOperation({
    operationId: 'adminFindNearestLocations',
    summary: 'Search as a customer would',
    description: 'POST /locations/nearest for an admin token: the same request, the same checks and the same answer.',
  })
  @ApiOkResponse({
    type: NearestLocationsResponse,
    description: 'Code "Success" and the locations, as POST /locations/nearest answers.',
    headers: responseHeaders('Customer-Position', 'Distance-Unit', 'Search-Scope', 'Travel-Source'),
  })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'Invalid request parameters, as for POST /locations/nearest.',
    example: { error: 400, message: 'unknown ZIP code 00000' },
  })
  nearest(@Body() body: NearestLocationsRequest, @Res() res: Response): void | Promise<void> {
    return sendNearest(res, this.locations.nearest(body));
  }

  @Post('locations/position')
  @HttpCode(200)
  @AdminScope('searching as a customer would')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'adminCustomerPosition',
    summary: 'Where a search measures from',
    description:
      "The point POST /locations/nearest measures from for this body (the device's lat/lng, the geocoded street address, or the ZIP code's point) and the ZIP code point beside it, with the reason when a street address was not used: the console's two dots. The address is geocoded as for the search (and from the same cache).",
  })
  @ApiOkResponse({ description: 'The position.', type: CustomerPositionView })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'Invalid request parameters, as for POST /locations/nearest.',
    example: { error: 400, message: 'unknown ZIP code 00000' },
  })
  async position(@Body() body: NearestLocationsRequest): Promise<CustomerPositionView> {
    const position = await this.locations.position(body.customer_address);
    return {
      source: position.source,
      ...position.point,
      zip: { zip: body.customer_address.zip.slice(0, 5), ...position.zipPoint },
      fallback: position.fallback ?? null,
    };
  }

  @Get('zips/:zip')
  @AdminScope('locating ZIP codes')
  @ApiOperation({
    operationId: 'adminGetZipPoint',
    summary: 'Locate a ZIP code',
    description:
      "The point POST /locations/nearest measures from for this ZIP code (ZIP+4 counts by its first five digits): the centre of the console's circle.",
  })
  @ApiParam({
    name: 'zip',
    description: 'A US ZIP code such as 12345 or 12345-6789.',
    schema: { type: 'string', pattern: ZIP_PATTERN.source, example: '10001' },
  })
  @ApiOkResponse({ description: 'The point.', type: ZipPointView })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'Not a ZIP code, or one no source knows.',
    example: { error: 400, message: 'unknown ZIP code 00000' },
  })
  zip(@Param('zip') zip: string): ZipPointView {
    if (!ZIP_PATTERN.test(zip)) throw new BadRequestException('zip must be a US ZIP code such as 12345 or 12345-6789');
    return { zip: zip.slice(0, 5), ...this.locations.locate(zip) };
  }
}
