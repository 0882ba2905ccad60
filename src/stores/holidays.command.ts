import { InvalidArgumentError, type Command } from 'commander';
import { CommandFailure, say, type WithApp } from '../common/command-line.js';
import { hoursProblem } from '../shared/business-hours.js';
import { dateProblem, DAY_HOURS_MAX } from '../shared/special-days.js';
import { isUsStateCode } from '../shared/us-states.js';
import { HolidayNotFoundError, HolidaysService, statesOf } from './holidays.service.js';

/** Who a command-line change is by, in its event (`tokenId`), as the audit names the admin file's token `admin-file`. */
const CLI_ACTOR = 'cli';

/** The checks of the admin API's HolidayRequest, worded for options. */
function date(value: string): string {
  const problem = dateProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function hours(value: string): string {
  const problem = value.length > DAY_HOURS_MAX ? `is longer than ${DAY_HOURS_MAX} characters` : hoursProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function name(value: string): string {
  if (!/\S/u.test(value) || [...value].length > 100 || !value.isWellFormed())
    throw new InvalidArgumentError('must be 1 to 100 characters, not only white space');
  return value;
}

function states(value: string): string[] {
  const codes = value.split(',').map((code) => code.trim());
  const bad = codes.find((code) => !isUsStateCode(code));
  if (bad !== undefined) throw new InvalidArgumentError(`"${bad}" is not a US state or territory code such as NY`);
  if (new Set(codes.map((code) => code.toUpperCase())).size !== codes.length) throw new InvalidArgumentError('names a state twice');
  return codes;
}

/** `plant-store holidays …`: the chain's holiday calendar from a shell, as GET/PUT/DELETE /admin/holidays. */
export function holidaysCommand(program: Command, withApp: WithApp): void {
  const holidays = program.command('holidays').description("The chain's holidays: on a holiday's date, the stores of its states keep its hours.");

  holidays
    .command('list')
    .description('One holiday a line, by date: date, name, hours, states (- for every store).')
    .action(() =>
      withApp(async (app) => {
        for (const holiday of await app.get(HolidaysService).list())
          process.stdout.write(`${[holiday.date, holiday.name, holiday.hours, statesOf(holiday)?.join(',') ?? '-'].join('\t')}\n`);
      }),
    );

  holidays
    .command('set')
    .description("Create or replace the holiday of a date; every instance's search follows it within STORE_INDEX_REFRESH_MS.")
    .argument('<date>', "YYYY-MM-DD, in each store's own calendar", date)
    .requiredOption('--name <name>', 'its name, e.g. "Christmas Day"', name)
    .requiredOption('--hours <hours>', 'Closed, or ranges as the weekly hours ("9:00 AM - 2:00 PM")', hours)
    .option('--states <codes>', 'only the stores of these states, comma-separated (default: every store)', states)
    .action((day: string, options: { name: string; hours: string; states?: string[] }) =>
      withApp(async (app) => {
        const { created } = await app.get(HolidaysService).set(day, options, CLI_ACTOR);
        say(`holiday ${day} ${created ? 'created' : 'set'}`);
      }),
    );

  holidays
    .command('delete')
    .description('Delete the holiday of a date.')
    .argument('<date>', 'YYYY-MM-DD', date)
    .action((day: string) =>
      withApp(async (app) => {
        try {
          await app.get(HolidaysService).remove(day, CLI_ACTOR);
        } catch (error) {
          if (error instanceof HolidayNotFoundError) throw new CommandFailure(error.message, 1);
          throw error;
        }
        say(`holiday ${day} deleted`);
      }),
    );
}
