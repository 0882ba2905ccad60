import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray } from 'class-validator';
import { ValidateField, ValidateProblems, ValidateText, type CheckProblem } from '../../common/validators.js';
import { hoursProblem } from '../../shared/business-hours.js';
import { DAY_HOURS_MAX } from '../../shared/special-days.js';
import { isUsStateCode, US_STATE_CODES } from '../../shared/us-states.js';
import type { Holiday } from '../holiday.entity.js';
import { statesOf } from '../holidays.service.js';

@ApiSchema({ name: 'AdminHolidayRequest', description: 'A holiday of the chain, for its date (the path).' })
export class HolidayRequest {
  @ValidateText({ minLength: 1, maxLength: 100, notBlank: true, description: 'Its name, 1 to 100 characters.', example: 'Christmas Day' })
  name: string;

  @ValidateField(
    { type: 'string', description: "The stores' hours that day: `Closed`, or ranges as the weekly hours (`9:00 AM - 2:00 PM`).", example: 'Closed' },
    // The codes of a store's weekday hours (store-csv.ts).
    ValidateProblems(
      'isDayHours',
      (value): CheckProblem[] => {
        if (value === undefined) return [{ code: 'empty', reason: 'is required' }];
        if (typeof value !== 'string') return [{ code: 'not_string', reason: 'must be a string' }];
        if (value.length > DAY_HOURS_MAX) return [{ code: 'too_long', reason: `must be at most ${DAY_HOURS_MAX} characters` }];
        const problem = hoursProblem(value);
        return problem ? [{ code: 'bad_hours', reason: problem }] : [];
      },
      // A bad range's words do not start with the field: the pipe's message puts it before them.
      (property, [{ code, reason }]) => (code === 'bad_hours' ? reason : `${property} ${reason}`),
    ),
  )
  hours: string;

  @ValidateField(
    {
      type: [String],
      optional: true,
      description: 'The states (or territories) whose stores keep it, any case, each once; left out: every store.',
      example: ['NY', 'NJ'],
    },
    IsArray({ message: ({ property }) => `${property} must be a list of state codes` }),
    ArrayMinSize(1, { message: ({ property }) => `${property} must name at least one state (leave it out for every store)` }),
    ArrayMaxSize(US_STATE_CODES.size, { message: ({ property }) => `${property} has more states than there are` }),
    ArrayUnique((state: unknown) => (typeof state === 'string' ? state.toUpperCase() : state), {
      message: ({ property }) => `${property} names a state twice`,
    }),
    // The first bad entry (a list that is no list is IsArray's).
    ValidateProblems('areUsStates', (value) => {
      const at = Array.isArray(value) ? value.findIndex((state) => typeof state !== 'string' || !isUsStateCode(state)) : -1;
      return at < 0 ? [] : [{ path: `[${at}]`, code: 'bad_state', reason: 'must be a US state or territory code such as NY' }];
    }),
  )
  states?: string[];
}

@ApiSchema({ name: 'AdminHoliday', description: "A holiday of the chain: on its date, in each store's own calendar, the stores of its states keep its hours." })
export class HolidayView {
  @ApiProperty({ description: 'The date, YYYY-MM-DD.', format: 'date', example: '2026-12-25' }) date: string;
  @ApiProperty({ description: 'Its name.', example: 'Christmas Day' }) name: string;
  @ApiProperty({ description: "The stores' hours that day.", example: 'Closed' }) hours: string;
  @ApiProperty({ description: 'The states whose stores keep it, in order; null: every store.', type: [String], nullable: true, example: null })
  states: string[] | null;
  @ApiProperty({ description: 'When it last changed (ISO 8601, UTC).', format: 'date-time', example: '2026-11-24T10:00:00.000Z' }) updated_at: string;
}

export const holidayView = (holiday: Holiday): HolidayView => ({
  date: holiday.date,
  name: holiday.name,
  hours: holiday.hours,
  states: statesOf(holiday),
  updated_at: holiday.updatedAt.toISOString(),
});
