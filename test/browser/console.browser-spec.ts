/// <reference lib="dom" />
// page.evaluate runs its callbacks in the page: the DOM types are the page's.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { components } from '../../clients/typescript/schema.js';
import { STORE_CSV_REQUIRED_COLUMNS } from '../../src/stores/store-csv.js';
import { runCli } from '../support/cli.js';
import { FakeRouters } from '../support/fake-routers.js';
import { FakeGeocoders } from '../support/fake-geocoders.js';
import { queryDatabase } from '../support/schema.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestDatabase, engine, type TestDatabase } from '../support/test-app.js';

/** Debian's Chromium (apt-get install chromium); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DEMO_STORES = fileURLToPath(new URL('../../assets/demo-stores.csv', import.meta.url));
/** Kept by CI (.ci/run): a screenshot of each view, per engine. */
const SHOTS = fileURLToPath(new URL(`../../artifacts/console/${engine}/`, import.meta.url));
const TOKEN_KEY = 'plant-store-console.token';

type Location = components['schemas']['Location'];

/**
 * The operator's console in a real browser, on the engine under test: a fresh service
 * with the demo store list imported by the command line, an admin token and a team token. Every
 * step is checked against the admin API or the database, never against the console's own idea.
 * The console must load nothing from elsewhere, break no CSP rule, throw nothing, and never put
 * the token in a URL, a log line or localStorage.
 */
