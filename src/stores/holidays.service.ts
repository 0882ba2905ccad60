import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { OutboxService, type Actor, type HolidayChange } from '../events/outbox.service.js';
import { Holiday } from './holiday.entity.js';
import { StoreCatalog } from './store-catalog.js';

/** No holiday on this date. */
export class HolidayNotFoundError extends Error {
  constructor(readonly date: string) {
    super(`no holiday on ${date}`);
  }
}

/** A holiday as the admin API and the command line give it: the states as codes, none for every store. */
export interface HolidayFields {
  name: string;
  hours: string;
  states?: readonly string[];
}

const statesText = (states: readonly string[] | undefined) => [...new Set((states ?? []).map((state) => state.toUpperCase()))].sort().join(',');
export const statesOf = (holiday: Pick<Holiday, 'states'>): string[] | null => (holiday.states === '' ? null : holiday.states.split(','));

const changeOf = (holiday: Holiday, deleted: boolean): HolidayChange => ({
  date: holiday.date,
  name: holiday.name,
  hours: holiday.hours,
  states: statesOf(holiday),
  deleted,
});

/**
 * The chain's holiday calendar, for the admin API and the command line. A holiday is written
 * through the catalogue's one door (StoreCatalog.write), as a store is: the version bumped, so
 * that every instance's search index reloads with it (a holiday concerns every store of its
 * states), and its `holiday.changed` event in the same transaction. Setting a holiday as it is
 * stored writes nothing. The fields come checked (dto/admin-holiday.dto.ts, the command's parser).
 */
@Injectable()
export class HolidaysService {
  constructor(
    @InjectRepository(Holiday) private readonly holidays: Repository<Holiday>,
    private readonly catalog: StoreCatalog,
    private readonly outbox: OutboxService,
  ) {}

  /** Every holiday, by date. */
  list(): Promise<Holiday[]> {
    return this.holidays.find({ order: { date: 'ASC' } });
  }

  async get(date: string): Promise<Holiday> {
    const holiday = await this.holidays.findOneBy({ date });
    if (!holiday) throw new HolidayNotFoundError(date);
    return holiday;
  }

  /** Sets the holiday of `date`; `created` tells whether there was none. */
  async set(date: string, fields: HolidayFields, actor: Actor): Promise<{ holiday: Holiday; created: boolean }> {
    const row = { date, name: fields.name, hours: fields.hours, states: statesText(fields.states) };
    const { value } = await this.catalog.write('admin', async (write) => {
      const current = await write.manager.findOneBy(Holiday, { date });
      if (current && current.name === row.name && current.hours === row.hours && current.states === row.states) return { holiday: current, created: false };
      await write.setHoliday(row);
      const holiday = await write.manager.findOneByOrFail(Holiday, { date });
      await this.outbox.holidayChanged(write.manager, changeOf(holiday, false), actor);
      return { holiday, created: !current };
    });
    return value;
  }

  /** Deletes the holiday of `date`; the holiday as it was. */
  async remove(date: string, actor: Actor): Promise<Holiday> {
    const { value } = await this.catalog.write('admin', async (write) => {
      const current = await write.manager.findOneBy(Holiday, { date });
      if (!current) return undefined;
      await write.removeHoliday(date);
      await this.outbox.holidayChanged(write.manager, changeOf(current, true), actor);
      return current;
    });
    if (!value) throw new HolidayNotFoundError(date);
    return value;
  }
}
