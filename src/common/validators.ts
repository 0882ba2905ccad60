import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy, type ValidationArguments } from 'class-validator';
import type { ProblemCode } from './problem-codes.js';

/**
 * One decorator per kind of field gives both the check and the OpenAPI schema, so a bound is
 * written once, in the schema's own terms (minLength, maximum, …), and the check reads it from there.
 * `optional`: the field may be left out; JSON `null` counts as left out (documented in
 * docs/api.md), so the schema's `default`, if any, applies.
 */
export type FieldOptions = ApiPropertyOptions & { optional?: boolean };

/** The schema and the checks of one field; the schema's keys keep the order given (the published document shows it). */
export function ValidateField({ optional, ...schema }: FieldOptions, ...checks: PropertyDecorator[]): PropertyDecorator {
  if (!optional) return applyDecorators(ApiProperty(schema), ...checks);
  return applyDecorators(ApiPropertyOptional(schema), NullMeansDefault(schema.default), IsOptional(), ...checks);
}

/** JSON `null` for an optional field means "not given": the default applies. */
const NullMeansDefault = (fallback: unknown) => Transform(({ value }: { value: unknown }) => (value === null ? fallback : value));

/** A problem a check found, as data: where within the field (`[1].date`; none: the field itself), its code, and its words (after the field and path). */
export interface CheckProblem {
  path?: string;
  code: ProblemCode;
  reason: string;
}

/** How validation.ts finds a check's problems: class-validator hands a check's `context` to the validation error. */
export interface ProblemsContext {
  problemsOf: (value: unknown, property: string) => CheckProblem[];
}

/**
 * A check whose problems are data: `problemsOf` finds every one (none: the value is valid), each
 * with its code, and the pipe answers them as they are (validation.ts), never taken apart from the
 * message. The message is made of them (`special_hours[1].date "…" is not …`), or is `message`'s.
 * `name` is class-validator's and goes no further than this service: the code is the API.
 */
export function ValidateProblems(
  name: string,
  problemsOf: (value: unknown, property: string) => CheckProblem[],
  message?: (property: string, problems: CheckProblem[]) => string,
): PropertyDecorator {
  const context: ProblemsContext = { problemsOf };
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value: unknown, args) => problemsOf(value, args?.property ?? '').length === 0,
        defaultMessage: ({ property, value }: ValidationArguments) => {
          const problems = problemsOf(value, property);
          return message ? message(property, problems) : problems.map(({ path, reason }) => `${property}${path ?? ''} ${reason}`).join('; ');
        },
      },
    },
    { context },
  );
}

/**
 * A string of minLength..maxLength Unicode characters (minLength 0 when not given), counted
 * as code points the way MySQL's utf8mb4 VARCHAR counts them, so "🌵" is one character. Lone
 * surrogates are refused: no database can store them, and they would otherwise surface as a
 * 500. `notBlank`: not only white space.
 */
export function ValidateText({ notBlank, ...options }: FieldOptions & { maxLength: number; notBlank?: boolean }): PropertyDecorator {
  const min = options.minLength ?? 0;
  const max = options.maxLength;
  const bounds = min === 0 ? `must be at most ${max} characters` : `must be ${min} to ${max} characters`;
  const problemsOf = (value: unknown): CheckProblem[] => {
    if (value === undefined) return [{ code: 'empty', reason: 'is required' }];
    if (typeof value !== 'string') return [{ code: 'not_string', reason: 'must be a string' }];
    if (!value.isWellFormed()) return [{ code: 'not_unicode', reason: 'must be well-formed Unicode text' }];
    const length = [...value].length;
    if (length > max) return [{ code: 'too_long', reason: bounds }];
    if (length < min) return [{ code: length === 0 ? 'empty' : 'too_short', reason: bounds }];
    if (notBlank && !/\S/u.test(value)) return [{ code: 'empty', reason: 'must not be only white space' }];
    return [];
  };
  return ValidateField(options, ValidateProblems('isText', problemsOf));
}

/**
 * Query strings arrive as text. A plain decimal integer becomes a number; anything else
 * ("1e2", " 5", "5.0", two values) is left as it is, so the integer check refuses it.
 */
const QueryInteger = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : value));

type IntegerOptions = FieldOptions & {
  minimum: number;
  maximum: number;
  /** The value is a query parameter, text to be read as a decimal integer. */
  query?: boolean;
  /** The one message for every failure; by default "… must be an integer from minimum to maximum". */
  message?: (field: { property: string; minimum: number; maximum: number }) => string;
};

/** An integer in [minimum, maximum]: in a body a JSON number without fraction, never a string. */
export function ValidateInteger({ query, message, ...options }: IntegerOptions): PropertyDecorator {
  const { minimum, maximum } = options;
  const describe = message ?? (({ property }) => `${property} must be an integer from ${minimum} to ${maximum}`);
  const isInteger = ValidateProblems(
    'isIntegerIn',
    (value, property) => {
      if (Number.isInteger(value) && (value as number) >= minimum && (value as number) <= maximum) return [];
      const sentence = describe({ property, minimum, maximum });
      const reason = sentence.startsWith(`${property} `) ? sentence.slice(property.length + 1) : sentence;
      return [{ code: value === undefined ? 'empty' : 'bad_integer', reason }];
    },
    (property) => describe({ property, minimum, maximum }),
  );
  return ValidateField({ type: 'integer', ...options }, ...(query ? [QueryInteger()] : []), isInteger);
}
