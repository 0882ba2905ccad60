import type { ArgumentsHost } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { jest } from '@jest/globals';
import { StoreFieldsError, StoreNotFoundError } from './store-admin.service.js';
import { StoreErrorsFilter } from './store-errors.filter.js';
import { StoreImportError } from './store-csv-reader.js';
import { StoreCatalogMovedError, StoreRemovalGuardError } from './store-import-plan.js';

/** What the filter answered: status, body, headers, and the audit lines it wrote. */
function answer(error: Parameters<StoreErrorsFilter['catch']>[0]) {
  const headers: Record<string, string> = {};
  const sent: { status?: number; body?: unknown } = {};
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => (headers[name] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    json: (body: unknown) => (sent.body = body),
  };
  const req = { user: { team: 'ops', tokenId: 7 }, id: 'r1', method: 'POST', originalUrl: '/admin/stores.csv', path: '/admin/stores.csv', route: {} };
  const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
  const audit = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  try {
    new StoreErrorsFilter().catch(error, host);
    return { ...sent, headers, audit: audit.mock.calls.map(([line]) => line) };
  } finally {
    audit.mockRestore();
  }
}

describe(StoreErrorsFilter.name, () => {
  it("answers a bad file 422, no such store 404 and bad fields 400, with the services' words, the problems as data and no audit line", () => {
    const file = new StoreImportError([{ line: 3, column: 'state', code: 'bad_state', reason: '"XX" is not a US state or territory code' }]);
    expect(answer(file)).toEqual({
      status: 422,
      body: {
        error: 422,
        message: file.message,
        problems: [{ line: 3, column: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' }],
      },
      headers: {},
      audit: [],
    });
    expect(answer(new StoreNotFoundError('NY-1'))).toMatchObject({ status: 404, body: { error: 404, message: 'store "NY-1" not found' }, audit: [] });
    const fields = new StoreFieldsError([
      { field: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' },
      { field: 'code', code: 'white_space', message: 'has white space around it' },
    ]);
    expect(answer(fields)).toMatchObject({
      status: 400,
      body: {
        error: 400,
        message: 'state: "XX" is not a US state or territory code; code: has white space around it',
        problems: [
          { field: 'state', code: 'bad_state', message: '"XX" is not a US state or territory code' },
          { field: 'code', code: 'white_space', message: 'has white space around it' },
        ],
      },
      audit: [],
    });
  });

  it('answers a moved catalogue 412 with the current version as ETag, and audits the refusal', () => {
    expect(answer(new StoreCatalogMovedError([41], 43))).toEqual({
      status: 412,
      body: {
        error: 412,
        message:
          'the store catalogue changed since the dry run (version 41, now 43); nothing was written. Check the file again (dry_run=true) and apply with its ETag',
      },
      headers: { ETag: '"43"' },
      audit: [{ event: 'admin.stores.import_refused', team: 'ops', tokenId: 7, target: { reason: 'catalog_changed', expected: [41], version: 43 } }],
    });
  });

  it('answers the removal guard 409 naming the number to confirm, and audits the refusal', () => {
    expect(answer(new StoreRemovalGuardError(212, 391, 10, undefined))).toEqual({
      status: 409,
      body: {
        error: 409,
        message:
          'this import would remove 212 of 391 stores (54.2 %), more than the 10 % (STORE_IMPORT_MAX_PRUNE_PERCENT) allowed without confirmation; nothing was written. Check the list with dry_run=true, then send expected_removals=212 to confirm',
      },
      headers: {},
      audit: [
        { event: 'admin.stores.import_refused', team: 'ops', tokenId: 7, target: { reason: 'removals', removals: 212, catalogSize: 391, expected: undefined } },
      ],
    });
  });
});
