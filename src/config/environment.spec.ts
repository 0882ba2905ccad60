import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSecretFiles } from './environment.js';

const URL = 'mysql://app:s3cret@db.example.com:3306/plantstore';

describe('secrets from files (<NAME>_FILE)', () => {
  let dir: string;
  const write = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-secrets-'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads DATABASE_URL and REDIS_URL from their files, trailing newline trimmed, and drops the _FILE variables', () => {
    const env: Record<string, string | undefined> = {
      DATABASE_URL_FILE: write('database-url', `${URL}\n`),
      REDIS_URL_FILE: write('redis-url', 'redis://:pw@127.0.0.1:6379/0\r\n'),
    };
    readSecretFiles(env);
    expect(env).toEqual({ DATABASE_URL: URL, REDIS_URL: 'redis://:pw@127.0.0.1:6379/0' });
  });

  it('takes a file without a trailing newline as it is', () => {
    const env: Record<string, string | undefined> = { DATABASE_URL_FILE: write('database-url', URL) };
    readSecretFiles(env);
    expect(env.DATABASE_URL).toBe(URL);
  });

  it('rejects both DATABASE_URL and DATABASE_URL_FILE, naming both', () => {
    const env = { DATABASE_URL: URL, DATABASE_URL_FILE: write('database-url', URL) };
    expect(() => readSecretFiles(env)).toThrow('DATABASE_URL and DATABASE_URL_FILE are both set; set one of them');
  });

  it('rejects a file that cannot be read, naming the variable', () => {
    expect(() => readSecretFiles({ REDIS_URL_FILE: join(dir, 'missing') })).toThrow(`REDIS_URL_FILE="${join(dir, 'missing')}": cannot read the file (ENOENT`);
    expect(() => readSecretFiles({ DATABASE_URL_FILE: dir })).toThrow(`DATABASE_URL_FILE="${dir}": cannot read the file (EISDIR`);
  });

  it('rejects an empty file, rather than falling back to the embedded database', () => {
    const empty = write('empty', '\n');
    expect(() => readSecretFiles({ DATABASE_URL_FILE: empty })).toThrow(`DATABASE_URL_FILE="${empty}": the file is empty`);
  });

  it('treats an empty _FILE variable as unset, like every other empty variable', () => {
    const env: Record<string, string | undefined> = { DATABASE_URL_FILE: '' };
    readSecretFiles(env);
    expect(env.DATABASE_URL).toBeUndefined();
  });
});
