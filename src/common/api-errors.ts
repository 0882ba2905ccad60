import { applyDecorators } from '@nestjs/common';
import {
  ApiInternalServerErrorResponse,
  ApiPayloadTooLargeResponse,
  ApiServiceUnavailableResponse,
  ApiUnauthorizedResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import { ErrorBody } from './error-body.js';
import { BODY_LIMIT_BYTES } from './json-body.js';

/** Errors every authenticated operation can answer, documented once. */
export const ApiCommonErrors = () =>
  applyDecorators(
    ApiUnauthorizedResponse({
      description:
        'No valid bearer token. Missing header: `WWW-Authenticate: Bearer realm="plant-store"`; unknown, malformed, expired or revoked token: the same header with `error="invalid_token"`. Checked before anything else.',
      type: ErrorBody,
      headers: { 'WWW-Authenticate': { description: 'Bearer challenge.', schema: { type: 'string', example: 'Bearer realm="plant-store", error="invalid_token"' } } },
      example: { error: 401, message: 'invalid or expired bearer token' },
    }),
    ApiInternalServerErrorResponse({ description: 'Unexpected failure; details are logged under the X-Request-Id, never returned.', type: ErrorBody, example: { error: 500, message: 'internal server error' } }),
    ApiServiceUnavailableResponse({ description: 'The database is unreachable; try again shortly.', type: ErrorBody, example: { error: 503, message: 'the database is unavailable, try again shortly' } }),
  );

/** Errors of operations that take a JSON body. */
export const ApiBodyErrors = () =>
  applyDecorators(
    ApiPayloadTooLargeResponse({ description: `The body is larger than the limit (BODY_LIMIT_BYTES, by default ${BODY_LIMIT_BYTES} bytes).`, type: ErrorBody, example: { error: 413, message: `request body exceeds the limit of ${BODY_LIMIT_BYTES} bytes` } }),
    ApiUnsupportedMediaTypeResponse({ description: 'The body is not sent as application/json.', type: ErrorBody, example: { error: 415, message: 'request body must be sent as application/json' } }),
  );

