import { BadRequestException, Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import { UnknownZipError } from './locations.service.js';
import { UnknownSearchServiceError } from './nearest-response.js';

/**
 * LocationsService's refusal of a ZIP code no source knows, and the index's of a service the chain
 * does not have, as the search routes answer them: a 400 with the service's words (contract §4), in
 * the body every error gets (AllExceptionsFilter).
 */
@Catch(UnknownZipError, UnknownSearchServiceError)
export class UnknownZipFilter implements ExceptionFilter<UnknownZipError | UnknownSearchServiceError> {
  private readonly answer = new AllExceptionsFilter();

  catch(error: UnknownZipError | UnknownSearchServiceError, host: ArgumentsHost): void {
    this.answer.catch(new BadRequestException(error.message), host);
  }
}
