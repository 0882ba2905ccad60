import { Injectable } from '@nestjs/common';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'mysql2';
import type { DataSource } from 'typeorm';
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

/**
 * Whether this instance can serve: the database answers within a second (on a Galera cluster,
 * its node is in the primary component and synced) and shutdown has not begun. One check for
 * the load balancer's probe (/health/ready) and the operator's status (/admin/status).
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly shutdown: ShutdownState,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Why this instance is not ready, or undefined when it is. */
  async problem(): Promise<string | undefined> {
    if (this.shutdown.shuttingDown) return 'the service is shutting down';
    const pool = (this.dataSource.driver as unknown as { pool?: Pool }).pool;
    if (pool && isGaleraPool(pool)) return this.galeraNodeProblem();
    try {
      await this.health.check([() => this.db.pingCheck('database', { timeout: CHECK_TIMEOUT_MS })]);
    } catch {
      return 'the database is not reachable';
    }
    return undefined;
  }

  /**
   * A Galera node outside the primary component, or joining and catching up, still answers
   * `SELECT 1` but refuses (1047) or delays real work: ready only when it is in the primary
   * component, ready (wsrep_ready) and synced (wsrep_local_state 4). A donor (2) serving a
   * state transfer counts as not ready: with rsync it blocks writes meanwhile.
   */
  private async galeraNodeProblem(): Promise<string | undefined> {
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
      return 'the database is not reachable';
    }
    if (status.get('wsrep_ready') !== 'ON' || status.get('wsrep_cluster_status') !== 'Primary' || status.get('wsrep_local_state') !== GALERA_SYNCED) {
      return 'the database node is not synced with its cluster';
    }
    return undefined;
  }
}
