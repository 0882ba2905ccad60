import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Logger,
  NotFoundException,
  Param,
  Put,
  Res,
  UseFilters,
  type ArgumentsHost,
  type ExceptionFilter,
  Catch,
  type PipeTransform,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { AllExceptionsFilter } from '../common/all-exceptions.filter.js';
import { ApiBodyErrors, ApiCommonErrors } from '../common/api-errors.js';
import { adminHeaders } from '../common/api-headers.js';
import { AdminScope, CurrentCaller } from '../common/auth.decorators.js';
import type { Caller } from '../common/caller.js';
import { AdminErrorBody, ErrorBody } from '../common/error-body.js';
import { dateProblem } from '../shared/special-days.js';
import { HolidayRequest, holidayView, HolidayView } from './dto/admin-holiday.dto.js';
import { HolidayNotFoundError, HolidaysService } from './holidays.service.js';

/** The path's date, checked: a 400 naming it, before any handler runs. */
class DatePipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const problem = dateProblem(value);
    if (problem) throw new BadRequestException(`date ${problem}`);
    return value;
  }
}

/** HolidayNotFoundError is a 404, in the contract's error shape. */
@Catch(HolidayNotFoundError)
class HolidayNotFoundFilter implements ExceptionFilter<HolidayNotFoundError> {
  private readonly answer = new AllExceptionsFilter();

  catch(error: HolidayNotFoundError, host: ArgumentsHost): void {
    this.answer.catch(new NotFoundException(error.message), host);
  }
}

const DATE_PARAM = {
  name: 'date',
  description: "The date, YYYY-MM-DD, in each store's own calendar.",
  schema: { type: 'string' as const, format: 'date', example: '2026-12-25' },
};
const NOT_FOUND = { description: 'No holiday on this date.', type: ErrorBody, example: { error: 404, message: 'no holiday on 2026-12-25' } };
const BAD_DATE = {
  description: 'The date is not a date, or the body is invalid; `problems` names each field.',
  type: AdminErrorBody,
  example: { error: 400, message: 'date "2026-13-01" is not a calendar date from 2000 to 2199' },
};

/**
 * The chain's holiday calendar: on a holiday's date, in each store's own calendar, the stores of
 * its states (every store when it names none) keep its hours, unless their own special day or a
 * temporary closure decides the day. The search's `open_at` answers follow it on every instance
 * within STORE_INDEX_REFRESH_MS; each change is an audit line and a `holiday.changed` event.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiCommonErrors()
@UseFilters(HolidayNotFoundFilter)
@Controller('admin/holidays')
export class AdminHolidaysController {
  private readonly audit = new Logger('Audit');

  constructor(private readonly holidays: HolidaysService) {}

  @Get()
  @AdminScope('reading holidays')
  @ApiOperation({
    operationId: 'adminListHolidays',
    summary: 'List the holidays',
    description: 'The whole calendar, by date (a chain has a few dozen a year).',
  })
  @ApiOkResponse({ description: 'The holidays, by date.', type: HolidayView, isArray: true })
  async list(): Promise<HolidayView[]> {
    return (await this.holidays.list()).map(holidayView);
  }

  @Get(':date')
  @AdminScope('reading holidays')
  @ApiOperation({ operationId: 'adminGetHoliday', summary: 'Show a holiday', description: 'The holiday of one date.' })
  @ApiParam(DATE_PARAM)
  @ApiOkResponse({ description: 'The holiday.', type: HolidayView })
  @ApiBadRequestResponse(BAD_DATE)
  @ApiNotFoundResponse(NOT_FOUND)
  async get(@Param('date', DatePipe) date: string): Promise<HolidayView> {
    return holidayView(await this.holidays.get(date));
  }

  @Put(':date')
  @AdminScope('changing holidays')
  @ApiBodyErrors()
  @ApiOperation({
    operationId: 'adminSetHoliday',
    summary: 'Set a holiday',
    description: 'Creates or replaces the holiday of this date. Sending it as it is writes nothing (no event, no new version).',
  })
  @ApiParam(DATE_PARAM)
  @ApiOkResponse({ description: 'Replaced (or unchanged).', type: HolidayView })
  @ApiCreatedResponse({ description: 'Created; `Location` is the holiday.', type: HolidayView, headers: adminHeaders('Location') })
  @ApiBadRequestResponse(BAD_DATE)
  async put(
    @CurrentCaller() caller: Caller,
    @Param('date', DatePipe) date: string,
    @Body() body: HolidayRequest,
    @Res({ passthrough: true }) res: Response,
  ): Promise<HolidayView> {
    const { holiday, created } = await this.holidays.set(date, body, caller.tokenId);
    this.audit.log({ event: 'admin.holiday.set', team: caller.team, tokenId: caller.tokenId, target: { date, created } });
    if (created) {
      res.status(201);
      res.setHeader('Location', `/admin/holidays/${date}`);
    }
    return holidayView(holiday);
  }

  @Delete(':date')
  @HttpCode(204)
  @AdminScope('changing holidays')
  @ApiOperation({
    operationId: 'adminDeleteHoliday',
    summary: 'Delete a holiday',
    description: 'Deletes the holiday of this date: the stores keep their own hours that day again.',
  })
  @ApiParam(DATE_PARAM)
  @ApiNoContentResponse({ description: 'Deleted. No body.' })
  @ApiBadRequestResponse(BAD_DATE)
  @ApiNotFoundResponse(NOT_FOUND)
  async remove(@CurrentCaller() caller: Caller, @Param('date', DatePipe) date: string): Promise<void> {
    await this.holidays.remove(date, caller.tokenId);
    this.audit.log({ event: 'admin.holiday.deleted', team: caller.team, tokenId: caller.tokenId, target: { date } });
  }
}
