import { applyDecorators } from '@nestjs/common';
import {
  ApiForbiddenResponse,
  ApiInternalServerErrorResponse,
  ApiTooManyRequestsResponse,
  ApiPayloadTooLargeResponse,
  ApiServiceUnavailableResponse,
  ApiUnauthorizedResponse,
  ApiUnsupportedMediaTypeResponse,
} from '@nestjs/swagger';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { responseHeaders } from './api-headers.js';
import { carriesProblems, ErrorBody } from './error-body.js';
import { DEFAULT_BODY_LIMIT_BYTES } from './server.config.js';

/** Errors every authenticated operation can answer, documented once. */
export const ApiCommonErrors = () =>
  applyDecorators(
    ApiUnauthorizedResponse({
      description:
        'No valid bearer token. Missing header: `WWW-Authenticate: Bearer realm="plant-store"`; unknown, malformed, expired or revoked token: the same header with `error="invalid_token"`. Checked before anything else.',
      type: ErrorBody,
      headers: responseHeaders('WWW-Authenticate'),
      example: { error: 401, message: 'invalid or expired bearer token' },
    }),
    ApiForbiddenResponse({
      description:
        'The token lacks the scope this operation needs: `read` to list and search (an SSO token whose `scope` claim has neither `read` nor `write`), `write` to create and delete.',
      type: ErrorBody,
      example: { error: 403, message: 'this token has no read scope' },
    }),
    ApiTooManyRequestsResponse({
      description:
        'Too many failed authentications from this address in the current minute (then every request from it is refused, valid tokens included), or too many requests with this token. Retry after the number of seconds in `Retry-After`.',
      type: ErrorBody,
      headers: responseHeaders('Retry-After'),
      example: { error: 429, message: 'too many requests with this token, try again later' },
    }),
    ApiInternalServerErrorResponse({
      description: 'Unexpected failure; details are logged under the X-Request-Id, never returned.',
      type: ErrorBody,
      example: { error: 500, message: 'internal server error' },
    }),
    ApiServiceUnavailableResponse({
      description:
        'The database is unreachable or cannot serve right now (e.g. its cluster node is not in the primary component, or a write kept losing conflicts); try again shortly.',
      type: ErrorBody,
      example: { error: 503, message: 'the database is unavailable, try again shortly' },
    }),
  );

/** Errors of operations that take a JSON body. */
export const ApiBodyErrors = () =>
  applyDecorators(
    ApiPayloadTooLargeResponse({
      description: `The body is larger than the limit (BODY_LIMIT_BYTES, by default ${DEFAULT_BODY_LIMIT_BYTES} bytes).`,
      type: ErrorBody,
      example: { error: 413, message: `request body exceeds the limit of ${DEFAULT_BODY_LIMIT_BYTES} bytes` },
    }),
    ApiUnsupportedMediaTypeResponse({
      description: 'The body is not sent as application/json.',
      type: ErrorBody,
      example: { error: 415, message: 'request body must be sent as application/json' },
    }),
  );

/**
 * The admin routes answer their refusals for content (400, 422) with AdminErrorBody: the problems
 * as data beside the message (AllExceptionsFilter). Every such response of an /admin path is
 * documented so, wherever its decorator named the plain body; the interface's operations keep it.
 */
export function documentAdminProblems(document: OpenAPIObject): OpenAPIObject {
  const plain = '#/components/schemas/Error';
  const admin = '#/components/schemas/AdminError';
  for (const [path, item] of Object.entries(document.paths)) {
    if (!carriesProblems(path)) continue;
    for (const operation of Object.values(item) as Array<OperationObject | undefined>) {
      for (const status of ['400', '422']) {
        const response = operation?.responses?.[status];
        const content = response && !('$ref' in response) ? response.content?.['application/json'] : undefined;
        if (content?.schema && '$ref' in content.schema && content.schema.$ref === plain) content.schema = { $ref: admin };
      }
    }
  }
  return document;
}
