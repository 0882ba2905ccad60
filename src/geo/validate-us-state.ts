import { type FieldOptions, ValidateField, ValidateProblems } from '../common/validators.js';
import { isUsStateCode } from '../shared/us-states.js';

/** A field holding a US state or territory code, any case (the search's `state`, the store list's filter). */
export function ValidateUsState({ description, ...options }: FieldOptions): PropertyDecorator {
  const isUsState = ValidateProblems('isUsState', (value) => {
    if (value === undefined) return [{ code: 'empty', reason: 'is required' }];
    return typeof value === 'string' && isUsStateCode(value) ? [] : [{ code: 'bad_state', reason: 'must be a US state or territory code such as NY' }];
  });
  return ValidateField({ description, pattern: '^[A-Za-z]{2}$', ...options }, isUsState);
}
