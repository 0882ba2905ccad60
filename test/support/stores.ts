import { Readable } from 'node:stream';
import { STORE_FIELD_NAMES } from '../../src/shared/store-fields.js';
import { STORE_CSV_REQUIRED_COLUMNS } from '../../src/stores/store-csv.js';
import type { ImportOptions } from '../../src/stores/store-import-options.js';
import { StoreImportService } from '../../src/stores/store-import.service.js';
import type { TestApp } from './test-app.js';

export const WEEK_OPEN = {
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: '9:00 AM - 6:00 PM',
  thursday: '9:00 AM - 8:00 PM',
  friday: '9:00 AM - 8:00 PM',
  saturday: '10:00 AM - 12:00 PM, 1:00 PM - 5:00 PM',
  sunday: 'Closed',
};

export interface StoreInput {
  code: string;
  name: string;
  lat?: number | string;
  lng?: number | string;
  zip?: string;
  address?: string;
  city?: string;
  state?: string;
  hours?: Partial<typeof WEEK_OPEN>;
  /** The CSV's optional time_zone cell; when no store has one the file has no such column. */
  timeZone?: string;
  /** The optional special_hours cell (`2026-12-24=9:00 AM - 2:00 PM; …`); likewise. */
  special?: string;
  /** The optional temporarily_closed cell (`2027-01-04/2027-01-31`, `2027-01-04/..`); likewise. */
  closure?: string;
  /** The optional contact cells, as written in the file; likewise. */
  phone?: string;
  website?: string;
  email?: string;
  /** The optional services cell (`curbside_pickup|delivery`); likewise. */
  services?: string;
}

const quote = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** A stores CSV in the import format, one row per store. */
export function storesCsv(stores: StoreInput[]): string {
  // The required columns, and each optional one that some store gives.
  const given = {
    time_zone: 'timeZone',
    special_hours: 'special',
    temporarily_closed: 'closure',
    phone: 'phone',
    website: 'website',
    email: 'email',
    services: 'services',
  } as const;
  const columns = STORE_FIELD_NAMES.filter(
    (column) => STORE_CSV_REQUIRED_COLUMNS.includes(column) || stores.some((s) => s[given[column as keyof typeof given]] !== undefined),
  );
  const rows = stores.map((s) => {
    const hours = { ...WEEK_OPEN, ...s.hours };
    const values: Record<string, string> = {
      code: s.code,
      name: s.name,
      address: s.address ?? '1 Test Street',
      city: s.city ?? 'New York',
      state: s.state ?? 'NY',
      zip: s.zip ?? '10001',
      lat: s.lat === undefined ? '' : typeof s.lat === 'number' ? s.lat.toFixed(6) : s.lat,
      lng: s.lng === undefined ? '' : typeof s.lng === 'number' ? s.lng.toFixed(6) : s.lng,
      ...hours,
      time_zone: s.timeZone ?? '',
      special_hours: s.special ?? '',
      temporarily_closed: s.closure ?? '',
      phone: s.phone ?? '',
      website: s.website ?? '',
      email: s.email ?? '',
      services: s.services ?? '',
    };
    return columns.map((c) => quote(values[c] ?? '')).join(',');
  });
  return [columns.join(','), ...rows].join('\n') + '\n';
}

export function importStores(t: TestApp, csv: string, options?: ImportOptions) {
  return t.app.get(StoreImportService).import(() => Readable.from([csv]), options);
}
