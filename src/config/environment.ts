import { readFileSync } from 'node:fs';
import { applyDecorators } from '@nestjs/common';
import { plainToInstance, Transform } from 'class-transformer';
import { getMetadataStorage, IsBoolean, IsInt, IsNumber, Max, Min, validateSync } from 'class-validator';

/*
 * What every feature's settings share. Each feature validates its own settings in its own folder
 * (`<feature>.config.ts`: a class-validator class and its `registerAs` namespace); src/settings.ts
 * lists the namespaces. docs/configuration.md's table is generated from those classes.
 */

/** "true"/"false" (any case) and nothing else; anything else stays a string so that @IsBoolean names the variable. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : value;
};

/** Whole decimal numbers only: "3000" -> 3000, while "3e3", "30.5" or "abc" stay strings and fail @IsInt. */
const toInteger = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value);

/**
 * A whole number in [min, max]. class-validator checks in the order the checks were registered
 * (applyDecorators registers in the order given): the type first, so "must be an integer number"
 * comes before the range.
 */
export const IntegerSetting = (min: number, max: number) => applyDecorators(IsInt(), Max(max), Min(min), Transform(toInteger));

const toNumber = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)\s*$/.test(value) ? Number(value) : value);

/** A decimal number in [min, max] (`0.5`, `2`). */
export const NumberSetting = (min: number, max: number) =>
  applyDecorators(IsNumber({ allowNaN: false, allowInfinity: false }), Max(max), Min(min), Transform(toNumber));

/** true or false (see toBoolean). */
export const BooleanSetting = () => applyDecorators(IsBoolean(), Transform(toBoolean));

/**
 * The file a setting names, read once while the settings are validated: the checks look at its
 * content and the feature uses that content, so the file is never read twice (nor changes between
 * the check and the use). Messages show the path (toJSON).
 */
export class SettingFile {
  readonly content?: Buffer;
  /** Why the file could not be read. */
  readonly problem?: string;

  constructor(readonly path: string) {
    try {
      this.content = readFileSync(path);
    } catch (error) {
      this.problem = `cannot read the file (${(error as Error).message})`;
    }
  }

  /** The content as text, its trailing newline trimmed (a file written by `echo` or an editor). */
  get text(): string {
    return (this.content ?? Buffer.alloc(0)).toString('utf8').replace(/\r?\n$/, '');
  }

  toJSON(): string {
    return this.path;
  }
}

/** A setting that names a file (see SettingFile); unset stays undefined. */
export const FileSetting = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? new SettingFile(value) : value));

/** Settings that may carry a password, hence may come from a file (`<NAME>_FILE`) and are never echoed whole. */
export const SECRET_SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'EVENTS_NATS_URL', 'GEOCODER_URL', 'ROUTER_DATABASE_URL', 'ROUTER_URL'] as const;

/** A bad value: one line per setting, each naming it, under "Invalid configuration:". */
export class InvalidConfiguration extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * One feature's settings from the environment (process.env unless given), validated: the
 * properties of `settings` that carry a check, with their defaults. Empty strings count as unset,
 * the way a blank line in .env is usually meant.
 */
export function validateSettings<T extends object>(settings: new () => T, raw: Record<string, unknown> = process.env): T {
  const names = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(settings, '', true, false)
      .map((m) => m.propertyName),
  );
  const present = Object.fromEntries(Object.entries(raw).filter(([name, v]) => names.has(name) && v !== '' && v !== undefined));
  const values = plainToInstance(settings, present, { exposeDefaultValues: true });
  const errors = validateSync(values, { skipMissingProperties: false, stopAtFirstError: true });
  if (errors.length > 0) {
    throw new InvalidConfiguration(errors.map((e) => `${e.property}=${shown(e.property, e.value)}: ${Object.values(e.constraints ?? {}).join('; ')}`));
  }
  return values;
}

/** A URL's password is replaced in error messages, which end up in logs. */
function shown(name: string, value: unknown): string {
  const text = JSON.stringify(value);
  return (SECRET_SETTINGS as readonly string[]).includes(name) && typeof text === 'string' ? text.replace(/(\/\/[^/:@]*:)[^/@]*@/, '$1***@') : text;
}

/**
 * `<NAME>_FILE` names a file holding the value of a secret setting, the way container platforms
 * mount secrets (Docker/Kubernetes secrets): the file's content, its trailing newline trimmed,
 * becomes NAME in `env`, and NAME_FILE is removed. Both set, an unreadable or an empty file stop start-up.
 */
export function readSecretFiles(env: Record<string, string | undefined>): void {
  const problems: string[] = [];
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: ${name} and ${name}_FILE are both set; set one of them`);
      continue;
    }
    const secret = new SettingFile(file);
    if (secret.problem) {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: ${secret.problem}`);
      continue;
    }
    if (secret.text === '') {
      problems.push(`${name}_FILE=${JSON.stringify(file)}: the file is empty`);
      continue;
    }
    env[name] = secret.text;
    delete env[`${name}_FILE`];
  }
  if (problems.length > 0) throw new InvalidConfiguration(problems);
}

/**
 * Reads `.env` into the environment (variables already set win; skipped under NODE_ENV=test),
 * then the secret files (`<NAME>_FILE`). The server, the command line and the TypeORM CLI all
 * start here, then validate the settings (src/settings.ts). The secrets go into process.env,
 * where the settings are read from.
 */
export function loadEnvironment(): void {
  if (process.env.NODE_ENV !== 'test') {
    try {
      process.loadEnvFile();
    } catch {
      // No .env file: the environment alone.
    }
  }
  readSecretFiles(process.env);
}
