import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

/** Flips when shutdown begins (SIGTERM), so the load balancer stops sending traffic first. */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  shuttingDown = false;
  private started?: () => void;
  /** Resolves when shutdown begins. */
  readonly begun = new Promise<void>((resolve) => (this.started = resolve));
  /**
   * performance.now() at which SHUTDOWN_GRACE_MS after the listener closed runs out, set by the
   * signal handler (graceful-shutdown.ts): the requests in flight and then the change-event relay's
   * handover share it.
   */
  graceEndsAt?: number;

  begin(): void {
    this.shuttingDown = true;
    this.started?.();
  }

  beforeApplicationShutdown(): void {
    this.begin();
  }
}
