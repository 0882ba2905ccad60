import { ValidateBy, type ValidationArguments } from 'class-validator';
import { type FieldOptions, ValidateField } from '../common/validators.js';
import { isUsStateCode } from '../shared/us-states.js';

/** A field holding a US state or territory code, any case (the search's `state`, the store list's filter). */
export function ValidateUsState({ description, ...options }: FieldOptions): PropertyDecorator {
  const isUsState = ValidateBy({
    name: 'isUsState',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && isUsStateCode(value),
      defaultMessage: ({ property, value }: ValidationArguments) =>
        value === undefined ? `${property} is required` : `${property} must be a US state or territory code such as NY`,
    },
  });
  return ValidateField({ description, pattern: '^[A-Za-z]{2}$', ...options }, isUsState);
}
