import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailableError, isDuplicateKeyError, isRetryableLockError, retryWriteConflicts } from './database-errors.js';

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });
/** What mysql2 gives for a server error: code, errno and SQLSTATE. */
const serverError = (code: string, errno: number, sqlState: string, message: string) => Object.assign(new Error(message), { code, errno, sqlState });
const deadlock = () =>
  new QueryFailedError('INSERT …', [], serverError('ER_LOCK_DEADLOCK', 1213, '40001', 'Deadlock found when trying to get lock; try restarting transaction'));
const duplicate = () => new QueryFailedError('INSERT …', [], serverError('ER_DUP_ENTRY', 1062, '23000', "Duplicate entry 'acme-7' for key 'PRIMARY'"));

describe('isDatabaseUnavailableError', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3306')],
    ['connect timeout', withCode('ETIMEDOUT', 'connect ETIMEDOUT')],
    ['query timeout, wrapped by TypeORM', new QueryFailedError('SELECT 1', [], withCode('PROTOCOL_SEQUENCE_TIMEOUT', 'Query inactivity timeout'))],
    ['no pool connection in time', withCode('POOL_ACQUIRE_TIMEOUT', 'no database connection within 3000 ms')],
    ['pool queue full', new Error('Queue limit reached.')],
    ['connection lost', withCode('PROTOCOL_CONNECTION_LOST', 'Connection lost: The server closed the connection.')],
    [
      'Galera node not primary (1047)',
      new QueryFailedError('SELECT …', [], serverError('ER_UNKNOWN_COM_ERROR', 1047, '08S01', 'WSREP has not yet prepared node for application use')),
    ],
    ['Galera commit not replicated (1180)', serverError('ER_ERROR_DURING_COMMIT', 1180, 'HY000', 'Got error 6 "No such device or address" during COMMIT')],
    ['server shutting down', serverError('ER_SERVER_SHUTDOWN', 1053, '08S01', 'Server shutdown in progress')],
    [
      'read-only server (a former writer after a failover)',
      serverError(
        'ER_OPTION_PREVENTS_STATEMENT',
        1290,
        'HY000',
        'The MariaDB server is running with the --read-only option so it cannot execute this statement',
      ),
    ],
    ['a deadlock that outlived its retries', deadlock()],
    ['a lock wait timeout', serverError('ER_LOCK_WAIT_TIMEOUT', 1205, 'HY000', 'Lock wait timeout exceeded; try restarting transaction')],
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

describe('isRetryableLockError', () => {
  it.each([
    ['deadlock / Galera certification failure', deadlock(), true],
    ['SQLSTATE 40001 alone', serverError('ER_SOMETHING', 9999, '40001', 'serialization failure'), true],
    ['lock wait timeout', serverError('ER_LOCK_WAIT_TIMEOUT', 1205, 'HY000', 'Lock wait timeout exceeded'), true],
    ['TiDB write conflict', serverError('UNKNOWN_CODE_PLEASE_REPORT', 9007, 'HY000', 'Write conflict, txnStartTS=…'), true],
    ['duplicate key', duplicate(), false],
    ['SQLite busy (busy_timeout already waited)', withCode('SQLITE_BUSY'), false],
    ['connection lost', withCode('PROTOCOL_CONNECTION_LOST'), false],
  ])('%s -> %s', (_name, error, expected) => {
    expect(isRetryableLockError(error)).toBe(expected);
  });
});

describe('retryWriteConflicts', () => {
  it('runs the write again after a conflict and returns its result', async () => {
    let calls = 0;
    const result = await retryWriteConflicts(() => (++calls < 3 ? Promise.reject(deadlock()) : Promise.resolve('written')));
    expect(result).toBe('written');
    expect(calls).toBe(3);
  });

  it('gives up after the given number of tries with the last conflict', async () => {
    let calls = 0;
    const failing = retryWriteConflicts(() => (calls++, Promise.reject(deadlock())), { attempts: 4 });
    await expect(failing).rejects.toBeInstanceOf(QueryFailedError);
    expect(calls).toBe(4);
  });

  it('does not retry other errors: a duplicate key is an answer, not a conflict', async () => {
    let calls = 0;
    const failing = retryWriteConflicts(() => (calls++, Promise.reject(duplicate())));
    await expect(failing.catch(isDuplicateKeyError)).resolves.toBe(true);
    expect(calls).toBe(1);
  });

  it('retries what retryOn names', async () => {
    let calls = 0;
    const result = await retryWriteConflicts(() => (++calls === 1 ? Promise.reject(duplicate()) : Promise.resolve(calls)), { retryOn: isDuplicateKeyError });
    expect(result).toBe(2);
  });
});