describe(`the console at /console, in Chromium (${engine})`, () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let admin: string;
  let team: string;
  let files: string;
  /** The service geocodes street addresses through a local stand-in of the Census Geocoder. */
  let geocoder: FakeGeocoders;
  /** And asks a local stand-in of an OSRM server for drive times. */
  let routers: FakeRouters;
  const outside: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  const urls: string[] = [];

  const query = async <T>(sql: string) => (await queryDatabase(database.env, [sql]))[0] as T[];
  const storeCount = async () => Number((await query<{ n: number | string }>('SELECT COUNT(*) AS n FROM stores'))[0].n);
  const catalogVersion = async () => Number((await query<{ version: number | string }>('SELECT version FROM store_catalog WHERE id = 1'))[0].version);

  /** The admin API, as a curl user would call it. */
  async function call<T>(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (response.status === 204 ? undefined : await response.json()) as T };
  }

  /** 0 serious or critical accessibility violations on what the page shows now. */
  async function expectAccessible(view: string, on = page): Promise<void> {
    const results = await new AxeBuilder({ page: on }).analyze();
    const serious = results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${view}: ${v.id} (${v.nodes.length}): ${v.help}`);
    expect(serious).toEqual([]);
  }

  const shot = (name: string, on = page) => on.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** A store's dot, found by its colour on the canvas as a person finds it by eye: the first in reading order, in CSS pixels. */
  const firstDot = (on: Page) =>
    on.evaluate(() => {
      const canvas = document.querySelector<HTMLCanvasElement>('#store-map')!;
      const context = canvas.getContext('2d')!;
      const { data, width } = context.getImageData(0, 0, canvas.width, canvas.height);
      const ratio = canvas.width / canvas.clientWidth;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i] === 0x1f && data[i + 1] === 0x6f && data[i + 2] === 0x43)
          return { x: ((i / 4) % width) / ratio + 0.5, y: Math.floor(i / 4 / width) / ratio + 0.5 };
      }
      return undefined;
    });
  /**
   * The console in a page of its own, signed in, its clock starting at `time`: `open` loads it and
   * picks the first store's dot on the map, whose card then shows; `pick` clicks that dot again (the
   * page may have scrolled down to a form meanwhile).
   */
  async function clockedConsole(time: string) {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.addInitScript(([key, value]) => sessionStorage.setItem(key, value), [TOKEN_KEY, admin]);
    await context.clock.install({ time: new Date(time) });
    const clocked = await context.newPage();
    const errors: string[] = [];
    clocked.on('pageerror', (error) => errors.push(error.message));
    const map = clocked.locator('#store-map');
    const card = clocked.locator('.map-panel > .store-card');
    let dot: { x: number; y: number } | undefined;
    const pick = async () => {
      await map.scrollIntoViewIfNeeded();
      const box = (await map.boundingBox())!;
      await clocked.mouse.click(box.x + dot!.x, box.y + dot!.y);
    };
    const open = async () => {
      await clocked.goto(`${server.url}/console`);
      await clocked.waitForFunction((count) => document.querySelector<HTMLCanvasElement>('#store-map')?.dataset.drawn === String(count), await storeCount());
      dot = await firstDot(clocked);
      expect(dot).toBeDefined();
      await pick();
      await card.waitFor();
    };
    return { context, clocked, errors, card, pick, open };
  }
  const drawn = async () => Number(await page.locator('#store-map').getAttribute('data-drawn'));
  const tab = (name: string) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name, exact: true }).click();

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    files = mkdtempSync(join(tmpdir(), 'plant-store-console-'));
    database = await createTestDatabase();
    // The same start on both engines: the demo list through the command line (the demo seed is SQLite-only).
    expect((await runCli(database, ['locations', 'import', DEMO_STORES])).code).toBe(0);
    const issued = await runCli(database, ['tokens', 'create', '--team', 'ops', '--scope', 'admin']);
    admin = issued.stdout.trim();
    team = (await runCli(database, ['tokens', 'create', '--team', 'acme'])).stdout.trim();
    expect(admin).toMatch(/^pst_/);
    expect(team).toMatch(/^pst_/);
    geocoder = await new FakeGeocoders().start();
    routers = await new FakeRouters().start();
    server = await startServer(database, { DEMO_SEED: 'false', GEOCODER: 'census', GEOCODER_URL: geocoder.url, ROUTER: 'osrm', ROUTER_URL: routers.url });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    // A context of its own: axe needs one (it cannot analyse a page of browser.newPage()).
    page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
    page.on('request', (request) => {
      urls.push(request.url());
      if (!request.url().startsWith(`${server.url}/`) && !request.url().startsWith('data:') && !request.url().startsWith('blob:')) outside.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // Chromium reports a CSP violation on the console (there is no other way to see it from outside).
    page.on('console', (message) => /Content Security Policy/i.test(message.text()) && cspViolations.push(message.text()));
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await geocoder?.stop();
    await routers?.stop();
    await database?.drop();
    if (files) rmSync(files, { recursive: true, force: true });
  });

  it('is served under the same headers as the API docs, and refuses a team token with the API’s 403 text', async () => {
    const consolePage = await fetch(`${server.url}/console`);
    const docsPage = await fetch(`${server.url}/docs`);
    expect(consolePage.status).toBe(200);
    expect(consolePage.headers.get('content-security-policy')).toBe(docsPage.headers.get('content-security-policy'));
    expect(consolePage.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(consolePage.headers.get('cache-control')).toBe('no-store');
    expect(await consolePage.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);

    await page.goto(`${server.url}/console`);
    await page.getByLabel('Admin token').waitFor();
    await expectAccessible('sign-in');
    await shot('sign-in');
    const refusal = await call<{ message: string }>('GET', '/admin/status', team);
    expect(refusal.status).toBe(403);
    await page.getByLabel('Admin token').fill(team);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toBe(refusal.body.message);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });

  it('signs in with an admin token and draws every store of the API on the map', async () => {
    await page.getByLabel('Admin token').fill(admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.status [data-ready="true"], .status[data-ready="true"]').waitFor();
    const stores = await storeCount();
    expect(stores).toBeGreaterThan(300);
    await page.waitForFunction((count) => document.querySelector<HTMLCanvasElement>('#store-map')?.dataset.drawn === String(count), stores);
    expect(await drawn()).toBe(stores);
    expect(await page.locator('#store-map').getAttribute('data-off-map')).toBe('0');
    await expect(page.locator('.status').innerText()).resolves.toContain(`${stores} stores`);
    // The token is this tab's only: sessionStorage, never localStorage.
    expect(await page.evaluate(() => ({ local: localStorage.length, session: Object.values(sessionStorage) }))).toEqual({ local: 0, session: [admin] });
  });

  it('shows a dot’s store when pointed at', async () => {
    const dot = await firstDot(page);
    expect(dot).toBeDefined();
    const box = (await page.locator('#store-map').boundingBox())!;
    await page.mouse.move(box.x + dot!.x, box.y + dot!.y);
    const tooltip = page.locator('.tooltip');
    await tooltip.waitFor();
    const code = (await tooltip.locator('small').innerText()).trim();
    const { body: store } = await call<{ name: string; address: string; monday: string }>('GET', `/admin/stores/${encodeURIComponent(code)}`, admin);
    const text = await tooltip.innerText();
    expect(text).toContain(store.name);
    expect(text).toContain(store.address);
    expect(text).toContain(store.monday);
  });

  it('says in a picked store’s card whether it is open and until when, on the clock of the time zone the edit form sets', async () => {
    // A page of its own, whose clock the test sets: Wednesday 2026-03-11, 15:30 UTC. From there
    // the page's time runs on as usual, until the test moves it forward.
    const { context, clocked, errors, card, pick, open } = await clockedConsole('2026-03-11T15:30:00Z');
    try {
      await open();
      const code = (await card.locator('h3 small').innerText()).trim();
      const path = `/admin/stores/${encodeURIComponent(code)}`;
      const { body: before } = await call<Record<string, string>>('GET', path, admin);
      // The zone the API has for the store: the demo list names none, so the one at its coordinates.
      expect(before.time_zone).toMatch(/^America\//);
      expect(before.time_zone).not.toBe('America/Phoenix');
      await expect(card.locator('.opening .zone').innerText()).resolves.toBe(`Time zone: ${before.time_zone}`);

      // Known hours and another zone through the edit form; an unknown zone first, refused next to its field.
      await card.getByRole('button', { name: `Edit ${code}` }).click();
      const form = clocked.getByRole('form', { name: `Edit store ${code}` });
      const zone = form.getByLabel('time_zone', { exact: true });
      expect(await zone.inputValue()).toBe(before.time_zone);
      await expect(form.locator('#store-time_zone-hint').innerText()).resolves.toBe('IANA name, e.g. America/Denver. Empty: from the coordinates.');
      const hours = {
        monday: '9:00 AM - 6:00 PM',
        tuesday: '9:00 AM - 6:00 PM',
        wednesday: '9:00 AM - 6:00 PM',
        thursday: '9:00 AM - 6:00 PM',
        friday: '9:00 AM - 6:00 PM',
        saturday: '10:00 AM - 4:00 PM',
        sunday: 'Closed',
      };
      for (const [day, text] of Object.entries(hours)) await form.getByLabel(day, { exact: true }).fill(text);
      await zone.fill('Mars/Olympus_Mons');
      await form.getByRole('button', { name: 'Save' }).click();
      const refusal = await call<{ message: string }>('PUT', path, admin, {
        ...before,
        code: undefined,
        updated_at: undefined,
        ...hours,
        time_zone: 'Mars/Olympus_Mons',
      });
      expect(refusal.status).toBe(400);
      await expect(form.locator('#store-time_zone-error').innerText()).resolves.toBe(refusal.body.message);
      expect((await call<Record<string, string>>('GET', path, admin)).body).toEqual(before);
      let version = await catalogVersion();
      // Phoenix keeps MST (UTC-7) all year: at 15:30 UTC it is 8:30 AM there, while the
      // mountain zones that keep daylight saving are past 9:30.
      await zone.fill('America/Phoenix');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.waitFor({ state: 'detached' });
      const { body: after } = await call<Record<string, string>>('GET', path, admin);
      expect({ ...after, updated_at: undefined }).toEqual({ ...before, updated_at: undefined, ...hours, time_zone: 'America/Phoenix' });
      // The console has the new catalogue (its status strip says the version) before the store is picked again.
      await clocked
        .locator('.status')
        .getByText(`catalogue version ${version + 1}`)
        .waitFor();

      await pick();
      const opening = card.locator('.opening');
      await card.getByText('Time zone: America/Phoenix').waitFor();
      await expect(opening.innerText()).resolves.toBe('Closed · opens 9:00 AM\nTime zone: America/Phoenix');
      // The search says the same of that moment.
      const search = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
        customer_address: { zip: after.zip },
        max_distance: 50,
        limit: 200,
        open_at: '2026-03-11T15:30:00Z',
      });
      expect(search.body.locations.find((l) => l.lat === after.lat && l.lng === after.lng && l.name === after.name)).toMatchObject({
        open: false,
        time_zone: 'America/Phoenix',
        next_change: '2026-03-11T09:00:00-07:00',
      });

      // The card follows the clock without being picked again: 9:30 AM, 6:30 PM, then Saturday
      // 5:00 PM (closed on Sunday, so Monday morning).
      await context.clock.fastForward('01:00:00');
      await card.getByText('Open now · closes 6:00 PM').waitFor();
      await expectAccessible('stores (a store picked)', clocked);
      await shot('store-picked', clocked);
      await context.clock.fastForward('09:00:00');
      await card.getByText('Closed · opens Thu 9:00 AM').waitFor();
      await context.clock.fastForward(69.5 * 3_600_000);
      await card.getByText('Closed · opens Mon 9:00 AM').waitFor();

      // The zone emptied in the form: the one at the coordinates again.
      version = await catalogVersion();
      await card.getByRole('button', { name: `Edit ${code}` }).click();
      await zone.fill('');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.waitFor({ state: 'detached' });
      expect((await call<Record<string, string>>('GET', path, admin)).body.time_zone).toBe(before.time_zone);
      await clocked
        .locator('.status')
        .getByText(`catalogue version ${version + 1}`)
        .waitFor();
      await pick();
      await card.getByText(`Time zone: ${before.time_zone}`).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a store’s phone, website and email on its card as links, and its edit form saves a phone as the API keeps it', async () => {
    const { context, clocked, errors, card, pick, open } = await clockedConsole('2026-03-11T15:30:00Z');
    let restore: (() => Promise<unknown>) | undefined;
    try {
      await open();
      const code = (await card.locator('h3 small').innerText()).trim();
      const path = `/admin/stores/${encodeURIComponent(code)}`;
      const { body: before } = await call<Record<string, unknown>>('GET', path, admin);
      expect(before).toMatchObject({ phone: null, website: null, email: null });
      const { code: _code, updated_at: _updated, ...fields } = before;
      restore = () => call('PUT', path, admin, fields);
      expect(await card.locator('.contact').count()).toBe(0);

      let version = await catalogVersion();
      const written = await call('PUT', path, admin, {
        ...fields,
        phone: '212-555-0142',
        website: 'https://fern.example/store?x=1',
        email: 'ask?cc=x@fern.example',
      });
      expect(written.status).toBe(200);
      await clocked
        .locator('.status')
        .getByText(`catalogue version ${version + 1}`)
        .waitFor();
      await pick();
      await card.locator('.contact').waitFor();
      await expect(card.getByRole('link', { name: '(212) 555-0142' }).getAttribute('href')).resolves.toBe('tel:+12125550142');
      const website = card.getByRole('link', { name: 'https://fern.example/store?x=1' });
      await expect(website.getAttribute('href')).resolves.toBe('https://fern.example/store?x=1');
      await expect(website.getAttribute('rel')).resolves.toBe('noopener noreferrer');
      await expect(website.getAttribute('target')).resolves.toBe('_blank');
      // The `?` of the address's local part is encoded: it must not start the mailto's headers.
      await expect(card.getByRole('link', { name: 'ask?cc=x@fern.example' }).getAttribute('href')).resolves.toBe('mailto:ask%3Fcc%3Dx@fern.example');
      await expectAccessible('stores (a store with contact fields)', clocked);

      // The edit form: a refused phone next to its field and nothing written, then one written as people write it.
      await card.getByRole('button', { name: `Edit ${code}` }).click();
      const form = clocked.getByRole('form', { name: `Edit store ${code}` });
      const phone = form.getByLabel('phone', { exact: true });
      expect(await phone.inputValue()).toBe('+12125550142');
      version = await catalogVersion();
      await phone.fill('1-800-FLOWERS');
      await form.getByRole('button', { name: 'Save' }).click();
      await expect(form.locator('#store-phone-error').innerText()).resolves.toBe(
        'phone: "1-800-FLOWERS" is not a US phone number like (913) 555-0142 or +1 913 555 0142',
      );
      expect(await query(`SELECT phone FROM stores WHERE code = '${code}'`)).toEqual([{ phone: '+12125550142' }]);
      expect(await catalogVersion()).toBe(version);
      await phone.fill('(913) 555-0199');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.waitFor({ state: 'detached' });
      expect(await query(`SELECT phone, website, email FROM stores WHERE code = '${code}'`)).toEqual([
        { phone: '+19135550199', website: 'https://fern.example/store?x=1', email: 'ask?cc=x@fern.example' },
      ]);
      expect(await catalogVersion()).toBe(version + 1);
      await clocked
        .locator('.status')
        .getByText(`catalogue version ${version + 1}`)
        .waitFor();
      await pick();
      await expect(card.getByRole('link', { name: '(913) 555-0199' }).getAttribute('href')).resolves.toBe('tel:+19135550199');

      // A value written into the table by hand, past the API's checks, is shown as text, never as a link.
      await query(`UPDATE stores SET website = 'javascript:alert(1)' WHERE code = '${code}'`);
      await open();
      await card.locator('.contact').getByText('javascript:alert(1)').waitFor();
      expect(await card.locator('.contact a[href^="javascript"]').count()).toBe(0);
      expect(await card.getByRole('link', { name: 'javascript:alert(1)' }).count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await restore?.();
      await context.close();
    }
  });

  it('lists a store’s temporary closure and special days on its card, and its opening words follow them as the search does', async () => {
    // Thursday 2026-12-24, 10:30 AM in New York; the store's own short day, then a closure in January.
    const { context, clocked, errors, card, pick, open } = await clockedConsole('2026-12-24T15:30:00Z');
    let restore: (() => Promise<unknown>) | undefined;
    try {
      await open();
      const code = (await card.locator('h3 small').innerText()).trim();
      const path = `/admin/stores/${encodeURIComponent(code)}`;
      const { body: before } = await call<Record<string, unknown>>('GET', path, admin);
      const { code: _code, updated_at: _updated, ...fields } = before;
      restore = () => Promise.all([call('PUT', path, admin, fields), call('DELETE', '/admin/holidays/2026-12-26', admin)]);
      expect(await card.locator('.special-days').count()).toBe(0);

      const version = await catalogVersion();
      const week = Object.fromEntries(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((day) => [day, '9:00 AM - 6:00 PM']));
      const written = await call('PUT', path, admin, {
        ...fields,
        ...week,
        time_zone: 'America/New_York',
        special_hours: [
          { date: '2026-12-25', hours: 'Closed' },
          { date: '2026-12-24', hours: '9:00 AM - 2:00 PM' },
        ],
        temporarily_closed: { from: '2027-01-04', until: '2027-01-31' },
      });
      expect(written.status).toBe(200);
      await clocked
        .locator('.status')
        .getByText(`catalogue version ${version + 1}`)
        .waitFor();
      await pick();
      await card.getByText('Time zone: America/New_York').waitFor();
      await expect(card.locator('.special-days .closure').innerText()).resolves.toBe('Temporarily closed from 2027-01-04 until 2027-01-31');
      await expect(card.locator('dl[aria-label="Special days"] dt').allInnerTexts()).resolves.toEqual(['2026-12-24', '2026-12-25']);
      await expect(card.locator('dl[aria-label="Special days"] dd').allInnerTexts()).resolves.toEqual(['9:00 AM - 2:00 PM', 'Closed']);
      await expectAccessible('stores (a store with special days)', clocked);
      await shot('store-special-days', clocked);

      /** The card's opening words and the search's answer for this store at the same instant. */
      const both = async (at: string) => {
        const search = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
          customer_address: { zip: before.zip },
          max_distance: 50,
          limit: 200,
          open_at: at,
        });
        const location = search.body.locations.find((l) => l.lat === before.lat && l.lng === before.lng && l.name === before.name);
        return { words: (await card.locator('.opening').innerText()).split('\n')[0], location };
      };
      // The short day: open until 2 PM, not the weekday's 6 PM.
      await expect(both('2026-12-24T15:30:00Z')).resolves.toMatchObject({
        words: 'Open now · closes 2:00 PM',
        location: {
          open: true,
          next_change: '2026-12-24T14:00:00-05:00',
          hours_today: { date: '2026-12-24', hours: '9:00 AM - 2:00 PM', kind: 'special', holiday: null },
        },
      });
      // 2:30 PM: closed, and closed all Christmas Day, so Saturday morning.
      await context.clock.fastForward('04:00:00');
      await card.getByText('Closed · opens Sat 9:00 AM').waitFor();
      await expect(both('2026-12-24T19:30:00Z')).resolves.toMatchObject({ location: { open: false, next_change: '2026-12-26T09:00:00-05:00' } });
      // A holiday of the chain for the store's state closes Saturday too: Sunday morning, in the card and the search.
      const holiday = await call('PUT', '/admin/holidays/2026-12-26', admin, { name: 'Boxing Day', hours: 'Closed', states: [before.state] });
      expect(holiday.status).toBe(201);
      await card.getByText('Closed · opens Sun 9:00 AM').waitFor();
      await expect(both('2026-12-24T19:30:00Z')).resolves.toMatchObject({ location: { open: false, next_change: '2026-12-27T09:00:00-05:00' } });
      expect((await call('DELETE', '/admin/holidays/2026-12-26', admin)).status).toBe(204);
      await card.getByText('Closed · opens Sat 9:00 AM').waitFor();
      // Tuesday 2027-01-05, in the closure: it opens again the Monday after it ends, given by date.
      await context.clock.fastForward((11 * 24 + 20) * 3_600_000);
      await card.getByText('Closed · opens 2027-02-01 9:00 AM').waitFor();
      await expect(both('2027-01-05T15:30:00Z')).resolves.toMatchObject({
        location: {
          open: false,
          next_change: '2027-02-01T09:00:00-05:00',
          hours_today: { date: '2027-01-05', hours: 'Closed', kind: 'temporarily_closed', holiday: null },
        },
      });
      expect(errors).toEqual([]);
    } finally {
      await restore?.();
      await context.close();
    }
  });

  it('answers "where would a customer land" exactly as POST /locations/nearest does', async () => {
    // A bad distance: the API's own 400 text, not a search with a default.
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('Distance (miles)').fill('far');
    await page.getByRole('button', { name: 'Search' }).click();
    const refusal = await call<{ message: string }>('POST', '/admin/locations/nearest', admin, {
      customer_address: { zip: '10001' },
      max_distance: 'far',
      limit: 200,
    });
    expect(refusal.status).toBe(400);
    await expect(page.locator('.search [role="alert"]').innerText()).resolves.toBe(refusal.body.message);
    await page.getByLabel('Distance (miles)').fill('8');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.results li').first().waitFor();
    const customer = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10001' },
      max_distance: 8,
      limit: 200,
    });
    expect(customer.status).toBe(200);
    expect(customer.body.locations.length).toBeGreaterThan(5);
    const shown = await page.locator('.results li').allInnerTexts();
    expect(shown).toEqual(customer.body.locations.map((l) => `${l.distance} mi ${l.name}, ${l.address}, ${l.city}, ${l.state} ${l.zip}`));
    await expectAccessible('stores');
    await shot('stores');
  });

  it('offers kilometres, the nearest store when none is in range, and every store of a state or city, as POST /locations/nearest answers them', async () => {
    const lines = (locations: Location[], unit: string) =>
      locations.map((l) => `${l.distance} ${unit} ${l.name}, ${l.address}, ${l.city}, ${l.state} ${l.zip}`);
    const shown = async (scope: string, expected: string[]) => {
      await page.waitForFunction(
        ([scope, first, count]) =>
          document.querySelector(`.search [data-scope="${scope}"]`) !== null &&
          document.querySelectorAll('.results li').length === count &&
          document.querySelector('.results li')?.textContent === first,
        [scope, expected[0], expected.length] as const,
      );
      expect(await page.locator('.results li').allInnerTexts()).toEqual(expected);
    };
    const search = page.getByRole('button', { name: 'Search' });

    // Kilometres: the distance field says so, and each distance is the API's in km.
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('Unit').selectOption('km');
    await page.getByLabel('Distance (km)').fill('8');
    await search.click();
    const km = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10001' },
      max_distance: 8,
      limit: 200,
      distance_unit: 'km',
    });
    expect(km.body.locations.length).toBeGreaterThan(5);
    await shown('radius', lines(km.body.locations, 'km'));

    // Nothing within 5 km of Absarokee, Montana: the nearest store, 58 miles away.
    await page.getByLabel('ZIP code').fill('59001');
    await page.getByLabel('Distance (km)').fill('5');
    await page.getByLabel('Nearest store if none in range').check();
    await search.click();
    const nearest = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '59001' },
      max_distance: 5,
      nearest_if_none: true,
      limit: 200,
      distance_unit: 'km',
    });
    expect(nearest.body.locations).toHaveLength(1);
    await shown('nearest', lines(nearest.body.locations, 'km'));
    await expect(page.locator('.search [role="status"]').innerText()).resolves.toBe('No store within reach; the nearest one:');

    // A city of a state, in miles: every store of it, nearest first from the ZIP code's point, no circle.
    await page.getByLabel('Unit').selectOption('mi');
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('Or every store of a state (two letters)').fill('ny');
    await page.getByLabel('and of its city').fill(' new york ');
    await search.click();
    const region = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10001' },
      region: { state: 'ny', city: ' new york ' },
      limit: 200,
    });
    expect(region.body.locations.length).toBeGreaterThan(5);
    expect(new Set(region.body.locations.map((l) => `${l.city}, ${l.state}`))).toEqual(new Set(['New York, NY']));
    await shown('region', lines(region.body.locations, 'mi'));
    await expect(page.locator('.search [role="status"]').innerText()).resolves.toBe(`${region.body.locations.length} stores in new york, NY, nearest first:`);
    await expectAccessible('stores (region search)');

    // Back to a plain search for the tests that follow.
    await page.getByLabel('Or every store of a state (two letters)').fill('');
    await page.getByLabel('and of its city').fill('');
    await page.getByLabel('Nearest store if none in range').uncheck();
    await page.getByLabel('Distance (miles)').fill('5');
  });

  it('orders by drive time when asked, with the engine’s times, and says when there are none, as POST /locations/nearest answers', async () => {
    const lines = (locations: Location[]) =>
      locations.map(
        (l) =>
          `${l.distance} mi ${l.travel_time == null ? 'no drive time' : `${l.travel_time} min, ${l.travel_distance} mi by road`} ${l.name}, ${l.address}, ${l.city}, ${l.state} ${l.zip}`,
      );
    const shown = async (expected: string[]) => {
      await page.waitForFunction(
        ([first, count]) => document.querySelectorAll('.results li').length === count && document.querySelector('.results li')?.textContent === first,
        [expected[0], expected.length] as const,
      );
      expect(await page.locator('.results li').allInnerTexts()).toEqual(expected);
    };
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('Distance (miles)').fill('2');
    await page.getByLabel('By drive time').check();
    await page.getByLabel('within (minutes)').fill('4');
    await page.getByRole('button', { name: 'Search' }).click();
    const driving = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10001' },
      max_distance: 2,
      limit: 200,
      travel_mode: 'driving',
      max_travel_time: 4,
    });
    expect(driving.body.locations.length).toBeGreaterThan(2);
    expect(driving.body.locations.every((l) => (l.travel_time ?? Infinity) <= 4)).toBe(true);
    await page.locator('.search [data-travel="osrm"]').waitFor();
    await expect(page.locator('.search [data-travel]').innerText()).resolves.toBe('By drive time, from the OSRM server.');
    await shown(lines(driving.body.locations));

    // The engine refusing (from another place: this one's times are kept): the straight-line order, and the console says so.
    routers.behaviour = 'status:503';
    await page.getByLabel('ZIP code').fill('10002');
    await page.getByLabel('Distance (miles)').fill('1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.search [data-travel="straight-line"]').waitFor();
    const straight = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10002' },
      max_distance: 1,
      limit: 200,
    });
    await shown(lines(straight.body.locations.map((l) => ({ ...l, travel_time: null, travel_distance: null }))));
    await expectAccessible('stores (drive-time search)');

    routers.behaviour = 'ok';
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('within (minutes)').fill('');
    await page.getByLabel('By drive time').uncheck();
    await page.getByLabel('Distance (miles)').fill('5');
  });

  it('measures from a street address the service geocodes, and draws that point beside the ZIP code’s', async () => {
    const empire = { lat: 40.748441, lng: -73.985664 };
    geocoder.behaviours.set('350 5th Ave', { kind: 'match', ...empire, zip: '10001', state: 'NY' });
    await page.getByLabel('Street address').fill('350 5th Ave');
    await page.getByLabel('Distance (miles)').fill('2');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('[data-position="address"]').waitFor();
    const customer = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { address: '350 5th Ave', zip: '10001' },
      max_distance: 2,
      limit: 200,
    });
    const zipOnly = await call<{ locations: Location[] }>('POST', '/locations/nearest', team, {
      customer_address: { zip: '10001' },
      max_distance: 2,
      limit: 200,
    });
    expect(customer.body.locations).not.toEqual(zipOnly.body.locations);
    await page.waitForFunction((count) => document.querySelectorAll('.results li').length === count, customer.body.locations.length);
    expect(await page.locator('.results li').allInnerTexts()).toEqual(
      customer.body.locations.map((l) => `${l.distance} mi ${l.name}, ${l.address}, ${l.city}, ${l.state} ${l.zip}`),
    );
    const zip = await call<{ lat: number; lng: number }>('GET', '/admin/zips/10001', admin);
    expect(await page.locator('#store-map').getAttribute('data-customer')).toBe(`${empire.lat},${empire.lng}`);
    expect(await page.locator('#store-map').getAttribute('data-zip-point')).toBe(`${zip.body.lat},${zip.body.lng}`);
    await expect(page.locator('[data-position="address"]').innerText()).resolves.toContain(
      'Measured from the street address, as the geocoder placed it (40.748441, -73.985664)',
    );
    await expectAccessible('stores (address search)');
    await shot('stores-address');

    // A street the geocoder does not know: the ZIP code's point, and the reason in words.
    await page.getByLabel('Street address').fill('1 Nowhere Rd');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('[data-position="zip"]').waitFor();
    await expect(page.locator('[data-position="zip"]').innerText()).resolves.toContain("Measured from the ZIP code's point");
    await expect(page.locator('[data-position="zip"]').innerText()).resolves.toContain('the geocoder found no street-level match');
    expect(await page.locator('#store-map').getAttribute('data-customer')).toBe(`${zip.body.lat},${zip.body.lng}`);
    await page.getByLabel('Street address').fill('');
  });

  it('filters the table by state and text as GET /admin/stores does', async () => {
    await page.getByLabel('State', { exact: true }).selectOption('NJ');
    await page.getByLabel('Text', { exact: true }).fill('hoboken');
    const { body: expected } = await call<Array<{ code: string }>>('GET', '/admin/stores?limit=25&state=NJ&q=hoboken', admin);
    expect(expected.length).toBeGreaterThan(0);
    await page.waitForFunction((count) => document.querySelectorAll('.table-panel tbody tr').length === count, expected.length);
    const codes = await page.locator('.table-panel tbody tr td:first-child').allInnerTexts();
    expect(codes).toEqual(expected.map((s) => s.code));
  });

  it('edits a store, with the API’s 400 text next to the field and nothing written', async () => {
    const code = (await page.locator('.table-panel tbody tr td:first-child').first().innerText()).trim();
    const before = await query<{ name: string; state: string }>(`SELECT name, state FROM stores WHERE code = '${code}'`);
    const version = await catalogVersion();
    await page
      .getByRole('button', { name: `Edit ${code}` })
      .first()
      .click();
    const form = page.getByRole('form', { name: `Edit store ${code}` });
    await form.getByLabel('state', { exact: true }).fill('XX');
    await form.getByRole('button', { name: 'Save' }).click();
    const refusal = await call<{ message: string }>('PUT', `/admin/stores/${code}`, admin, {
      ...(await call<Record<string, string>>('GET', `/admin/stores/${code}`, admin)).body,
      code: undefined,
      updated_at: undefined,
      state: 'XX',
    });
    expect(refusal.status).toBe(400);
    await expect(form.locator('#store-state-error').innerText()).resolves.toBe(refusal.body.message);
    expect(await query(`SELECT name, state FROM stores WHERE code = '${code}'`)).toEqual(before);
    expect(await catalogVersion()).toBe(version);

    await form.getByLabel('state', { exact: true }).fill(before[0].state);
    await form.getByLabel('name', { exact: true }).fill('Renamed by the console');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    expect(await query(`SELECT name, state FROM stores WHERE code = '${code}'`)).toEqual([{ name: 'Renamed by the console', state: before[0].state }]);
    expect(await catalogVersion()).toBe(version + 1);

    // Coordinates 2,400 miles from the ZIP code: written all the same, the warning at its field.
    const { body: stored } = await call<Record<string, unknown>>('GET', `/admin/stores/${code}`, admin);
    await page
      .getByRole('button', { name: `Edit ${code}` })
      .first()
      .click();
    await form.getByLabel('lat', { exact: true }).fill('34.050000');
    await form.getByLabel('lng', { exact: true }).fill('-118.240000');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('status').getByText('Saved, with warnings').waitFor();
    await expect(form.locator('#store-lat-warning').innerText()).resolves.toBe(`lat: is more than 100 miles from ZIP ${String(stored.zip).slice(0, 5)}`);
    await expect(form.getByLabel('lat', { exact: true }).getAttribute('aria-describedby')).resolves.toBe('store-lat-warning');
    const [moved] = await query<{ lat: number | string; lng: number | string }>(`SELECT lat, lng FROM stores WHERE code = '${code}'`);
    expect([Number(moved.lat), Number(moved.lng)]).toEqual([34.05, -118.24]);
    expect(await catalogVersion()).toBe(version + 2);
    await expectAccessible('stores (a save with a warning)');
    await form.getByRole('button', { name: 'Close' }).click();
    await form.waitFor({ state: 'detached' });
    const { code: _code, updated_at: _updated, ...fields } = stored;
    expect((await call('PUT', `/admin/stores/${code}`, admin, fields)).status).toBe(200);
  });

  it('deletes a store after a confirmation, and the map follows', async () => {
    const code = (await page.locator('.table-panel tbody tr td:first-child').first().innerText()).trim();
    const stores = await storeCount();
    await page
      .getByRole('button', { name: `Delete ${code}` })
      .first()
      .click();
    await page.waitForFunction((count) => document.querySelector<HTMLCanvasElement>('#store-map')?.dataset.drawn === String(count), stores - 1);
    expect(await storeCount()).toBe(stores - 1);
    expect(await query(`SELECT code FROM stores WHERE code = '${code}'`)).toEqual([]);
  });

  it('refuses a bad CSV with its problems (line, column, code, words) in a table and changes nothing', async () => {
    const header = STORE_CSV_REQUIRED_COLUMNS.join(',');
    const good =
      'ZZ-0001,Console Test One,1 Test Way,New York,NY,10001,40.750650,-73.997293,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,Closed,Closed';
    const bad =
      'ZZ-0002,Console Test Two,2 Test Way,Nowhere,XX,10001,40.750650,-73.997293,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,Closed,Closed';
    const file = join(files, 'bad.csv');
    writeFileSync(file, `${header}\n${good}\n${bad}\n`);
    const stores = await storeCount();
    const version = await catalogVersion();
    await tab('Import and export');
    await page.getByLabel('CSV file (or drop one here)').setInputFiles(file);
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    const lines = page.locator('table.problem-lines tbody tr');
    await lines.first().waitFor();
    expect(await lines.allInnerTexts()).toEqual([expect.stringMatching(/^3\tstate\t"XX" is not a US state or territory code$/)]);
    // The rows are the dry run's problems as data (Prefer: handling=lenient), not the 422's text read apart.
    expect(await lines.first().getAttribute('data-code')).toBe('bad_state');
    expect(await page.getByRole('button', { name: 'Apply' }).isDisabled()).toBe(true);
    expect(await storeCount()).toBe(stores);
    expect(await catalogVersion()).toBe(version);
    await expectAccessible('import (refused)');
  });

  it('imports a good CSV after a dry run, with upload progress, and the map and table follow', async () => {
    const rows = [1, 2].map(
      (n) =>
        `ZZ-000${n},Console Test ${n},${n} Test Way,Jersey City,NJ,07302,40.7${n}8000,-74.04${n}000,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,Closed,Closed`,
    );
    const file = join(files, 'good.csv');
    writeFileSync(file, `${STORE_CSV_REQUIRED_COLUMNS.join(',')}\n${rows.join('\n')}\n`);
    const stores = await storeCount();
    await page.getByLabel('CSV file (or drop one here)').setInputFiles(file);
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await page.locator('[data-count="inserted"]').waitFor();
    expect(await page.locator('[data-count="inserted"]').innerText()).toBe('2');
    expect(await page.locator('#import-progress').getAttribute('value')).toBe('100');
    expect(await storeCount()).toBe(stores);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Imported:').waitFor();
    expect(await page.locator('[data-count="inserted"]').innerText()).toBe('2');
    expect(await storeCount()).toBe(stores + 2);
    expect(await query(`SELECT code, state FROM stores WHERE code LIKE 'ZZ-%' ORDER BY code`)).toEqual([
      { code: 'ZZ-0001', state: 'NJ' },
      { code: 'ZZ-0002', state: 'NJ' },
    ]);
    await shot('import');

    await tab('Stores');
    await page.waitForFunction((count) => document.querySelector<HTMLCanvasElement>('#store-map')?.dataset.drawn === String(count), stores + 2);
    await page.getByLabel('Text', { exact: true }).fill('ZZ-');
    await page.waitForFunction(() => document.querySelectorAll('.table-panel tbody tr').length === 2);
    expect(await page.locator('.table-panel tbody tr td:first-child').allInnerTexts()).toEqual(['ZZ-0001', 'ZZ-0002']);
  });

  it('lists what a check would change, refuses an apply over a catalogue that moved, and asks for the number of a large removal', async () => {
    // The catalogue as the export gives it, with 50 stores left out (more than 10 %), one renamed and one added.
    const exported = await (await fetch(`${server.url}/admin/stores.csv`, { headers: { Authorization: `Bearer ${admin}` } })).text();
    const [header, ...rows] = exported.trimEnd().split('\n');
    const dropped = rows.filter((row) => !row.startsWith('ZZ-')).slice(-50);
    const kept = rows
      .filter((row) => !dropped.includes(row))
      .map((row) => (row.startsWith('ZZ-0001,') ? row.replace('Console Test 1', 'Console Test One') : row));
    // The export's optional columns left empty: time_zone (the zone at the store's coordinates), special_hours, temporarily_closed, phone, website, email and services (none).
    const added =
      'ZZ-0003,Console Test 3,3 Test Way,Hoboken,NJ,07030,40.743990,-74.032364,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,9:00 AM - 5:00 PM,Closed,Closed,,,,,,,';
    const file = join(files, 'next-month.csv');
    writeFileSync(file, `${header}\n${[...kept, added].join('\n')}\n`);
    const droppedCodes = dropped.map((row) => row.split(',')[0]).sort();
    const stores = await storeCount();

    await tab('Import and export');
    await page.getByLabel('CSV file (or drop one here)').setInputFiles(file);
    await page.getByLabel('Remove the stores that are not in the file').check();
    await page.getByRole('button', { name: 'Check (dry run)' }).click();
    await page.locator('table.change-list').waitFor();
    const filter = (name: string) => page.getByRole('radio', { name });
    for (const name of ['All (52)', 'Added (1)', 'Updated (1)', 'Removed (50)']) expect(await filter(name).count()).toBe(1);
    await filter('Removed (50)').check();
    const listed = page.locator('table.change-list > tbody > tr');
    expect(await listed.count()).toBe(50);
    expect((await page.locator('table.change-list > tbody > tr > td:nth-child(3)').allInnerTexts()).sort()).toEqual(droppedCodes);
    expect(
      Number((await query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM stores WHERE code IN (${droppedCodes.map((c) => `'${c}'`).join(',')})`))[0].n),
    ).toBe(50);
    await filter('Updated (1)').check();
    expect(await listed.count()).toBe(1);
    expect(await page.locator('table.field-changes tbody tr').allInnerTexts()).toEqual(['name\tConsole Test 1\tConsole Test One']);
    await filter('Added (1)').check();
    expect(await listed.allInnerTexts()).toEqual([expect.stringMatching(/^Added\t\d+\tZZ-0003\tConsole Test 3\tHoboken, NJ$/)]);
    const apply = page.getByRole('button', { name: 'Apply' });
    expect(await apply.isDisabled()).toBe(true);
    await page.getByLabel('Number of stores to remove').fill('49');
    expect(await apply.isDisabled()).toBe(true);
    await page.getByLabel('Number of stores to remove').fill('50');
    expect(await apply.isDisabled()).toBe(false);
    await expectAccessible('import (changes listed)');
    await shot('import-changes');

    // Another operator edits a store before the apply: the apply is refused and writes nothing.
    const edited = await call('PUT', '/admin/stores/ZZ-0002', admin, {
      name: 'Edited elsewhere',
      address: '2 Test Way',
      city: 'Jersey City',
      state: 'NJ',
      zip: '07302',
      lat: '40.728000',
      lng: '-74.042000',
      monday: '9:00 AM - 5:00 PM',
      tuesday: '9:00 AM - 5:00 PM',
      wednesday: '9:00 AM - 5:00 PM',
      thursday: '9:00 AM - 5:00 PM',
      friday: '9:00 AM - 5:00 PM',
      saturday: 'Closed',
      sunday: 'Closed',
    });
    expect(edited.status).toBe(200);
    const version = await catalogVersion();
    await apply.click();
    const moved = page.locator('.moved[role="alert"]');
    await moved.waitFor();
    expect(await moved.innerText()).toContain('Nothing was written: the store list changed since this file was checked.');
    expect(await storeCount()).toBe(stores);
    expect(await catalogVersion()).toBe(version);
    expect(await apply.isDisabled()).toBe(true);
    await expectAccessible('import (refused, catalogue moved)');
    await shot('import-moved');

    // Checked again, the list shows that the apply now undoes the other operator's edit; the number must be typed again.
    await page.getByRole('button', { name: 'Check again' }).click();
    await filter('Updated (2)').waitFor();
    await filter('Updated (2)').check();
    expect(await page.locator('table.field-changes tbody tr').allInnerTexts()).toEqual([
      'name\tConsole Test 1\tConsole Test One',
      'name\tEdited elsewhere\tConsole Test 2',
    ]);
    expect(await apply.isDisabled()).toBe(true);
    await page.getByLabel('Number of stores to remove').fill('50');
    await apply.click();
    await page.getByText('Imported:').waitFor();
    expect(await page.locator('[data-count="pruned"]').innerText()).toBe('50');
    expect(await storeCount()).toBe(stores - 50 + 1);
    expect(await query(`SELECT code, name FROM stores WHERE code LIKE 'ZZ-%' ORDER BY code`)).toEqual([
      { code: 'ZZ-0001', name: 'Console Test One' },
      { code: 'ZZ-0002', name: 'Console Test 2' },
      { code: 'ZZ-0003', name: 'Console Test 3' },
    ]);
  });

  it('sets and deletes a holiday of the chain, with the API’s 400 text next to the field and nothing written on a refusal', async () => {
    await tab('Holidays');
    const form = page.getByRole('form', { name: 'Set a holiday' });
    await form.getByLabel('date', { exact: true }).fill('2026-12-25');
    await form.getByLabel('name', { exact: true }).fill('Christmas Day');
    await form.getByLabel('hours', { exact: true }).fill('closed');
    await form.getByRole('button', { name: 'Save holiday' }).click();
    const refusal = await call<{ message: string }>('PUT', '/admin/holidays/2026-12-25', admin, { name: 'Christmas Day', hours: 'closed' });
    expect(refusal.status).toBe(400);
    await expect(form.locator('.field .error').first().innerText()).resolves.toBe(refusal.body.message);
    const version = await catalogVersion();
    expect(await query('SELECT date FROM holidays')).toEqual([]);

    await form.getByLabel('hours', { exact: true }).fill('Closed');
    await form.getByLabel('states', { exact: true }).fill('NY, nj');
    await form.getByRole('button', { name: 'Save holiday' }).click();
    await page.getByRole('button', { name: 'Delete 2026-12-25' }).waitFor();
    expect(await query('SELECT date, name, hours, states FROM holidays')).toEqual([
      { date: '2026-12-25', name: 'Christmas Day', hours: 'Closed', states: 'NJ,NY' },
    ]);
    // A holiday concerns every store of its states: the catalogue's version moves, and every index reloads.
    expect(await catalogVersion()).toBe(version + 1);
    await expect(page.locator('table.holidays tbody tr').first().innerText()).resolves.toMatch(/^2026-12-25\tChristmas Day\tClosed\tNJ, NY/);
    await expectAccessible('holidays');
    await shot('holidays');
    await page.getByRole('button', { name: 'Delete 2026-12-25' }).click();
    await page.getByText('No holidays.').waitFor();
    expect(await query('SELECT date FROM holidays')).toEqual([]);
    await tab('Stores');
  });

  it('issues, rotates and revokes a token, each shown once and checked through the API', async () => {
    await tab('Tokens');
    await page.getByLabel('Team', { exact: true }).first().fill('console-team');
    await page.getByLabel('Name (optional)').fill('from the console');
    await page.getByLabel('Scope').selectOption('read');
    await page.getByRole('button', { name: 'Issue' }).click();
    const shown = page.locator('#issued-token');
    await shown.waitFor();
    const issued = await shown.inputValue();
    await expect(page.locator('.shown-once').innerText()).resolves.toContain('it will not be shown again');
    expect((await call('GET', '/plants', issued)).status).toBe(200);
    const listed = await call<Array<{ id: number; team: string; scope: string; name: string }>>('GET', '/admin/tokens?team=console-team', admin);
    expect(listed.body).toEqual([expect.objectContaining({ team: 'console-team', scope: 'read', name: 'from the console' })]);
    const id = listed.body[0].id;
    await expectAccessible('tokens');
    await shot('tokens');
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: `Rotate token ${id}` }).click();
    await shown.waitFor();
    const rotated = await shown.inputValue();
    expect(rotated).not.toBe(issued);
    await expect(page.locator('.shown-once').innerText()).resolves.toContain(`It replaces token ${id}`);
    const old = await call<{ replaced_by: number | null }>('GET', `/admin/tokens/${id}`, admin);
    expect(old.body.replaced_by).toEqual(expect.any(Number));
    // The old token keeps working for the grace period; the new one works.
    expect((await call('GET', '/plants', issued)).status).toBe(200);
    expect((await call('GET', '/plants', rotated)).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();

    const replacement = old.body.replaced_by!;
    await page.getByRole('button', { name: `Revoke token ${replacement}` }).click();
    await page.locator(`tr[data-token-id="${replacement}"]`).getByText('revoked').waitFor();
    expect((await call<{ revoked_at: string | null }>('GET', `/admin/tokens/${replacement}`, admin)).body.revoked_at).toEqual(expect.any(String));
  });

  it('reaches every control by keyboard', async () => {
    for (const view of ['Stores', 'Import and export', 'Tokens']) {
      await tab(view);
      await page.waitForTimeout(300);
      const controls = await page.evaluate(() =>
        [...document.querySelectorAll<HTMLElement>('button:not([disabled]), input, select, a[href]')]
          .filter((e) => e.offsetParent !== null)
          .map((e) => e.id || e.getAttribute('aria-label') || e.textContent.trim()),
      );
      const reached = new Set<string>();
      await page.locator('body').focus();
      for (let i = 0; i < controls.length + 5; i++) {
        await page.keyboard.press('Tab');
        reached.add(
          await page.evaluate(() => {
            const e = document.activeElement as HTMLElement;
            return e.id || e.getAttribute('aria-label') || e.textContent.trim();
          }),
        );
      }
      expect({ view, missed: controls.filter((c) => !reached.has(c)) }).toEqual({ view, missed: [] });
    }
  });

  it('signs out, and never put the token in a URL, a log line or localStorage, nor broke the CSP', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length }))).toEqual({ local: 0, session: 0 });
    expect(urls.filter((url) => url.includes(admin) || url.includes(admin.slice(4, 14)))).toEqual([]);
    expect(server.output()).not.toContain(admin);
    expect(readFileSync(fileURLToPath(new URL('../../dist/console/public/index.html', import.meta.url)), 'utf8')).not.toContain('<script>');
    expect(outside).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
