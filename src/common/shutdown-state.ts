import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';

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
