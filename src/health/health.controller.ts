import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, type SchemaObject } from '@nestjs/swagger';
import { ApiBodyErrors } from '../common/api-errors.js';
import { Public } from '../common/auth.decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { Readiness } from './readiness.js';

const STATUS_OK: SchemaObject = { type: 'object', properties: { status: { type: 'string', enum: ['ok'], example: 'ok' } }, required: ['status'] };

/**
 * A probe needs no body, but one sent with a body gets the body checks of every route
 * (BodyGuard): 400, 413, 415. Documented so that the document lists every answer.
 */
@ApiTags('health')
@ApiBodyErrors()
@ApiBadRequestResponse({
  description: 'The request carries a body that is not valid JSON (a probe needs no body).',
  type: ErrorBody,
  example: { error: 400, message: 'request body is not valid JSON' },
})
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: Readiness) {}

  @Get('live')
  // `security: []` says "no token" explicitly, rather than leaving the operation unsecured by omission.
  @ApiOperation({
    operationId: 'checkLiveness',
    summary: 'Liveness: the process is up. No token needed.',
    description: 'Answers 200 as long as the process serves HTTP; the database is not consulted.',
    security: [],
  })
  @ApiOkResponse({ description: 'The process is up.', schema: STATUS_OK })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'checkReadiness',
    summary: 'Readiness: the database can serve and the service is not shutting down. No token needed.',
    description:
      'Answers 503 while the database does not answer within a second (on a Galera cluster: while its node is not in the primary component and synced) or once shutdown has begun, so that a load balancer stops sending traffic here.',
    security: [],
  })
  @ApiOkResponse({ description: 'Ready for traffic.', schema: STATUS_OK })
  @ApiServiceUnavailableResponse({
    description: 'The database cannot serve or the service is shutting down.',
    type: ErrorBody,
    example: { error: 503, message: 'the database is not reachable' },
  })
  async ready() {
    const problem = await this.readiness.problem();
    if (problem) throw new ServiceUnavailableException(problem);
    return { status: 'ok' };
  }
}
