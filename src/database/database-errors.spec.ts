import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailableError } from './database-errors.js';

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailableError', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3306')],
    ['connect timeout', withCode('ETIMEDOUT', 'connect ETIMEDOUT')],
    ['query timeout, wrapped by TypeORM', new QueryFailedError('SELECT 1', [], withCode('PROTOCOL_SEQUENCE_TIMEOUT', 'Query inactivity timeout'))],
    ['no pool connection in time', withCode('POOL_ACQUIRE_TIMEOUT', 'no database connection within 3000 ms')],
    ['pool queue full', new Error('Queue limit reached.')],
    ['connection lost', withCode('PROTOCOL_CONNECTION_LOST', 'Connection lost: The server closed the connection.')],
  ])('%s -> 503', (_name, error) => {
    expect(isDatabaseUnavailableError(error)).toBe(true);
  });

  it.each([
    ['duplicate key', withCode('ER_DUP_ENTRY')],
    ['syntax error', new QueryFailedError('SELEC 1', [], withCode('ER_PARSE_ERROR'))],
    ['a plain bug', new TypeError('x is undefined')],
  ])('%s -> not a 503', (_name, error) => {
    expect(isDatabaseUnavailableError(error)).toBe(false);
  });
});
