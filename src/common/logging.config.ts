import { registerAs } from '@nestjs/config';
import { IsIn } from 'class-validator';
import { validateSettings } from '../config/environment.js';

/** Log lines: how many, and in which form. */
export class LoggingSettings {
  /**
   * Lowest level logged: `fatal`, `error`, `warn`, `log`, `debug`, `verbose`. The demo token is
   * logged at `warn`, so it shows unless the level is `error` or `fatal`.
   */
  @IsIn(['fatal', 'error', 'warn', 'log', 'debug', 'verbose'])
  LOG_LEVEL: 'fatal' | 'error' | 'warn' | 'log' | 'debug' | 'verbose' = 'log';

  /**
   * How log lines are written: `json` (one JSON object per line, for a log collector), `pretty`
   * (one human-readable line each, coloured on a terminal; the demo token's curl line pastes as
   * printed) or `auto`: `pretty` when standard output is a terminal, `json` otherwise.
   */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: 'auto' | 'json' | 'pretty' = 'auto';
}

export const loggingConfig = registerAs('logging', () => validateSettings(LoggingSettings));
