import { ConsoleLogger } from '@nestjs/common';

/** One line of the `Audit` logger: the action, who did it, and its target. */
export interface AuditEntry {
  event: string;
  team?: string;
  tokenId?: number | string;
  target: Record<string, unknown>;
}

/** A test app's logger that keeps the `Audit` lines instead of printing them. */
export class AuditCapture extends ConsoleLogger {
  readonly entries: AuditEntry[] = [];

  log(message: unknown, context?: string) {
    if (context === 'Audit') this.entries.push(message as AuditEntry);
  }
}
