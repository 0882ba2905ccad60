import {
  BadRequestException,
  Body,
  Catch,
  ConflictException,
  Controller,
  Delete,
  Get,
  HttpCode,
  Logger,
  NotFoundException,
  Param,
  Put,
  Res,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
  type PipeTransform,
} from '@nestjs/common';
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
import type { Response } from 'express';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { adminHeaders } from '../common/api-headers.js';
import { AdminScope, CurrentCaller } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { AdminErrorBody, ErrorBody } from '../common/error-body.js';
import { SERVICE_SLUG, SERVICE_SLUG_RULE } from '../shared/services.js';
import { ServiceRequest, serviceView, ServiceView } from './dto/admin-service.dto.js';
import { ServiceInUseError } from './store-catalog.js';
import { ServiceNotFoundError, ServicesService } from './services.service.js';

/** The path's slug, checked: a 400 naming it, before any handler runs. */
class SlugPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!SERVICE_SLUG.test(value)) throw new BadRequestException(`slug ${JSON.stringify(value)} ${SERVICE_SLUG_RULE}`);
    return value;
  }
}

/** ServiceNotFoundError is a 404, ServiceInUseError a 409, in the contract's error shape. */
@Catch(ServiceNotFoundError, ServiceInUseError)
class ServiceErrorsFilter implements ExceptionFilter<ServiceNotFoundError | ServiceInUseError> {
  private readonly answer = new AllExceptionsFilter();

  catch(error: ServiceNotFoundError | ServiceInUseError, host: ArgumentsHost): void {
    this.answer.catch(error instanceof ServiceInUseError ? new ConflictException(error.message) : new NotFoundException(error.message), host);
  }
}

const SLUG_PARAM = {
  name: 'slug',
  description: "The service's slug: a lowercase letter, then at most 39 lowercase letters, digits or underscores (`^[a-z][a-z0-9_]{0,39}$`).",
  schema: { type: 'string' as const, pattern: SERVICE_SLUG.source, example: 'curbside_pickup' },
};
const NOT_FOUND = { description: 'No service has this slug.', type: ErrorBody, example: { error: 404, message: 'service greenhouse not found' } };
const BAD_SLUG = {
  description: 'The slug is not a slug, or the body is invalid; `problems` names each field.',
  type: AdminErrorBody,
  example: { error: 400, message: `slug "Curbside" ${SERVICE_SLUG_RULE}` },
};

/**
 * The chain's services (greenhouse, repotting, workshops, delivery, curbside pickup): the
 * vocabulary of a store's `services` and of the search's `services` filter. The search follows a
 * change on every instance within STORE_INDEX_REFRESH_MS; each change is an audit line.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(ServiceErrorsFilter)
@Controller('admin/services')
export class AdminServicesController {
  private readonly audit = new Logger('Audit');

  constructor(private readonly services: ServicesService) {}

  @Get()
  @AdminScope('reading services')
  @ApiOperation({ operationId: 'adminListServices', summary: 'List the services', description: "The chain's services, by slug." })
  @ApiOkResponse({ description: 'The services, by slug.', type: ServiceView, isArray: true })
  async list(): Promise<ServiceView[]> {
    return (await this.services.list()).map(serviceView);
  }

  @Get(':slug')
  @AdminScope('reading services')
  @ApiOperation({ operationId: 'adminGetService', summary: 'Show a service', description: 'The service of one slug.' })
  @ApiParam(SLUG_PARAM)
  @ApiOkResponse({ description: 'The service.', type: ServiceView })
  @ApiBadRequestResponse(BAD_SLUG)
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@Param('slug', SlugPipe) slug: string): Promise<ServiceView> {
    return serviceView(await this.services.get(slug));
  }

  @Put(':slug')
  @AdminScope('changing services')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'adminSetService',
    summary: 'Set a service',
    description: 'Creates or replaces the service of this slug. Sending it as it is writes nothing (no new catalogue version).',
  })
  @ApiParam(SLUG_PARAM)
  @ApiOkResponse({ description: 'Replaced (or unchanged).', type: ServiceView })
  @ApiCreatedResponse({ description: 'Created; `Location` is the service.', type: ServiceView, headers: adminHeaders('Location') })
  @ApiBadRequestResponse(BAD_SLUG)
  async put(
    @CurrentCaller() caller: Caller,
    @Param('slug', SlugPipe) slug: string,
    @Body() body: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ServiceView> {
    const { service, created } = await this.services.set(slug, body);
    this.audit.log({ event: 'admin.service.set', team: caller.team, tokenId: caller.tokenId, target: { slug, created } });
    if (created) {
      res.status(201);
      res.setHeader('Location', `/admin/services/${slug}`);
    }
    return serviceView(service);
  }

  @Delete(':slug')
  @HttpCode(204)
  @AdminScope('changing services')
  @ApiOperation({
    operationId: 'adminDeleteService',
    summary: 'Delete a service',
    description: 'Deletes the service of this slug. Refused (409, nothing changed) while stores still have it: the message says how many.',
  })
  @ApiParam(SLUG_PARAM)
  @ApiNoContentResponse({ description: 'Deleted. No body.' })
  @ApiBadRequestResponse(BAD_SLUG)
  @ApiNotFoundResponse(NOT_FOUND)
  @ApiConflictResponse({
    description: 'Stores still have the service; nothing was deleted.',
    type: ErrorBody,
    example: { error: 409, message: 'service greenhouse is offered by 12 stores; take it off those stores first' },
  })
  async remove(@CurrentCaller() caller: Caller, @Param('slug', SlugPipe) slug: string): Promise<void> {
    await this.services.remove(slug);
    this.audit.log({ event: 'admin.service.deleted', team: caller.team, tokenId: caller.tokenId, target: { slug } });
  }
}
