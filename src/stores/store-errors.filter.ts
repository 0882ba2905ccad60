import {
  BadRequestException,
  Catch,
  ConflictException,
  HttpException,
  Logger,
  NotFoundException,
  PreconditionFailedException,
  UnprocessableEntityException,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import type { Caller } from '../common/caller.js';
import { StoreFieldsError, StoreNotFoundError } from './store-admin.service.js';
import { StoreImportError } from './store-csv-reader.js';
import { UnknownServiceError } from './store-catalog.js';
import { StoreCatalogMovedError, StoreRemovalGuardError } from './store-import-plan.js';

type StoreError = StoreImportError | StoreCatalogMovedError | StoreRemovalGuardError | StoreNotFoundError | StoreFieldsError | UnknownServiceError;

/**
 * The store services' errors as the admin routes answer them. The services say what happened
 * (a bad file, a catalogue that moved since the dry run, the removal guard, no such store, bad
 * fields) and each entry point words it for its callers: this filter for HTTP, stores.command.ts
 * for the command line (exit codes). A refused import is also an audit line. The body is the
 * one every error gets (AllExceptionsFilter).
 */
@Catch(StoreImportError, StoreCatalogMovedError, StoreRemovalGuardError, StoreNotFoundError, StoreFieldsError, UnknownServiceError)
export class StoreErrorsFilter implements ExceptionFilter<StoreError> {
  private readonly audit = new Logger('Audit');
  private readonly answer = new AllExceptionsFilter();

  catch(error: StoreError, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.answer.catch(this.translate(error, http.getRequest<Request & { user?: Caller }>(), http.getResponse<Response>()), host);
  }

  private translate(error: StoreError, req: Request & { user?: Caller }, res: Response): HttpException {
    if (error instanceof StoreImportError) {
      const problems = error.problems.map(({ line, column, code, reason }) => ({ line, column: column ?? null, code, message: reason }));
      return new UnprocessableEntityException({ message: error.message, problems });
    }
    if (error instanceof StoreNotFoundError) return new NotFoundException(error.message);
    if (error instanceof StoreFieldsError) return new BadRequestException({ message: error.message, problems: error.problems });
    // An import's rows were checked against the services as it began; one was deleted before its write.
    if (error instanceof UnknownServiceError) return new ConflictException(`${error.message}: it was deleted during the import; nothing was written`);
    const caller = { team: req.user?.team, tokenId: req.user?.tokenId };
    if (error instanceof StoreCatalogMovedError) {
      this.audit.log({
        event: 'admin.stores.import_refused',
        ...caller,
        target: { reason: 'catalog_changed', expected: error.expected, version: error.current },
      });
      res.setHeader('ETag', `"${error.current}"`);
      return new PreconditionFailedException(`${error.message}. Check the file again (dry_run=true) and apply with its ETag`);
    }
    this.audit.log({
      event: 'admin.stores.import_refused',
      ...caller,
      target: { reason: 'removals', removals: error.removals, catalogSize: error.catalogSize, expected: error.expected },
    });
    return new ConflictException(`${error.message}. Check the list with dry_run=true, then send expected_removals=${error.removals} to confirm`);
  }
}
