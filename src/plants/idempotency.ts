import { createHash } from 'node:crypto';
import { applyDecorators, BadRequestException, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { ErrorBody } from '../common/error-body.js';
import type { NewPlant } from './plants.service.js';

/** The contract's bound (§3): 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/**
 * The `Idempotency-Key` request header of POST /plants, validated: undefined when absent,
 * else the key exactly as sent (Node has already trimmed surrounding white space, so a
 * key never starts or ends with a space). A bad key is a 400.
 */
export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KEY_PATTERN.test(value)) {
    throw new BadRequestException('Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  return value;
}

export const IdempotencyKeyHeader = createParamDecorator((_: unknown, ctx: ExecutionContext) =>
  parseIdempotencyKey(ctx.switchToHttp().getRequest<Request>().headers['idempotency-key']),
);

/**
 * What makes two requests "the same" for a key: the validated body, so that key order,
 * white space between tokens, and null for an absent optional field (which the contract
 * treats as not given) do not matter, while any difference of value does. SHA-256 in hex.
 */
export function requestFingerprint({ name, tag, id }: NewPlant): string {
  return createHash('sha256')
    .update(JSON.stringify([name, tag ?? null, id ?? null]))
    .digest('hex');
}

/** The response of a request with a key, as stored and replayed. */
export interface StoredResponse {
  status: number;
  location: string | null;
  body: unknown;
}

/** The header and the 422 in the OpenAPI document; the 400 and the 409 are the operation's own. */
export const ApiIdempotencyKey = () =>
  applyDecorators(
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        "Makes a retry safe: the first request with a key runs, and its response (201 with Location and body, or the 409 of an id already taken) is kept for 24 hours; a repeat with the same body gets that response again and changes nothing, even when sent concurrently or to another instance. Scoped to the caller's team. The same key with another body is refused with 422. Without the header a request runs every time. 1 to 255 printable ASCII characters, compared exactly; a UUID such as `8e03978e-40d5-43e8-bc93-6894a57f9324` is a good key.",
      // No example: Swagger UI would fill it in, and every "Try it out" would then replay (or 422) the first.
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
    }),
    ApiUnprocessableEntityResponse({
      description: 'The `Idempotency-Key` was already used (within 24 hours) with a different request body; nothing changed.',
      type: ErrorBody,
      example: { error: 422, message: 'this Idempotency-Key was already used with a different request body' },
    }),
  );
