import { DECORATORS } from '@nestjs/swagger';
import { createValidationPipe } from './validation.js';
import { ValidateInteger, ValidateText } from './validators.js';

class Example {
  @ValidateText({ minLength: 2, maxLength: 3, notBlank: true })
  name: string;

  @ValidateText({ optional: true, maxLength: 3 })
  note?: string;

  @ValidateInteger({ optional: true, minimum: 1, maximum: 9, default: 4 })
  count: number = 4;

  @ValidateInteger({ optional: true, minimum: 0, maximum: 99, message: ({ property, maximum }) => `${property} must be a number of pages up to ${maximum}` })
  pages?: number;
}

class ExampleQuery {
  @ValidateInteger({ optional: true, query: true, minimum: 1, maximum: 1000 })
  limit: number = 100;
}

const pipe = createValidationPipe();
const body = (value: object) => pipe.transform(value, { type: 'body', metatype: Example });
const query = (value: object) => pipe.transform(value, { type: 'query', metatype: ExampleQuery });
const schema = (target: object, property: string): Record<string, unknown> => Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, target, property);

describe('field decorators', () => {
  it('write a text bound once: the schema and the check both use it, counting code points', async () => {
    expect(schema(Example.prototype, 'name')).toMatchObject({ minLength: 2, maxLength: 3 });
    expect(schema(Example.prototype, 'name').required).not.toBe(false);
    expect(schema(Example.prototype, 'note')).toMatchObject({ maxLength: 3, required: false });
    await expect(body({ name: '🌵🌵🌵' })).resolves.toMatchObject({ name: '🌵🌵🌵' });
    await expect(body({ name: 'a' })).rejects.toMatchObject({ message: 'name must be 2 to 3 characters' });
    await expect(body({ name: 'abcd' })).rejects.toMatchObject({ message: 'name must be 2 to 3 characters' });
    await expect(body({ name: '   ' })).rejects.toMatchObject({ message: 'name must not be only white space' });
    await expect(body({ name: 'ab', note: 'abcd' })).rejects.toMatchObject({ message: 'note must be at most 3 characters' });
    await expect(body({ name: 'ab', note: '' })).resolves.toMatchObject({ note: '' });
  });

  it('write an integer range once: the schema and the message both use it', async () => {
    expect(schema(Example.prototype, 'count')).toMatchObject({ type: 'integer', minimum: 1, maximum: 9, default: 4, required: false });
    await expect(body({ name: 'ab', count: 9 })).resolves.toMatchObject({ count: 9 });
    for (const count of [0, 10, 2.5, '3', true]) {
      await expect(body({ name: 'ab', count })).rejects.toMatchObject({ message: 'count must be an integer from 1 to 9' });
    }
    await expect(body({ name: 'ab', pages: 100 })).rejects.toMatchObject({ message: 'pages must be a number of pages up to 99' });
  });

  it('take null for an optional field as not given: the default applies', async () => {
    await expect(body({ name: 'ab', count: null, note: null, pages: null })).resolves.toEqual(
      Object.assign(new Example(), { name: 'ab', note: undefined, pages: undefined }),
    );
    await expect(body({ name: 'ab' })).resolves.toMatchObject({ count: 4 });
  });

  it('read a query integer from plain decimal text only', async () => {
    await expect(query({ limit: '7' })).resolves.toMatchObject({ limit: 7 });
    await expect(query({})).resolves.toMatchObject({ limit: 100 });
    for (const limit of ['1e2', ' 5', '5.0', '0', '1001', ['5', '6']]) {
      await expect(query({ limit })).rejects.toMatchObject({ message: 'limit must be an integer from 1 to 1000' });
    }
  });
});
