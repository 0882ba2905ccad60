import type { CatalogStore } from '../stores/store-catalog.js';
import { entityTag, findStore, noneMatch, pageCacheControl, storePage, storePageJson } from './store-page.js';
import { buildSnapshot } from './store-snapshot.js';

const store = (code: string, name: string, extra: Partial<CatalogStore> = {}): CatalogStore => ({
  code,
  name,
  address: '1 Main St',
  city: 'New York',
  state: 'NY',
  zip: '10001',
  lat: 40.75,
  lng: -74,
  monday: '9:00 AM - 6:00 PM',
  tuesday: '9:00 AM - 6:00 PM',
  wednesday: '9:00 AM - 6:00 PM',
  thursday: '9:00 AM - 6:00 PM',
  friday: '9:00 AM - 6:00 PM',
  saturday: 'Closed',
  sunday: 'Closed',
  time_zone: 'America/New_York',
  special_hours: '',
  temporarily_closed: '',
  phone: '',
  website: '',
  email: '',
  services: '',
  ...extra,
});

/** 2026-12-18, a Friday, at noon in New York. */
const FRIDAY_NOON = Date.parse('2026-12-18T12:00:00-05:00');

describe('findStore', () => {
  it('finds a code in the part that shows it: not in the base once hidden, but in the changes', async () => {
    const base = await buildSnapshot(1, [[store('A', 'Old A'), store('B', 'B')]]);
    const overlay = await buildSnapshot(2, [[store('A', 'New A')]]);
    const hidden = new Uint8Array([1, 0]);
    const view = { parts: [{ snapshot: base, hidden }, { snapshot: overlay }] };
    expect(storePage(findStore(view, 'A')!.snapshot, findStore(view, 'A')!.store, FRIDAY_NOON).location.name).toBe('New A');
    expect(findStore(view, 'B')).toEqual({ snapshot: base, store: 1 });
    // Removed: hidden in the base, in no change.
    expect(findStore({ parts: [{ snapshot: base, hidden: new Uint8Array([0, 1]) }] }, 'B')).toBeUndefined();
    expect(findStore(view, 'C')).toBeUndefined();
  });
});

describe('storePage', () => {
  it('lists the special days and holidays of the 30 days from today, and a closure until it ends', async () => {
    const snapshot = await buildSnapshot(
      1,
      [[store('A', 'A', { special_hours: '2026-12-17=Closed; 2026-12-24=9:00 AM - 2:00 PM; 2027-01-17=Closed', temporarily_closed: '2027-01-04/2027-01-10' })]],
      [{ date: '2026-12-25', name: 'Christmas Day', hours: 'Closed', states: '' }],
    );
    const page = storePage(snapshot, 0, FRIDAY_NOON);
    // Yesterday's and the one 30 days ahead (2027-01-17) are out.
    expect(page.days.map(({ date, kind, holiday }) => [date, kind, holiday])).toEqual([
      ['2026-12-24', 'special', null],
      ['2026-12-25', 'holiday', 'Christmas Day'],
    ]);
    expect(page.closure).toEqual({ from: '2027-01-04', until: '2027-01-10' });
    expect(page.changesAt).toBe(Date.parse('2026-12-18T18:00:00-05:00'));
    expect(page.daysChangeAt).toBe(Date.parse('2026-12-19T00:00:00-05:00'));
    expect(storePage(snapshot, 0, Date.parse('2027-01-11T12:00:00-05:00')).closure).toBeNull();
  });

  it('writes the JSON without the details a store lacks', async () => {
    const snapshot = await buildSnapshot(1, [[store('A', 'A')]]);
    const json = JSON.parse(storePageJson(storePage(snapshot, 0, FRIDAY_NOON))) as object;
    expect(Object.keys(json)).toEqual([
      ...['name', 'address', 'city', 'state', 'zip', 'business_hours', 'lat', 'lng'],
      ...['code', 'time_zone', 'special_days', 'temporarily_closed', 'open', 'next_change', 'hours_today'],
    ]);
  });

  it('writes the details a store has after its zone: phone, website, email, services', async () => {
    const snapshot = await buildSnapshot(1, [[store('A', 'A')]]);
    const details = { phone: '+12125550142', website: 'https://example.com/a', email: 'a@example.com', services: [{ slug: 'repotting', label: 'Repotting' }] };
    const json = JSON.parse(storePageJson({ ...storePage(snapshot, 0, FRIDAY_NOON), details })) as Record<string, unknown>;
    expect(Object.keys(json).slice(8, 14)).toEqual(['code', 'time_zone', 'phone', 'website', 'email', 'services']);
    expect(json).toMatchObject(details);
  });
});

describe('ETag, If-None-Match and Cache-Control', () => {
  const tag = entityTag('{"a":1}');

  it('tags the bytes: the same body the same tag, another body another', () => {
    expect(tag).toMatch(/^"[\w-]{43}"$/);
    expect(entityTag('{"a":1}')).toBe(tag);
    expect(entityTag('{"a":2}')).not.toBe(tag);
  });

  it.each([
    [tag, true],
    [`W/${tag}`, true],
    [`"x", W/"y", ${tag}`, true],
    ['*', true],
    [' * ', true],
    ['"x"', false],
    [tag.slice(1, -1), false],
  ])('If-None-Match %s matches: %s', (header, matches) => {
    expect(noneMatch(header, tag)).toBe(matches);
  });

  it('keeps a page at most 60 s, and never past its next change', () => {
    expect(pageCacheControl(FRIDAY_NOON + 3_600_000, FRIDAY_NOON)).toBe('private, max-age=60, must-revalidate');
    expect(pageCacheControl(FRIDAY_NOON + 29_999, FRIDAY_NOON)).toBe('private, max-age=29, must-revalidate');
    expect(pageCacheControl(FRIDAY_NOON + 500, FRIDAY_NOON)).toBe('private, max-age=0, must-revalidate');
    expect(pageCacheControl(Infinity, FRIDAY_NOON)).toBe('private, max-age=60, must-revalidate');
  });
});
