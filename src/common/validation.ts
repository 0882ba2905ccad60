import { BadRequestException, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';
import type { Problem } from './error-body.js';
import { CHECK_CODES } from './problem-codes.js';
import type { ProblemsContext } from './validators.js';

/**
 * class-validator works out a class's rules on every validation: it filters the rules of the
 * class, looks through the rules of every other validated class of the app for ones it inherits
 * (so the cost grows with the app's DTOs, not with the request), and groups the result by
 * property, for the request body and again for each nested object. The rules only change when a
 * decorator runs, i.e. while modules load, so they are worked out once per class here and the
 * cache is dropped whenever a rule is added. The rules themselves, their order and what they say
 * are class-validator's, untouched. Only the plain call (no groups, `always` and `strictGroups`
 * off: what the pipe below asks) is kept; any other call goes through as before.
 */
export function cacheValidationRules(storage = getMetadataStorage()): void {
  type Storage = typeof storage & { rulesCached?: true };
  const cached = storage as Storage;
  if (cached.rulesCached) return;
  cached.rulesCached = true;
  // By class, then by the schema argument (class-validator passes the parent's class for a nested object).
  const rules = new Map<unknown, Map<unknown, ValidationMetadata[]>>();
  const grouped = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  const targetRules = storage.getTargetValidationMetadatas.bind(storage);
  const groupRules = storage.groupByPropertyName.bind(storage);
  const addRule = storage.addValidationMetadata.bind(storage);
  storage.addValidationMetadata = (metadata) => {
    rules.clear();
    addRule(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (always || strictGroups || groups?.length) return targetRules(target, schema, always, strictGroups, groups);
    let bySchema = rules.get(target);
    if (!bySchema) rules.set(target, (bySchema = new Map()));
    let found = bySchema.get(schema);
    if (!found) bySchema.set(schema, (found = targetRules(target, schema, always, strictGroups, groups)));
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata);
    if (!found) grouped.set(metadata, (found = groupRules(metadata)));
    return found;
  };
}

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
      // class-validator starts its messages with the bare property name (or a path within it,
      // `special_hours[1].date …`); say the full path instead.
      const named = [' ', '[', '.'].some((next) => message.startsWith(`${error.property}${next}`));
      return named ? `${path}${message.slice(error.property.length)}` : `${path}: ${message}`;
    }
    const nested = describe(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}

/**
 * Every problem as data, each field by its full path (the admin routes answer them beside the
 * message). A check of the service's own gives its problems itself, each with its code and path
 * within the field (ValidateProblems); class-validator's own checks have their codes in
 * CHECK_CODES. The message is words only: nothing here is taken from it but the words themselves.
 */
function problemsOf(errors: ValidationError[], parent = ''): Problem[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).flatMap(([name, message]): Problem[] => {
      const context = error.contexts?.[name] as Partial<ProblemsContext> | undefined;
      if (context?.problemsOf) {
        return context
          .problemsOf(error.value, error.property)
          .map(({ path: within, code, reason }) => ({ field: `${path}${within ?? ''}`, code, message: reason }));
      }
      if (name === 'whitelistValidation') return [{ field: path, code: 'unknown_field', message: 'unknown field' }];
      // class-validator's checks say one thing, which starts with the field's name.
      const words = message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message;
      return [{ field: path, code: CHECK_CODES[name] ?? 'invalid', message: words }];
    });
    return [...own, ...problemsOf(error.children ?? [], path)];
  });
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
  cacheValidationRules();
  return new StrictValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    // The value goes to the checks' problemsOf (problemsOf above); the answer never shows it.
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new BadRequestException({ message: describe(errors) ?? 'request is invalid', problems: problemsOf(errors) }),
  });
}
