import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { registerAs } from '@nestjs/config';
import { IsDefined, IsIn, IsOptional, IsString, Matches, MinLength, ValidateBy, ValidateIf, type ValidationArguments } from 'class-validator';
import { BooleanSetting, FileSetting, IntegerSetting, SettingFile, validateSettings } from '../config/environment.js';

/** The database: which one, how to reach it, how long to wait for it. */
export class DatabaseSettings {
  /**
   * `mysql://user:password@host:3306/dbname` or `mariadb://…` selects MySQL/MariaDB (no `?options`).
   * Unset: embedded SQLite. Or `DATABASE_URL_FILE` ([secrets from files](#secrets-from-files)).
   */
  @IsOptional()
  // No ?options: TypeORM's URL parsing drops them, and a silently ignored ?ssl=… is worse than an error.
  @Matches(/^(mysql|mariadb):\/\/[^/?#]+\/[^/?#]+$/, {
    message: 'DATABASE_URL must look like mysql://user:password@host:3306/dbname (without ?options; TLS is set with DATABASE_TLS)',
  })
  DATABASE_URL?: string;

  /**
   * TLS to MySQL: `off`, `verify-ca` or `verify-full` (see [TLS to the
   * database](deployment.md#tls-to-the-database)).
   */
  // No "encrypted but unverified" mode: anyone on the path could then pose as the database.
  @ValidateIf((db: DatabaseSettings) => db.DATABASE_TLS !== 'off')
  @ValidateBy({
    name: 'tlsNeedsHostName',
    validator: {
      // mysql2 checks an IP address host against the name "localhost" (it sends no SNI for IPs), so verify-full cannot work by IP.
      validate: (_value, args) =>
        (args?.object as DatabaseSettings).DATABASE_TLS !== 'verify-full' || !isIP(databaseHost(args?.object as DatabaseSettings) ?? ''),
      defaultMessage: () =>
        'DATABASE_TLS=verify-full checks the host name of DATABASE_URL against the certificate: connect by the name the certificate lists, or use verify-ca with an IP address',
    },
  })
  @ValidateBy({
    name: 'tlsNeedsMysql',
    validator: {
      validate: (_value, args) => Boolean((args?.object as DatabaseSettings).DATABASE_URL),
      defaultMessage: () => 'DATABASE_TLS applies to MySQL only: set DATABASE_URL (or DATABASE_TLS=off for the embedded database)',
    },
  })
  @IsIn(['off', 'verify-ca', 'verify-full'], { message: 'DATABASE_TLS must be off, verify-ca or verify-full' })
  DATABASE_TLS: 'off' | 'verify-ca' | 'verify-full' = 'off';

  /**
   * PEM file of the CA(s) the database server's certificate must be signed by. Unset: Node's public
   * CAs.
   */
  @IsOptional()
  @PemFile('certificate')
  @TlsOn()
  @FileSetting()
  DATABASE_TLS_CA_FILE?: SettingFile;

  /** A client certificate and its unencrypted key (PEM), both or neither. */
  @ValidateIf((db: DatabaseSettings) => db.DATABASE_TLS_CERT_FILE !== undefined || db.DATABASE_TLS_KEY_FILE !== undefined)
  @PemFile('certificate')
  @TlsOn()
  @IsDefined({ message: 'DATABASE_TLS_CERT_FILE must be set when DATABASE_TLS_KEY_FILE is set' })
  @FileSetting()
  DATABASE_TLS_CERT_FILE?: SettingFile;

  /** A client certificate and its unencrypted key (PEM), both or neither. */
  @ValidateIf((db: DatabaseSettings) => db.DATABASE_TLS_CERT_FILE !== undefined || db.DATABASE_TLS_KEY_FILE !== undefined)
  @ValidateBy({
    name: 'keyMatchesCertificate',
    validator: {
      validate: (value, args) => keyMatchesCertificate(value as SettingFile, (args?.object as DatabaseSettings).DATABASE_TLS_CERT_FILE),
      defaultMessage: () => 'DATABASE_TLS_KEY_FILE is not the private key of the certificate in DATABASE_TLS_CERT_FILE',
    },
  })
  @PemFile('private key')
  @TlsOn()
  @IsDefined({ message: 'DATABASE_TLS_KEY_FILE must be set when DATABASE_TLS_CERT_FILE is set' })
  @FileSetting()
  DATABASE_TLS_KEY_FILE?: SettingFile;

  /**
   * Directory of the SQLite file `plant-store.sqlite` (created if missing). Unused with
   * `DATABASE_URL`.
   */
  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  /** Connections in the MySQL pool (1–1000). */
  @IntegerSetting(1, 1000)
  DB_POOL_SIZE = 10;

  /**
   * MySQL: longest time to open a connection, and to wait for a free one in the pool; then 503.
   */
  @IntegerSetting(100, 60_000)
  DB_CONNECT_TIMEOUT_MS = 3000;

  /**
   * MySQL: a query running longer is abandoned and its connection closed; the request gets 503.
   */
  @IntegerSetting(100, 600_000)
  DB_QUERY_TIMEOUT_MS = 5000;

  /**
   * How long the server retries an unreachable database at start-up (every 2 s) before it exits with
   * code 1.
   */
  @IntegerSetting(0, 3_600_000)
  DB_STARTUP_TIMEOUT_MS = 60_000;

  /** Apply pending migrations when the server or the command line starts. */
  @BooleanSetting()
  MIGRATIONS_RUN = true;
}

export const databaseConfig = registerAs('database', () => validateSettings(DatabaseSettings));

function databaseHost(db: DatabaseSettings): string | undefined {
  if (!db.DATABASE_URL) return undefined;
  try {
    // WHATWG URL keeps IPv6 hosts in brackets.
    return new URL(db.DATABASE_URL).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return undefined;
  }
}

/** Why a PEM file cannot serve, or undefined when it can. */
function pemFileProblem(file: SettingFile, kind: 'certificate' | 'private key'): string | undefined {
  if (!file.content) return file.problem;
  try {
    if (kind === 'certificate') new X509Certificate(file.content);
    else createPrivateKey(file.content);
    return undefined;
  } catch (error) {
    const encrypted = kind === 'private key' && /ENCRYPTED/.test(file.content.toString('latin1'));
    return encrypted ? 'the private key is encrypted; give an unencrypted key (mounted as a secret)' : `not a PEM ${kind} (${(error as Error).message})`;
  }
}

function PemFile(kind: 'certificate' | 'private key') {
  return ValidateBy({
    name: 'pemFile',
    validator: {
      validate: (value) => value instanceof SettingFile && pemFileProblem(value, kind) === undefined,
      defaultMessage: (args?: ValidationArguments) => `${args?.property}: ${pemFileProblem(args?.value as SettingFile, kind)}`,
    },
  });
}

/** A TLS file with DATABASE_TLS=off would be silently ignored: an error instead. */
function TlsOn() {
  return ValidateBy({
    name: 'tlsOn',
    validator: {
      validate: (_value, args) => (args?.object as DatabaseSettings).DATABASE_TLS !== 'off',
      defaultMessage: (args?: ValidationArguments) => `${args?.property} is set but DATABASE_TLS is off: set DATABASE_TLS=verify-full (or verify-ca)`,
    },
  });
}

function keyMatchesCertificate(key: SettingFile, certificate: SettingFile | undefined): boolean {
  if (certificate === undefined) return true;
  try {
    return new X509Certificate(certificate.content!).checkPrivateKey(createPrivateKey(key.content!));
  } catch {
    return false;
  }
}
