import { registerAs } from '@nestjs/config';
import { IsOptional, ValidateBy } from 'class-validator';
import { FileSetting, IntegerSetting, SettingFile, validateSettings } from '../config/environment.js';
import { isWellFormedToken } from '../config/token-format.js';

/** API tokens: how long they live, how long a look-up is reused, and an admin token from a file. */
export class TokensSettings {
  /**
   * Lifetime of a token issued without `--expires-in-days` (0–3650; `0`: such tokens never expire).
   */
  @IntegerSetting(0, 3650)
  TOKEN_DEFAULT_TTL_DAYS = 90;

  /**
   * How long an instance reuses a token look-up (0–5; `0`: a database look-up on every request). A
   * revocation reaches every instance within this time.
   */
  @IntegerSetting(0, 5)
  TOKEN_CACHE_SECONDS = 2;

  /**
   * A file holding one token (`pst_…`, as `tokens create` prints it) that the service accepts as an
   * admin token, for container platforms where nobody runs the command line: mount it from a secret.
   * Only its digest is kept; audit lines name it `admin-file`. An unreadable file or one that holds no
   * well-formed token stops start-up.
   */
  @IsOptional()
  @ValidateBy({
    name: 'adminTokenFile',
    validator: {
      validate: (value) => adminTokenProblem(value as SettingFile) === undefined,
      defaultMessage: (args) => `ADMIN_TOKEN_FILE: ${adminTokenProblem(args?.value as SettingFile)}`,
    },
  })
  @FileSetting()
  ADMIN_TOKEN_FILE?: SettingFile;
}

export const tokensConfig = registerAs('tokens', () => validateSettings(TokensSettings));

/** Why ADMIN_TOKEN_FILE cannot serve, or undefined when it can. */
function adminTokenProblem(file: SettingFile): string | undefined {
  if (file.problem) return file.problem;
  return isWellFormedToken(file.text) ? undefined : 'the file must hold one token as `tokens create` prints it (pst_ and 49 letters and digits)';
}
