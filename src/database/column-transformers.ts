import type { ValueTransformer } from 'typeorm';

/**
 * mysql2 returns BIGINT and DECIMAL as strings (exact), better-sqlite3 as numbers.
 * Every value kept here fits a double exactly (ids <= 2^53 - 1, coordinates with six
 * decimals), so both become plain numbers.
 */
export const numeric: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
