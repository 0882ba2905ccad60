import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy, type ValidationArguments } from 'class-validator';

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

/**
 * A string of minLength..maxLength Unicode characters (minLength 0 when not given), counted
 * as code points the way MySQL's utf8mb4 VARCHAR counts them, so "🌵" is one character. Lone
 * surrogates are refused: no database can store them, and they would otherwise surface as a
 * 500. `notBlank`: not only white space.
 */
export function ValidateText({ notBlank, ...options }: FieldOptions & { maxLength: number; notBlank?: boolean }): PropertyDecorator {
  const min = options.minLength ?? 0;
  const max = options.maxLength;
  const isText = ValidateBy({
    name: 'isText',
    validator: {
      validate(value: unknown) {
        if (typeof value !== 'string' || !value.isWellFormed()) return false;
        const length = [...value].length;
        if (length < min || length > max) return false;
        return !notBlank || /\S/u.test(value);
      },
      defaultMessage({ property, value }: ValidationArguments) {
        if (value === undefined) return `${property} is required`;
        if (typeof value !== 'string') return `${property} must be a string`;
        if (!value.isWellFormed()) return `${property} must be well-formed Unicode text`;
        if (notBlank && [...value].length >= min && [...value].length <= max) return `${property} must not be only white space`;
        return min === 0 ? `${property} must be at most ${max} characters` : `${property} must be ${min} to ${max} characters`;
      },
    },
  });
  return ValidateField(options, isText);
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
  const isInteger = ValidateBy({
    name: 'isIntegerIn',
    validator: {
      validate: (value: unknown) => Number.isInteger(value) && (value as number) >= minimum && (value as number) <= maximum,
      defaultMessage: ({ property }: ValidationArguments) => describe({ property, minimum, maximum }),
    },
  });
  return ValidateField({ type: 'integer', ...options }, ...(query ? [QueryInteger()] : []), isInteger);
}
