import { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { createLoggers, logRequest, PinoLoggerService, prettyLogs, redactUrl } from './logger.js';
import { requestFields } from './request-fields.js';

/** A logger whose JSON lines are collected instead of written to stdout. */
function capture(level: 'log' | 'warn' = 'log') {
  const lines: Record<string, unknown>[] = [];
  const pino = createLoggers({ LOG_LEVEL: level, LOG_FORMAT: 'json' }, { write: (line: string) => void lines.push(JSON.parse(line)) }).app;
  return { lines, service: new PinoLoggerService(pino) };
}

describe('PinoLoggerService', () => {
  afterEach(() => Logger.overrideLogger(false));

  it("turns an object given to Nest's Logger into fields of the line, with the context", () => {
    const { lines, service } = capture();
    Logger.overrideLogger(service);
    new Logger('Audit').log({ event: 'plant.created', team: 'acme', tokenId: 3, plantId: 7 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'info', context: 'Audit', event: 'plant.created', team: 'acme', tokenId: 3, plantId: 7 });
  });

  it('keeps a text message as msg and an error stack as a field', () => {
    const { lines, service } = capture();
    service.warn('disk almost full', 'Storage');
    service.error('request failed', 'Error: boom\n    at x', 'Exceptions');
    expect(lines[0]).toMatchObject({ level: 'warn', context: 'Storage', msg: 'disk almost full' });
    expect(lines[1]).toMatchObject({ level: 'error', context: 'Exceptions', msg: 'request failed', stack: 'Error: boom\n    at x' });
  });

  it('adds the fields of the request being handled to every line, and none outside a request', async () => {
    const { lines, service } = capture();
    service.log('before', 'X');
    await requestFields.run({ reqId: 'req-1', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) }, async () => {
      await new Promise((r) => setImmediate(r));
      service.warn({ event: 'plant.deleted', team: 'acme' }, 'Audit');
      service.error('request failed', 'Error: boom', 'Exceptions');
    });
    expect(lines[0]).not.toHaveProperty('reqId');
    expect(lines[1]).toMatchObject({ reqId: 'req-1', traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), event: 'plant.deleted' });
    expect(lines[2]).toMatchObject({ reqId: 'req-1', traceId: 'a'.repeat(32), msg: 'request failed' });
    // One line's fields never leak into the next line of the same request.
    expect(lines[2]).not.toHaveProperty('event');
  });

  it('honours LOG_LEVEL', () => {
    const { lines, service } = capture('warn');
    service.log('not shown', 'X');
    service.debug('not shown', 'X');
    service.warn('shown', 'X');
    expect(lines.map((l) => l.msg)).toEqual(['shown']);
  });

  it('redacts tokens and authorization headers in logged objects', () => {
    const { lines, service } = capture();
    service.log({ event: 'x', token: 'pst_secret', headers: { authorization: 'Bearer pst_secret' } }, 'Test');
    expect(JSON.stringify(lines[0])).not.toContain('pst_secret');
    expect(lines[0]).toMatchObject({ token: '[REDACTED]', headers: { authorization: '[REDACTED]' } });
  });
});

describe('logRequest', () => {
  /** The request log of LOG_LEVEL `level`, and a request whose client address counts its look-ups. */
  function setUp(level: 'log' | 'warn') {
    const lines: Record<string, unknown>[] = [];
    const log = createLoggers({ LOG_LEVEL: level, LOG_FORMAT: 'json' }, { write: (line: string) => void lines.push(JSON.parse(line)) }).requests;
    const looked = { ip: 0 };
    const req = { method: 'POST', originalUrl: '/locations/nearest' } as Request;
    Object.defineProperty(req, 'ip', { get: () => (looked.ip++, '10.0.0.1') });
    const line = (status: number, finished = true) =>
      logRequest(log, req, { statusCode: status, writableFinished: finished } as Response, { reqId: 'r1' }, '/locations/nearest', 0.0123);
    return { lines, looked, line };
  }

  it('writes one line per request at the level its outcome asks', () => {
    const { lines, line } = setUp('log');
    line(200);
    line(503);
    line(200, false);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'request completed',
        reqId: 'r1',
        status: 200,
        route: '/locations/nearest',
        remoteAddress: '10.0.0.1',
        durationMs: 12.3,
      }),
      expect.objectContaining({ level: 'error', msg: 'request failed', status: 503 }),
      expect.objectContaining({ level: 'warn', msg: 'request aborted' }),
    ]);
  });

  it('builds nothing for a line its level drops', () => {
    const { lines, looked, line } = setUp('warn');
    line(200);
    line(404);
    expect(lines).toHaveLength(0);
    expect(looked.ip).toBe(0);
    line(500);
    expect(lines).toEqual([expect.objectContaining({ level: 'error', status: 500 })]);
    expect(looked.ip).toBe(1);
  });
});

describe('LOG_FORMAT', () => {
  it.each([
    ['auto', true, true],
    ['auto', false, false],
    ['pretty', false, true],
    ['pretty', true, true],
    ['json', true, false],
    ['json', false, false],
  ] as const)('%s with a terminal: %s -> human-readable: %s', (format, tty, pretty) => {
    expect(prettyLogs(format, tty)).toBe(pretty);
  });
});

describe('redactUrl', () => {
  it.each([
    ['/plants?access_token=abc&limit=5', '/plants?access_token=[REDACTED]&limit=5'],
    ['/plants?limit=5&token=abc', '/plants?limit=5&token=[REDACTED]'],
    ['/plants/pst_AbC123', '/plants/pst_[REDACTED]'],
    ['/plants?tag=pst_AbC123', '/plants?tag=pst_[REDACTED]'],
    ['/plants?limit=5', '/plants?limit=5'],
  ])('%s -> %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
