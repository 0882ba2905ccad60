import type { LoggerService } from '@nestjs/common';
import type { Request, Response } from 'express';
import { pino, type DestinationStream, type Level, type Logger, type LoggerOptions } from 'pino';
import type { LoggingSettings } from './logging.config.js';
import type { Caller } from './caller.js';
import { requestFields, type RequestFields } from './request-fields.js';

/** Nest's level names (LOG_LEVEL) in pino's terms. */
const PINO_LEVEL: Record<LoggingSettings['LOG_LEVEL'], Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

const REDACTED = '[REDACTED]';
/** Contexts of Nest's start-up lines (modules initialised, routes mapped, "started"): logged at debug. */
const FRAMEWORK_WIRING = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);
/** Log lines are written once this many bytes have gathered… */
export const LOG_BATCH_BYTES = 8192;
/** …or this long after the previous write, so a quiet service's lines still arrive promptly. */
export const LOG_FLUSH_MS = 1000;

/**
 * Tokens never reach the logs: a `pst_…` token anywhere in a URL and the values of
 * token-like query parameters are replaced (a token sent the wrong way must not leak either).
 */
export function redactUrl(url: string): string {
  return url.replace(/pst_[A-Za-z0-9]+/g, `pst_${REDACTED}`).replace(/([?&](?:access_token|token|api_key|apikey)=)[^&#]*/gi, `$1${REDACTED}`);
}

export interface Loggers {
  /** Everything the code logs (Nest's Logger, audit, errors): fields named like secrets are redacted. */
  app: Logger;
  /**
   * The per-request line only (see logRequest), same level and stream, without pino's
   * redaction: that line is built from known fields with the URL already redacted, so the
   * wildcard redaction paths would only add their cost.
   */
  requests: Logger;
}

/** Whether LOG_FORMAT (`auto`: by whether stdout is a terminal) asks for human-readable lines. */
export function prettyLogs(format: LoggingSettings['LOG_FORMAT'], stdoutIsTty = Boolean(process.stdout.isTTY)): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTty);
}

/**
 * The service's loggers: one JSON object per line on stdout, for the log collector; one
 * human-readable line each instead (pino-pretty: time, level, context, message) when LOG_FORMAT
 * says so, which by default (`auto`) is when stdout is a terminal, as on a first `npm start`.
 *
 * JSON lines go out asynchronously and in batches (LOG_BATCH_BYTES or LOG_FLUSH_MS, whichever
 * comes first), because each write wakes a libuv worker thread and the wake-ups cost more
 * than the writes (docs/performance.md). pino flushes what is pending when the process
 * exits, so only a SIGKILL can lose lines: at most the last second's.
 */
export function createLoggers(env: LoggingSettings, destination?: DestinationStream): Loggers {
  const pretty = !destination && prettyLogs(env.LOG_FORMAT);
  const options: LoggerOptions = {
    level: PINO_LEVEL[env.LOG_LEVEL],
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  const stream = destination ?? (pretty ? prettyStream() : pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_MS }));
  return {
    app: pino(
      {
        ...options,
        // The fields of the request being handled (reqId, and traceId/spanId with tracing
        // on), so that audit lines, warnings and the logged 500 join the request's line.
        // A copy: pino merges the line's own fields into the object the mixin returns.
        mixin: () => ({ ...requestFields.getStore() }),
        // Should an object with headers or a token ever be logged, these never show.
        redact: {
          paths: ['authorization', 'token', 'password', '*.authorization', '*.token', '*.password', '*.headers.authorization', '*.headers.cookie'],
          censor: REDACTED,
        },
      },
      stream,
    ),
    requests: pino(options, stream),
  };
}

/**
 * pino-pretty in pino's worker thread: `12:00:00.123 INFO  Main: listening on …`, one line per
 * entry (a request's fields follow its message on the same line, as JSON), colours only on a terminal.
 */
function prettyStream(): DestinationStream {
  return pino.transport({
    target: 'pino-pretty',
    options: {
      colorize: Boolean(process.stdout.isTTY),
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,context',
      messageFormat: '{if context}{context}: {end}{msg}',
      singleLine: true,
      destination: 1,
    },
  });
}

/**
 * Nest's Logger on top of pino, so every `new Logger(context)` in the code writes JSON.
 * An object message (`logger.log({ event, team })`) becomes fields of the line; Nest passes
 * the logger's context as the last argument and, for error(), a stack before it.
 */
export class PinoLoggerService implements LoggerService {
  constructor(private readonly pino: Logger) {}

  fatal(message: unknown, ...params: unknown[]) {
    this.write('fatal', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.write('warn', message, params);
  }
  log(message: unknown, ...params: unknown[]) {
    this.write('info', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.write('trace', message, params);
  }

  private write(requested: Level, message: unknown, params: unknown[]): void {
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    // Nest's wiring report (a line per module and route) is for debugging, not for every start.
    const level = requested === 'info' && context !== undefined && FRAMEWORK_WIRING.has(context) ? 'debug' : requested;
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = context ? { context } : {};
    const stack = rest.find((p) => typeof p === 'string');
    if (level === 'error' && typeof stack === 'string') fields.stack = stack;
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...message });
    } else {
      this.pino[level](fields, String(message));
    }
  }
}

/**
 * The line of one request once its response is done (requestContext calls it): the request
 * id (the X-Request-Id the client saw) and, with tracing on, the trace and span ids, method,
 * URL (tokens redacted), route, status, duration, team, client address. No headers, so never
 * an Authorization header. 5xx lines are at `error` (the exception filter logs the cause); a
 * response cut short because the client went away is a `warn` line "request aborted".
 *
 * Called from requestContext's 'close' listener, which also counts the request in the
 * duration histogram: one listener per request for both (pino-http would add a child logger
 * and three listeners of its own).
 */
export function logRequest(logger: Logger, req: Request, res: Response, fields: RequestFields, route: string | null, seconds: number): void {
  const status = res.statusCode;
  const [level, message] = !res.writableFinished
    ? (['warn', 'request aborted'] as const)
    : status >= 500
      ? (['error', 'request failed'] as const)
      : (['info', 'request completed'] as const);
  // At LOG_LEVEL=warn most lines are dropped: asked first, so that a dropped line costs no object,
  // no URL redaction and no client-address look-up (Express works req.ip out from the proxy settings).
  if (!logger.isLevelEnabled(level)) return;
  const line = {
    ...fields,
    method: req.method,
    url: redactUrl(req.originalUrl),
    route,
    status,
    durationMs: Math.round(seconds * 10_000) / 10,
    team: (req.user as Caller | undefined)?.team ?? null,
    remoteAddress: req.ip,
  };
  logger[level](line, message);
}
