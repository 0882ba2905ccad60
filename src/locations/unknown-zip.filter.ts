import { BadRequestException, Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import { UnknownZipError } from './locations.service.js';

/**
 * LocationsService's refusal of a ZIP code no source knows, as the search routes answer it: a 400
 * with the service's words (contract §4), in the body every error gets (AllExceptionsFilter).
 */
@Catch(UnknownZipError)
export class UnknownZipFilter implements ExceptionFilter<UnknownZipError> {
  private readonly answer = new AllExceptionsFilter();

  catch(error: UnknownZipError, host: ArgumentsHost): void {
    this.answer.catch(new BadRequestException(error.message), host);
  }
}
