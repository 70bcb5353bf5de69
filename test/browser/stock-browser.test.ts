import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { describeWith } from '../support/required-suite.js';
import {
  call,
  expectStatus,
  givenGroups,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  unique,
} from '../support/stock-api.js';
import { signToken } from '../support/tokens.js';

/**
 * Issue 27, proven in a real browser: Debian's Chromium driven by Playwright. CI installs it (.ci/run) and sets
 * REQUIRE_CHROMIUM=1, so a missing browser fails instead of skipping.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
// The README shows docs/stock-browser.png: UPDATE_SCREENSHOTS=1 renews it; other runs leave the tree as it is.
const SCREENSHOT = new URL(
  process.env.UPDATE_SCREENSHOTS === '1' ? '../../docs/stock-browser.png' : '../../.tmp/stock-browser.png',
  import.meta.url,
);

/** A port chosen before the app starts, so CORS_ALLOWED_ORIGINS can name the other origin's page. */
async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const pagePort = await freePort();
const PAGE_ORIGIN = `http://127.0.0.1:${pagePort}`;
const ctx = useTestApp({ CORS_ALLOWED_ORIGINS: PAGE_ORIGIN });

describeWith(
  {
    kind: 'BROWSER',
    requireVariable: 'REQUIRE_CHROMIUM',
    missing: existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium)`,
  },
  'the API and the stock browser in Chromium (issue 27)',
  () => {
    let api: http.Server;
    let otherOrigin: http.Server;
    let browser: Browser;
    let apiOrigin: string;
    const token = signToken({ sub: 'browser-user' });

    beforeAll(async () => {
      api = ctx.app.listen(0, '127.0.0.1');
      await new Promise((resolve) => api.once('listening', resolve));
      apiOrigin = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      // A UI developer's page on another origin: it calls the API with a token, as any browser client would.
      otherOrigin = http.createServer((_req, res) => {
        res.setHeader('Content-Type', 'text/html');
        res.end(`<!doctype html><title>other origin</title><pre id="out">waiting</pre>`);
      });
      await new Promise<void>((resolve) => otherOrigin.listen(pagePort, '127.0.0.1', resolve));
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => otherOrigin?.close(resolve));
      await new Promise((resolve) => api?.close(resolve));
    });

    it('lets a page on another origin read, revalidate and change Products through CORS', async () => {
      const sku = await givenProduct(ctx.app);
      const page = await browser.newPage();
      await page.goto(`${PAGE_ORIGIN}/`);

      const outcome = await page.evaluate(
        async ({ apiOrigin, token, sku }) => {
          const headers = { Authorization: `Bearer ${token}`, Accept: 'application/hal+json' };
          const found = await fetch(`${apiOrigin}/v1/products?sku=${encodeURIComponent(sku)}`, { headers });
          const product = (await found.json()) as Record<string, unknown>;
          const etag = found.headers.get('ETag');
          const changed = await fetch(`${apiOrigin}/v1/products`, {
            method: 'PUT',
            headers: { ...headers, 'Content-Type': 'application/json', 'If-Match': etag ?? '' },
            body: JSON.stringify({ ...product, _links: undefined, label: 'changed in a browser' }),
          });
          const stale = await fetch(`${apiOrigin}/v1/products`, {
            method: 'PUT',
            headers: { ...headers, 'Content-Type': 'application/json', 'If-Match': etag ?? '' },
            body: JSON.stringify({ ...product, _links: undefined, label: 'too late' }),
          });
          return {
            status: found.status,
            sku: product.sku,
            etag,
            requestId: found.headers.get('X-Request-Id'),
            changed: changed.status,
            newTag: changed.headers.get('ETag'),
            stale: stale.status,
            staleKey: ((await stale.json()) as { messageKey: string }).messageKey,
          };
        },
        { apiOrigin, token, sku },
      );

      expect(outcome).toEqual({
        status: 200,
        sku,
        etag: expect.stringMatching(/^".+\.0\.hal-json"$/),
        requestId: expect.any(String),
        changed: 200,
        newTag: expect.stringMatching(/^".+\.1\.hal-json"$/),
        stale: 412,
        staleKey: 'owms.wms.inv.preconditionFailed',
      });
      await page.close();
    }, 90_000);

    it('finds a SKU, shows its stock by group, follows links to a unit, and shows a move by another client live', async () => {
      const zone = unique('ZONE');
      const dock = unique('DOCK');
      await givenGroups(ctx.app, { name: zone }, { name: dock });
      const inZone = (await givenLocation(ctx.app, { locationGroupName: zone })).locationId;
      const atDock = (await givenLocation(ctx.app, { locationGroupName: dock })).locationId;
      const sku = await givenProduct(ctx.app, { label: 'Wood screws' });
      const transportUnit = await givenTransportUnitOn(ctx.app, inZone);
      const [unit] = await givenUnitsIn(ctx.app, transportUnit, '1', sku, [{ quantity: pc(12) }]);
      await givenUnitsIn(ctx.app, transportUnit, '2', sku, [{ quantity: pc(30) }]);

      const page: Page = await browser.newPage({ viewport: { width: 820, height: 1180 } });
      const consoleErrors: string[] = [];
      page.on('console', (message) => {
        // A feed without the `sku=` filter answers the filtered stream 400, and the page reads the whole feed (D39).
        const unfilteredFeed = message.location().url.includes('/v1/events?sku=');
        if (message.type() === 'error' && !unfilteredFeed) consoleErrors.push(message.text());
      });
      await page.goto(`${apiOrigin}/browser`);
      await page.getByLabel('Access token').fill(token);
      await page.getByLabel('SKU').fill(sku);
      await page.getByLabel('SKU').press('Enter');

      const zoneRow = page.locator(`#stock-rows tr[data-group="${zone}"]`);
      await zoneRow.waitFor();
      expect(await zoneRow.locator('th, td').allTextContents()).toEqual([zone, '42 PC', '0 PC', '42 PC']);
      await page.getByText('Live changes connected').waitFor();

      await page.getByRole('button', { name: /^12 PC/ }).click();
      await page.locator('#unit-details').getByText(transportUnit).waitFor();
      expect(await page.locator('#unit-details dd').allTextContents()).toEqual([
        unit!.pKey,
        '12 PC',
        '12 PC',
        'AVAILABLE',
        transportUnit,
        '1',
        'BOX',
        'no',
      ]);

      // Another client moves the unit to the dock: the page shows it without a reload.
      const moved = await call(ctx.app, 'put', `/v1/packaging-units/${unit!.pKey}`).send({
        actualLocation: { locationId: atDock },
      });
      expectStatus(moved, 200, 'move the unit to the dock');
      const dockRow = page.locator(`#stock-rows tr[data-group="${dock}"]`);
      await dockRow.waitFor({ timeout: 15_000 });
      expect(await dockRow.locator('th, td').allTextContents()).toEqual([dock, '12 PC', '0 PC', '0 PC']);
      expect(await zoneRow.locator('th, td').allTextContents()).toEqual([zone, '30 PC', '0 PC', '30 PC']);
      await page.locator('#live li', { hasText: sku }).first().waitFor();
      await page.locator('#unit-details').getByText(atDock).waitFor();

      await page.getByRole('button', { name: 'Show Products' }).click();
      await page.locator('#product-rows tr').first().waitFor();
      mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
      expect(consoleErrors).toEqual([]);
      await page.close();
    }, 90_000);
  },
);
