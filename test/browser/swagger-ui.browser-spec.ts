import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { Plant } from '../../src/plants/plant.entity.js';
import { STORE_CSV_REQUIRED_COLUMNS } from '../../src/stores/store-csv.js';
import { Store } from '../../src/stores/store.entity.js';
import { runCli } from '../support/cli.js';
import { startServer, type ServerProcess } from '../support/server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-app.js';

/** Debian's Chromium (apt-get install chromium); CHROMIUM_PATH points elsewhere. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Kept by CI (.ci/run): what the page looked like at the end, passed or failed. */
const SCREENSHOT = fileURLToPath(new URL('../../artifacts/swagger-ui.png', import.meta.url));

/**
 * Swagger UI as a first-time user meets it, in a real browser: a fresh service on its embedded
 * database with the demo seed (the demo stores and the printed demo token), /docs opened,
 * Authorize with that token, then each operation's "Try it out" and "Execute" with nothing but
 * the values Swagger UI fills in. Create → 201, list → 200 with that plant, delete of the
 * prefilled id → 204, search → 200 with stores.
 */
describe('Swagger UI at /docs, in Chromium', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let token: string;
  const outside: string[] = [];
  const pageErrors: string[] = [];
  /** The service's own database file, read beside it. */
  let db: DataSource;
  const plants = () => db.getRepository(Plant).find({ order: { id: 'ASC' } });

  beforeAll(async () => {
    database = await createTestDatabase();
    server = await startServer(database, { DEMO_SEED: 'true' });
    // The log is written in batches (up to a second after the line): wait for the token's line.
    const deadline = Date.now() + 15_000;
    while (!/pst_[0-9A-Za-z]{49}/.test(server.output()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    token = server.output().match(/pst_[0-9A-Za-z]{49}/)?.[0] as string;
    expect(token).toBeDefined();
    db = await new DataSource({
      type: 'better-sqlite3',
      database: join(database.env.DATA_DIR, 'plant-store.sqlite'),
      readonly: true,
      entities: [Plant, Store],
    }).initialize();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // headless: Playwright passes --headless itself.
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.url}/`) && !request.url().startsWith('data:')) outside.push(request.url());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);

  afterAll(async () => {
    if (page) {
      mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true }).catch(() => undefined);
    }
    await browser?.close();
    await db?.destroy();
    await server?.stop();
    await database?.drop();
  });

  /** The operation's block, expanded, with "Try it out" pressed. */
  async function tryOut(operationId: string, tag: string): Promise<Locator> {
    const block = page.locator(`#operations-${tag}-${operationId}`);
    await block.locator('.opblock-summary-control').click();
    await block.getByRole('button', { name: 'Try it out' }).click();
    return block;
  }

  /** Presses Execute and reads the status and body Swagger UI shows for the live response. */
  async function execute(block: Locator): Promise<{ status: number; body: string; url: string }> {
    await block.getByRole('button', { name: 'Execute' }).click();
    const live = block.locator('.live-responses-table .response').first();
    await live.waitFor();
    const status = Number((await live.locator('.response-col_status').innerText()).trim().slice(0, 3));
    const body = (await live.locator('.response-col_description pre').first().innerText()).trim();
    const url = (await block.locator('.request-url pre').innerText()).trim();
    return { status, body, url };
  }

  it('authorizes, then creates, lists, deletes and searches with the prefilled values', async () => {
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('Plant Store Service');

    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.getByLabel('auth-bearer-value').fill(token);
    // The modal's Authorize and Logout buttons are named by their aria-label.
    await dialog.getByRole('button', { name: 'Apply credentials' }).click();
    await dialog.getByRole('button', { name: 'Remove authorization' }).waitFor();
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();

    // Create: the body Swagger UI fills in is the schema's example.
    const create = await tryOut('createPlant', 'plants');
    const body = JSON.parse(await create.locator('textarea.body-param__text').inputValue()) as { name: string; id: number; tag: string };
    expect(body).toEqual({ name: expect.any(String), id: expect.any(Number), tag: expect.any(String) });
    const created = await execute(create);
    expect(created.status).toBe(201);
    expect(JSON.parse(created.body)).toEqual({ name: body.name, tag: body.tag });
    await expect(plants()).resolves.toMatchObject([{ team: 'demo', id: body.id, name: body.name, tag: body.tag }]);

    // List: the optional filters start empty, so the plant just made is listed.
    const list = await tryOut('listPlants', 'plants');
    for (const name of ['limit', 'tag', 'after'])
      expect({ name, value: await list.locator(`tr[data-param-name="${name}"] input`).inputValue() }).toEqual({ name, value: '' });
    const listed = await execute(list);
    expect(listed.url).toBe(`${server.url}/plants`);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body)).toEqual([{ name: body.name, tag: body.tag }]);

    // Delete: the prefilled id is the one the create example used.
    const remove = await tryOut('deletePlant', 'plants');
    expect(await remove.locator('tr[data-param-name="id"] input').inputValue()).toBe(String(body.id));
    const deleted = await execute(remove);
    expect(deleted.url).toBe(`${server.url}/plants/${body.id}`);
    expect(deleted.status).toBe(204);
    await expect(plants()).resolves.toEqual([]);

    // Search: the example ZIP has demo stores within the default distance.
    const search = await tryOut('findNearestLocations', 'locations');
    const found = await execute(search);
    expect(found.status).toBe(200);
    const response = JSON.parse(found.body) as { Code: string; locations: Array<{ distance: number }> };
    expect(response.Code).toBe('Success');
    expect(response.locations.length).toBeGreaterThan(0);
    for (const location of response.locations) expect(location.distance).toBeLessThanOrEqual(5);

    // Nothing was fetched from anywhere but the service, and the page threw nothing.
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('authorizes with an admin token and uploads a store list through "Try it out"', async () => {
    const issued = await runCli(database, ['tokens', 'create', '--team', 'ops', '--scope', 'admin']);
    expect(issued.code).toBe(0);
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor();
    await page.locator('.auth-wrapper .authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.getByLabel('auth-bearer-value').fill(issued.stdout.trim());
    await dialog.getByRole('button', { name: 'Apply credentials' }).click();
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();

    const upload = await tryOut('adminImportStores', 'admin');
    const csv = `${STORE_CSV_REQUIRED_COLUMNS.join(',')}\nUI-1,Uploaded In The Browser,1 Test Street,New York,NY,10001,,,Closed,Closed,Closed,Closed,Closed,Closed,Closed\n`;
    await upload.locator('input[type=file]').setInputFiles({ name: 'stores.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const imported = await execute(upload);
    expect(imported.status).toBe(200);
    expect(JSON.parse(imported.body)).toMatchObject({ read: 1, inserted: 1, dry_run: false });
    await expect(db.getRepository(Store).findOneBy({ code: 'UI-1' })).resolves.toMatchObject({ name: 'Uploaded In The Browser', state: 'NY' });
    expect(outside).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
