import type { ArgumentsHost } from '@nestjs/common';
import { UnknownZipError } from './locations.service.js';
import { UnknownZipFilter } from './unknown-zip.filter.js';

describe(UnknownZipFilter.name, () => {
  it("answers a ZIP code no source knows 400 with the service's words (contract §4)", () => {
    const sent: { status?: number; body?: unknown } = {};
    const res = {
      headersSent: false,
      setHeader: () => undefined,
      status(code: number) {
        sent.status = code;
        return this;
      },
      json: (body: unknown) => (sent.body = body),
    };
    const req = { id: 'r1', method: 'POST', originalUrl: '/locations/nearest', path: '/locations/nearest', route: {} };
    const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
    new UnknownZipFilter().catch(new UnknownZipError('00000'), host);
    expect(sent).toEqual({ status: 400, body: { error: 400, message: 'unknown ZIP code 00000' } });
  });
});
