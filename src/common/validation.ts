import { BadRequestException, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';

/** Which problem to name first: an unknown field, then a wrong type, then the rest. */
const PRIORITY = ['nestedValidation', 'isString', 'isObject', 'whitelistValidation'];

/** "customer_address.zip must be a string" — the first problem, named by its full path. */
function describe(errors: ValidationError[], parent = ''): string | undefined {
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    if (constraints.length > 0) {
      const [name, message] = constraints.sort(([a], [b]) => PRIORITY.indexOf(b) - PRIORITY.indexOf(a))[0];
      if (name === 'whitelistValidation') return `unknown field ${path}`;
      // class-validator starts its messages with the bare property name; say the full path instead.
      return message.startsWith(`${error.property} `) ? `${path}${message.slice(error.property.length)}` : `${path}: ${message}`;
    }
    const nested = describe(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * The one validation pipe: unknown fields rejected, nothing coerced (`"5"` is not a number,
 * class-transformer's implicit conversion stays off), one sentence naming the field.
 */
class StrictValidationPipe extends ValidationPipe {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      throw new BadRequestException('request body must be a JSON object');
    }
    return super.transform(value, metadata);
  }

  /** Path and query values stay text for their own pipes and DTOs: "1e3" must not become 1000. */
  protected transformPrimitive(value: unknown): unknown {
    return value;
  }
}

export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new BadRequestException(describe(errors) ?? 'request is invalid'),
  });
}
