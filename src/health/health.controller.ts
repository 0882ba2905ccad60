import { Controller, Get, Injectable, ServiceUnavailableException, type BeforeApplicationShutdown } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { Public } from '../auth/caller.js';
import { ErrorBody } from '../common/error-body.js';

/** Flips when shutdown begins (SIGTERM), so the load balancer stops sending traffic first. */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  shuttingDown = false;

  begin(): void {
    this.shuttingDown = true;
  }

  beforeApplicationShutdown(): void {
    this.begin();
  }
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up. No token needed.' })
  @ApiOkResponse({ schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } } })
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: the database answers and the service is not shutting down. No token needed.' })
  @ApiOkResponse({ schema: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } } })
  @ApiServiceUnavailableResponse({ type: ErrorBody, example: { error: 503, message: 'the database is not reachable' } })
  async ready() {
    if (this.shutdown.shuttingDown) throw new ServiceUnavailableException('the service is shutting down');
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: 1000 })]);
    } catch {
      throw new ServiceUnavailableException('the database is not reachable');
    }
    return { status: 'ok' };
  }
}
