import { Logger } from '@nestjs/common';
import { AbstractLogger, type LogLevel, type LogMessage } from 'typeorm';

/**
 * TypeORM's own messages (slow queries, migrations) through Nest's logger, so they come out as
 * JSON lines in the server and on stderr in the command line, never as stray console output.
 * Query parameters are left out: they may hold personal data.
 */
export class DatabaseLogger extends AbstractLogger {
  private readonly logger = new Logger('Database');

  protected writeLog(level: LogLevel, logMessage: LogMessage | string | number | (LogMessage | string | number)[]): void {
    for (const message of this.prepareLogMessages(logMessage, { appendParameterAsComment: false, addColonToPrefix: false })) {
      const text = message.prefix ? `${message.prefix}: ${String(message.message)}` : String(message.message);
      const fields = { event: message.type ?? 'typeorm', ...(message.additionalInfo ?? {}), msg: text };
      if (level === 'warn') this.logger.warn(fields);
      else if (level === 'error') this.logger.error(fields);
      else this.logger.log(fields);
    }
  }
}
