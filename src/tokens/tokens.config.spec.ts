import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateSettings } from '../config/environment.js';
import { generateToken } from '../config/token-format.js';
import { TokensSettings } from './tokens.config.js';

describe('ADMIN_TOKEN_FILE', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'plant-store-admin-token-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is read once, while validating: the token (its newline trimmed) is what the service gets, whatever the file holds later', () => {
    const token = generateToken();
    const file = join(dir, 'admin-token');
    writeFileSync(file, `${token}\n`);
    const settings = validateSettings(TokensSettings, { ADMIN_TOKEN_FILE: file });
    rmSync(file);
    expect(settings.ADMIN_TOKEN_FILE?.path).toBe(file);
    expect(settings.ADMIN_TOKEN_FILE?.text).toBe(token);
  });

  it('stops start-up, naming the setting, when the file holds no token or cannot be read', () => {
    const file = join(dir, 'admin-token');
    writeFileSync(file, 'pst_not-a-token\n');
    expect(() => validateSettings(TokensSettings, { ADMIN_TOKEN_FILE: file })).toThrow(
      `ADMIN_TOKEN_FILE=${JSON.stringify(file)}: ADMIN_TOKEN_FILE: the file must hold one token`,
    );
    expect(() => validateSettings(TokensSettings, { ADMIN_TOKEN_FILE: join(dir, 'missing') })).toThrow('ADMIN_TOKEN_FILE: cannot read the file (ENOENT');
  });

  it('is unset when empty, like every other empty variable', () => {
    expect(validateSettings(TokensSettings, { ADMIN_TOKEN_FILE: '' }).ADMIN_TOKEN_FILE).toBeUndefined();
  });
});
