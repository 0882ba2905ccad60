import { Body, Controller, Delete, Get, HttpCode, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { responseHeaders } from '../common/api-headers.js';
import { CurrentCaller, WriteScope } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { ErrorBody } from '../common/error-body.js';
import { nextPageLink } from '../common/next-page-link.js';
import { ListPlantsQuery, PlantDto, PlantResponse } from './dto/plant.dto.js';
import { ApiIdempotencyKey, IdempotencyKeyHeader } from './idempotency.js';
import { IdempotentCreatesService, sendStored } from './idempotent-creates.service.js';
import { MAX_PLANT_ID, ParsePlantIdPipe } from './plant-id.js';
import type { Plant } from './plant.entity.js';
import { PlantsService } from './plants.service.js';

/** The body of a plant in responses: name and tag, tag left out when there is none. */
function toBody({ name, tag }: Pick<Plant, 'name' | 'tag'>): { name: string; tag?: string } {
  return tag === null ? { name } : { name, tag };
}

@ApiTags('plants')
@ApiBearerAuth()
@ApiCommonErrors()
@Controller('plants')
export class PlantsController {
  /** One structured line per change: who (team, token id, never the token) did what to which plant. */
  private readonly audit = new Logger('Audit');

  constructor(
    private readonly plants: PlantsService,
    private readonly idempotent: IdempotentCreatesService,
  ) {}

  @Post()
  @WriteScope('creating or deleting plants')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'createPlant',
    summary: 'Create a plant',
    description: "Creates a plant in the caller's team. The new plant's id is in the Location header.",
  })
  @ApiCreatedResponse({ description: 'Created. Body: name and tag; the id is in `Location`.', type: PlantResponse, headers: responseHeaders('Location') })
  @ApiBadRequestResponse({
    description:
      'The body is invalid: a field is missing, of the wrong type, out of bounds, or unknown; or the `Idempotency-Key` header is not 1 to 255 printable ASCII characters.',
    type: ErrorBody,
    example: { error: 400, message: 'name must be 1 to 255 characters' },
  })
  @ApiConflictResponse({
    description:
      "The id is already used in the caller's team; nothing changed. Or: a request with the same `Idempotency-Key` is still being processed; retry it.",
    type: ErrorBody,
    example: { error: 409, message: 'plant 7 already exists' },
  })
  @ApiIdempotencyKey()
  async create(
    @CurrentCaller() caller: Caller,
    @Body() body: PlantDto,
    @IdempotencyKeyHeader() key: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ) {
    if (key !== undefined) {
      const outcome = await this.idempotent.create(caller.team, key, body, caller.tokenId);
      if (outcome.plantId !== undefined) this.audit.log({ event: 'plant.created', team: caller.team, tokenId: caller.tokenId, plantId: outcome.plantId });
      return sendStored(outcome, res);
    }
    const plant = await this.plants.create(caller.team, body, caller.tokenId);
    this.audit.log({ event: 'plant.created', team: caller.team, tokenId: caller.tokenId, plantId: plant.id });
    res.setHeader('Location', `/plants/${plant.id}`);
    return toBody(plant);
  }

  @Get()
  @ApiOperation({ operationId: 'listPlants', summary: 'List plants', description: "The caller's team's plants, by id ascending, at most `limit` of them." })
  @ApiOkResponse({ description: 'The plants, each with name and tag.', type: PlantResponse, isArray: true, headers: responseHeaders('Link') })
  @ApiBadRequestResponse({
    description: 'A query parameter is invalid or unknown.',
    type: ErrorBody,
    example: { error: 400, message: 'limit must be an integer from 1 to 1000' },
  })
  async list(@CurrentCaller() caller: Caller, @Query() query: ListPlantsQuery, @Req() req: Request, @Res({ passthrough: true }) res: Response) {
    const { plants, nextAfter } = await this.plants.list(caller.team, query);
    if (nextAfter !== undefined) {
      res.setHeader('Link', nextPageLink(req, '/plants', { limit: query.limit, after: nextAfter, tag: query.tag }));
    }
    return plants.map(toBody);
  }

  @Delete(':id')
  @HttpCode(204)
  @WriteScope('creating or deleting plants')
  @ApiOperation({ operationId: 'deletePlant', summary: 'Delete a plant', description: "Deletes a plant of the caller's team." })
  // The example is the create body's example id, so that Swagger UI deletes the plant it just made;
  // inside `schema`, since Nest drops a parameter's own `example` when `schema` is given.
  @ApiParam({
    name: 'id',
    description: `The plant's id: a positive integer up to ${MAX_PLANT_ID}, in plain decimal.`,
    schema: { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_PLANT_ID, example: 7 },
  })
  @ApiNoContentResponse({ description: 'Deleted. No body.' })
  @ApiBadRequestResponse({
    description: 'The id is not a positive integer in plain decimal.',
    type: ErrorBody,
    example: { error: 400, message: `plant id must be a positive integer no larger than ${MAX_PLANT_ID}` },
  })
  @ApiNotFoundResponse({
    description: "No plant with this id in the caller's team (whether or not another team has one).",
    type: ErrorBody,
    example: { error: 404, message: 'plant 7 not found' },
  })
  async remove(@CurrentCaller() caller: Caller, @Param('id', ParsePlantIdPipe) id: number): Promise<void> {
    await this.plants.remove(caller.team, id, caller.tokenId);
    this.audit.log({ event: 'plant.deleted', team: caller.team, tokenId: caller.tokenId, plantId: id });
  }
}
