import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/**
 * A string of 1..max (or 0..max) Unicode characters, counted as code points the way
 * MySQL's utf8mb4 VARCHAR counts them, so "🌵" is one character. Lone surrogates are
 * refused: no database can store them, and they would otherwise surface as a 500.
 */
export function IsText(max: number, options: { allowEmpty?: boolean; notBlank?: boolean } = {}, validationOptions?: ValidationOptions) {
  const min = options.allowEmpty ? 0 : 1;
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isText',
      target: object.constructor,
      propertyName,
      options: validationOptions,
      validator: {
        validate(value: unknown) {
          if (typeof value !== 'string' || !value.isWellFormed()) return false;
          const length = [...value].length;
          if (length < min || length > max) return false;
          return !options.notBlank || /\S/u.test(value);
        },
        defaultMessage({ property, value }: ValidationArguments) {
          if (value === undefined) return `${property} is required`;
          if (typeof value !== 'string') return `${property} must be a string`;
          if (!value.isWellFormed()) return `${property} must be well-formed Unicode text`;
          if (options.notBlank && [...value].length >= min && [...value].length <= max) return `${property} must not be only white space`;
          return min === 0 ? `${property} must be at most ${max} characters` : `${property} must be ${min} to ${max} characters`;
        },
      },
    });
}

/**
 * Query strings arrive as text. A plain decimal integer becomes a number; anything else
 * ("1e2", " 5", "5.0", two values) is left as it is, so the integer check refuses it.
 */
export const QueryInteger = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(value) ? Number(value) : value));

/** An integer (a JSON number without fraction, never a string) within [min, max], with one message for every failure. */
export function IsIntegerIn(min: number, max: number, message: string) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'isIntegerIn',
      target: object.constructor,
      propertyName,
      options: { message },
      validator: { validate: (value: unknown) => Number.isInteger(value) && (value as number) >= min && (value as number) <= max },
    });
}

/** JSON `null` for an optional field means "not given": the default applies (documented in the README). */
export const NullMeansDefault = (fallback?: unknown) => Transform(({ value }: { value: unknown }) => (value === null ? fallback : value));
