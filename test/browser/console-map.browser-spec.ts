/// <reference lib="dom" />
// page.evaluate runs its callbacks in the page: the DOM types are the page's.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type Page } from 'playwright-core';
import { runCli } from '../support/cli.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestDatabase, engine, type TestDatabase } from '../support/test-app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const DEMO_STORES = fileURLToPath(new URL('../../assets/demo-stores.csv', import.meta.url));
const SHOTS = fileURLToPath(new URL(`../../artifacts/console/${engine}/`, import.meta.url));
const TOKEN_KEY = 'plant-store-console.token';

/**
 * The console's store map zooms and pans, and draws stores close together on screen as one
 * numbered cluster that comes apart as the map zooms in. With the demo stores (New York has a
 * few dozen of them within a few miles). Places are found as a person finds them: New York by
 * the search circle of ZIP 10001, clusters and dots by their colours on the canvas.
 */
describe(`the console's store map zooms and clusters, in Chromium (${engine})`, () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let stores: number;
  /** New York City (the search circle's centre), in CSS pixels of the canvas at k = 1. */
  let newYork: { x: number; y: number };
  const pageErrors: string[] = [];

  const map = () => page.locator('#store-map');
  const data = async (name: string) => (await map().getAttribute(`data-${name}`))!;
  const zoom = async () => Number(await data('zoom'));
  const box = async () => (await map().boundingBox())!;
  const tab = (name: string) => page.getByRole('navigation', { name: 'Views' }).getByRole('button', { name, exact: true }).click();
  /** Waits until the zoom drawn is between `min` and `max` (the map draws on the next animation frame). */
  const zoomWhere = (min: number, max = min) =>
    page.waitForFunction(
      ([low, high]) => {
        const k = Number(document.querySelector<HTMLElement>('#store-map')!.dataset.zoom);
        return k >= low && k <= high;
      },
      [min, max],
    );
  const view = async () => (await data('view')).split(' ').map(Number);

  /** The box of what the overlay canvas shows (the search circle and its stores), in CSS pixels. */
  const overlayBox = () =>
    page.evaluate(() => {
      const canvas = document.querySelector<HTMLCanvasElement>('.map canvas.overlay')!;
      const { data: pixels, width } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
      for (let i = 3; i < pixels.length; i += 4) {
        if (pixels[i] === 0) continue;
        const x = ((i - 3) / 4) % width;
        const y = Math.floor((i - 3) / 4 / width);
        [x0, y0, x1, y1] = [Math.min(x0, x), Math.min(y0, y), Math.max(x1, x), Math.max(y1, y)];
      }
      const ratio = canvas.width / canvas.clientWidth;
      return { x: (x0 + x1 + 1) / 2 / ratio, y: (y0 + y1 + 1) / 2 / ratio, width: (x1 - x0 + 1) / ratio };
    });

  /** The first pixel of a colour on the map canvas (a dot or a cluster), in CSS pixels, or undefined. */
  const pixelOf = (rgb: [number, number, number]) =>
    page.evaluate(([r, g, b]) => {
      const canvas = document.querySelector<HTMLCanvasElement>('#store-map')!;
      const { data: pixels, width } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      const ratio = canvas.width / canvas.clientWidth;
      for (let i = 0; i < pixels.length; i += 4) {
        if (pixels[i] === r && pixels[i + 1] === g && pixels[i + 2] === b)
          return { x: ((i / 4) % width) / ratio + 0.5, y: Math.floor(i / 4 / width) / ratio + 0.5 };
      }
      return undefined;
    }, rgb);

  async function expectAccessible(view: string): Promise<void> {
    const results = await new AxeBuilder({ page }).analyze();
    const serious = results.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${view}: ${v.id} (${v.nodes.length}): ${v.help}`);
    expect(serious).toEqual([]);
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    database = await createTestDatabase();
    expect((await runCli(database, ['locations', 'import', DEMO_STORES])).code).toBe(0);
    const admin = (await runCli(database, ['tokens', 'create', '--team', 'ops', '--scope', 'admin'])).stdout.trim();
    server = await startServer(database, { DEMO_SEED: 'false' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // Signed in already: the sign-in itself is console.browser-spec.ts's.
    await context.addInitScript(([key, value]) => sessionStorage.setItem(key, value), [TOKEN_KEY, admin]);
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${server.url}/console`);
    stores = Number((await (await fetch(`${server.url}/admin/status`, { headers: { Authorization: `Bearer ${admin}` } })).json()).stores);
    expect(stores).toBeGreaterThan(300);
    await page.waitForFunction((count) => document.querySelector<HTMLElement>('#store-map')?.dataset.drawn === String(count), stores);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
  });

  it('starts with the whole country, New York one cluster of many stores', async () => {
    expect(await zoom()).toBe(1);
    expect(Number(await data('clusters'))).toBeGreaterThan(0);
    // New York: the centre of the search circle of ZIP 10001 (1 mile: a dot at this zoom).
    await page.getByLabel('ZIP code').fill('10001');
    await page.getByLabel('Distance (miles)').fill('1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('.search [role="status"]').waitFor();
    newYork = await overlayBox();
    const { x, y } = await box();
    await page.mouse.move(x + newYork.x, y + newYork.y);
    await expect(page.locator('.tooltip').innerText()).resolves.toMatch(/^\d+ stores here: click to zoom in$/);
    const cluster = Number((await page.locator('.tooltip').innerText()).split(' ')[0]);
    expect(cluster).toBeGreaterThanOrEqual(5);
  });

  it('zooms about the cursor with the wheel: the New York cluster comes apart into stores, the search circle grows with it', async () => {
    const { x, y } = await box();
    const circleBefore = (await overlayBox()).width;
    await page.mouse.move(x + newYork.x, y + newYork.y);
    for (let step = 0; step < 8; step++) await page.mouse.wheel(0, -200);
    await zoomWhere(20, Infinity);
    // All in view is New York and around it now: many marks where there was one, most of them stores.
    const singles = Number(await data('singles'));
    const clusters = Number(await data('clusters'));
    expect(singles).toBeGreaterThanOrEqual(5);
    expect(singles + clusters).toBeGreaterThan(5);
    // Zoomed about the cursor: New York (the search circle, larger now) is still under it, to
    // the few pixels at k = 1 that finding it by the circle's box may miss by.
    const after = await overlayBox();
    expect(after.width).toBeGreaterThan(circleBefore);
    const k = await zoom();
    expect(Math.abs(after.x - newYork.x)).toBeLessThan(4 * k);
    await page.screenshot({ path: join(SHOTS, 'map-new-york.png') });

    // A dot in view is a store: pointed at, its card.
    const dot = await pixelOf([0x1f, 0x6f, 0x43]);
    expect(dot).toBeDefined();
    await page.mouse.move(x + dot!.x, y + dot!.y);
    await page.locator('.tooltip small').waitFor();
    expect((await page.locator('.tooltip small').innerText()).trim()).toMatch(/^PS-\d+$/);
  });

  it('zooms in on a cluster that is clicked', async () => {
    await page.getByRole('button', { name: 'Reset the map to the whole country' }).click();
    await zoomWhere(1);
    const cluster = await pixelOf([0x24, 0x50, 0x7a]);
    expect(cluster).toBeDefined();
    const { x, y } = await box();
    await page.mouse.click(x + cluster!.x, y + cluster!.y);
    await zoomWhere(2, Infinity);
    // The click zoomed in; it did not pick a store.
    expect(await page.locator('.store-card h3 + p').count()).toBe(0);
  });

  it('zooms and pans with the keyboard and the buttons', async () => {
    await map().focus();
    await page.keyboard.press('0');
    await zoomWhere(1);
    await page.keyboard.press('+');
    await zoomWhere(2);
    await page.keyboard.press('=');
    await zoomWhere(4);
    const before = await data('view');
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((was) => document.querySelector<HTMLElement>('#store-map')!.dataset.view !== was, before);
    await page.keyboard.press('-');
    await zoomWhere(2);
    await page.keyboard.press('Home');
    await zoomWhere(1);
    await page.getByRole('button', { name: 'Zoom in' }).click();
    await zoomWhere(2);
    // A drag moves the map by as much as the mouse, at the same zoom, and picks no store.
    const [, tx, ty] = await view();
    const { x, y } = await box();
    await page.mouse.move(x + 300, y + 200);
    await page.mouse.down();
    for (const step of [1, 2, 3, 4]) await page.mouse.move(x + 300 - 20 * step, y + 200 - 10 * step);
    await page.mouse.up();
    await page.waitForFunction((was) => document.querySelector<HTMLElement>('#store-map')!.dataset.view !== was, `2 ${tx} ${ty}`);
    const [k2, tx2, ty2] = await view();
    expect([k2, tx2 - tx, ty2 - ty]).toEqual([2, -80, -40]);
    expect(await page.locator('.store-card').count()).toBe(0);
    await page.getByRole('button', { name: 'Zoom out' }).click();
    await zoomWhere(1);
  });

  it('keeps its zoom and place when the console shows another view and comes back', async () => {
    await map().focus();
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    await page.keyboard.press('ArrowDown');
    await zoomWhere(8);
    await page.waitForTimeout(100);
    const [k, tx, ty] = await view();
    expect(ty).toBeLessThan(0);
    await expectAccessible('stores, zoomed');
    for (const other of ['Tokens', 'Import and export']) {
      await tab(other);
      await map().waitFor({ state: 'detached' });
      await tab('Stores');
      await page.waitForFunction((count) => document.querySelector<HTMLElement>('#store-map')?.dataset.drawn === String(count), stores);
      // The same zoom and place (kept as a centre in parts of the canvas: equal to rounding).
      const [k2, tx2, ty2] = await view();
      expect(k2).toBe(k);
      expect(Math.abs(tx2 - tx) + Math.abs(ty2 - ty)).toBeLessThan(0.01);
    }
    expect(pageErrors).toEqual([]);
  });
});
