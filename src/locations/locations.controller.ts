import { Body, Controller, HttpCode, Post, Res, UseFilters } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { responseHeaders } from '../common/api-headers.js';
import { ErrorBody } from '../common/error-body.js';
import { NEAREST_REQUEST_EXAMPLES, NearestLocationsRequest, NearestLocationsResponse } from './dto/nearest-locations.dto.js';
import { LocationsService, sendNearest } from './locations.service.js';
import { UnknownZipFilter } from './unknown-zip.filter.js';

@ApiTags('locations')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(UnknownZipFilter)
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
}
