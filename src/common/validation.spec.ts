import { jest } from '@jest/globals';
import { getMetadataStorage, IsInt, IsOptional } from 'class-validator';
import { cacheValidationRules, createValidationPipe } from './validation.js';
import { ValidateText } from './validators.js';

type Storage = ReturnType<typeof getMetadataStorage>;

class Named {
  @ValidateText({ maxLength: 3 })
  name: string;
}

const pipe = createValidationPipe();
const validate = (metatype: new () => object, value: object) => pipe.transform(value, { type: 'body', metatype });

describe('the validation rules cache', () => {
  it('works out the rules of a class once, and again after a rule is added', () => {
    const global = getMetadataStorage();
    const [rule] = global.getTargetValidationMetadatas(Named, '', false, false);
    const storage = new (global.constructor as new () => Storage)();
    storage.addValidationMetadata(rule);
    const derive = jest.spyOn(storage, 'getTargetValidationMetadatas');
    const group = jest.spyOn(storage, 'groupByPropertyName');
    cacheValidationRules(storage);

    const first = storage.getTargetValidationMetadatas(Named, undefined as unknown as string, false, false);
    const second = storage.getTargetValidationMetadatas(Named, undefined as unknown as string, false, false);
    expect(second).toBe(first);
    expect(first).toHaveLength(1);
    expect(derive).toHaveBeenCalledTimes(1);
    expect(storage.groupByPropertyName(first)).toBe(storage.groupByPropertyName(second));
    expect(group).toHaveBeenCalledTimes(1);
    // A call with groups is class-validator's own, every time.
    storage.getTargetValidationMetadatas(Named, undefined as unknown as string, false, false, ['admin']);
    expect(derive).toHaveBeenCalledTimes(2);

    storage.addValidationMetadata(rule);
    expect(storage.getTargetValidationMetadatas(Named, undefined as unknown as string, false, false)).toHaveLength(2);
    expect(derive).toHaveBeenCalledTimes(3);
  });

  it('sees a rule added to a class after the class was validated', async () => {
    class Late {
      @ValidateText({ maxLength: 3 })
      name: string;
    }
    await expect(validate(Late, { name: 'ab' })).resolves.toMatchObject({ name: 'ab' });
    await expect(validate(Late, { name: 'ab', count: 'x' })).rejects.toMatchObject({ message: 'unknown field count' });
    IsOptional()(Late.prototype, 'count');
    IsInt({ message: 'count must be an integer' })(Late.prototype, 'count');
    await expect(validate(Late, { name: 'ab', count: 'x' })).rejects.toMatchObject({ message: 'count must be an integer' });
    await expect(validate(Late, { name: 'ab', count: 2 })).resolves.toMatchObject({ count: 2 });
  });

  it('gives the same answers on every call', async () => {
    class Outer {
      @ValidateText({ maxLength: 3 })
      name: string;
    }
    for (let i = 0; i < 3; i++) {
      await expect(validate(Outer, { name: 'abcd' })).rejects.toMatchObject({ message: 'name must be at most 3 characters' });
      await expect(validate(Named, { name: 'ab', other: 1 })).rejects.toMatchObject({ message: 'unknown field other' });
      await expect(validate(Named, { name: 'ab' })).resolves.toBeInstanceOf(Named);
    }
  });
});
