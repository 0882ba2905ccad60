import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { responseHeaders } from '../common/api-headers.js';
import { ErrorBody } from '../common/error-body.js';
import { NearestLocationsRequest, NearestLocationsResponse } from './dto/nearest-locations.dto.js';
import { LocationsService, sendNearest } from './locations.service.js';

@ApiTags('locations')
@ApiBearerAuth()
@ApiCommonErrors()
@Controller('locations')
export class LocationsController {
  constructor(private readonly locations: LocationsService) {}

  @Post('nearest')
  @HttpCode(200)
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'findNearestLocations',
    summary: 'Find the nearest store locations',
    description:
      "Stores within `max_distance` miles of the customer (great-circle distance, boundary included), nearest first, at most `limit` of them. The customer's position is the device's `lat`/`lng` when the request has them; else, where the service runs a geocoder, the street address; else the ZIP code's point. The `Customer-Position` header says which was used.",
  })
  @ApiOkResponse({ type: NearestLocationsResponse, description: 'Code "Success" and the locations (an empty array when none is in range).', headers: responseHeaders('Customer-Position') })
  @ApiBadRequestResponse({
    type: ErrorBody,
    description: 'Invalid request parameters: a malformed or unknown ZIP code, a bad max_distance, limit or state, an unknown field, or a body that is not valid JSON.',
    example: { error: 400, message: 'unknown ZIP code 00000' },
  })
  nearest(@Body() body: NearestLocationsRequest, @Res() res: Response): void | Promise<void> {
    return sendNearest(res, this.locations.nearest(body));
  }
}
