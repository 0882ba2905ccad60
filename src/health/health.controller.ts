import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags, type SchemaObject } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'mysql2';
import type { DataSource } from 'typeorm';
import { ApiBodyErrors } from '../common/api-errors.js';
import { Public } from '../common/auth.decorators.js';
import { ErrorBody } from '../common/error-body.js';
import { ShutdownState } from '../common/shutdown-state.js';
import { isGaleraPool } from '../database/database-options.js';

const CHECK_TIMEOUT_MS = 1000;
const GALERA_SYNCED = '4';

/** Resolves with the promise, or rejects once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const STATUS_OK: SchemaObject = { type: 'object', properties: { status: { type: 'string', enum: ['ok'], example: 'ok' } }, required: ['status'] };

/**
 * A probe needs no body, but one sent with a body gets the body checks of every route
 * (BodyGuard): 400, 413, 415. Documented so that the document lists every answer.
 */
@ApiTags('health')
@ApiBodyErrors()
@ApiBadRequestResponse({ description: 'The request carries a body that is not valid JSON (a probe needs no body).', type: ErrorBody, example: { error: 400, message: 'request body is not valid JSON' } })
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  @Get('live')
  // `security: []` says "no token" explicitly, rather than leaving the operation unsecured by omission.
  @ApiOperation({ operationId: 'checkLiveness', summary: 'Liveness: the process is up. No token needed.', description: 'Answers 200 as long as the process serves HTTP; the database is not consulted.', security: [] })
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
  @ApiServiceUnavailableResponse({ description: 'The database cannot serve or the service is shutting down.', type: ErrorBody, example: { error: 503, message: 'the database is not reachable' } })
  async ready() {
    if (this.shutdown.shuttingDown) throw new ServiceUnavailableException('the service is shutting down');
    const pool = (this.dataSource.driver as unknown as { pool?: Pool }).pool;
    if (pool && isGaleraPool(pool)) {
      await this.galeraNodeReady();
      return { status: 'ok' };
    }
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: CHECK_TIMEOUT_MS })]);
    } catch {
      throw new ServiceUnavailableException('the database is not reachable');
    }
    return { status: 'ok' };
  }

  /**
   * A Galera node outside the primary component, or joining and catching up, still answers
   * `SELECT 1` but refuses (1047) or delays real work: ready only when it is in the primary
   * component, ready (wsrep_ready) and synced (wsrep_local_state 4). A donor (2) serving a
   * state transfer counts as not ready: with rsync it blocks writes meanwhile.
   */
  private async galeraNodeReady(): Promise<void> {
    let status: Map<string, string>;
    try {
      const rows = await within(
        this.dataSource.query<{ Variable_name: string; Value: string }[]>(
          "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_status', 'wsrep_local_state')",
        ),
        CHECK_TIMEOUT_MS,
      );
      status = new Map(rows.map((row) => [row.Variable_name, row.Value]));
    } catch {
      throw new ServiceUnavailableException('the database is not reachable');
    }
    if (status.get('wsrep_ready') !== 'ON' || status.get('wsrep_cluster_status') !== 'Primary' || status.get('wsrep_local_state') !== GALERA_SYNCED) {
      throw new ServiceUnavailableException('the database node is not synced with its cluster');
    }
  }
}
