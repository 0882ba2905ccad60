import type { INestApplicationContext } from '@nestjs/common';
import { InvalidArgumentError } from 'commander';

/** What a command module gets from src/cli.ts: the app (configuration, database, services) for the time of one command. */
export type WithApp = (run: (app: INestApplicationContext) => Promise<void>) => Promise<void>;

/** stdout carries only the result (a token, a listing, a CSV); everything else goes to stderr. */
export const say = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** A count or a version: 0 or more, in plain decimal, safe as a JavaScript number. */
export function nonNegativeInteger(value: string): number {
  if (!/^(0|[1-9][0-9]{0,14})$/.test(value)) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return Number(value);
}

export function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
}

/** A command's failure with an exit code of its own (1 is any other error), for scripts to tell apart. */
export class CommandFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
