import { createRequire } from 'node:module';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import { uniqueSku } from '../support/builders.js';
import { describeWith } from '../support/required-suite.js';
import { call, expectStatus, givenLocation, givenProduct, givenUnitsOnLocation, pc } from '../support/stock-api.js';
import { CHROMIUM_MISSING, consoleErrorsOf, launchChromium, showSku } from './chromium.js';

/** D39: the stock browser never shows part of a list as the whole, and passes axe-core on desktop and phone. */
const ctx = useTestApp();
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const UNITS = 250;

interface AxeViolation {
  id: string;
  nodes: { target: string[] }[];
}

async function axeViolations(page: Page): Promise<string[]> {
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target).join(' ')}`);
}

describeWith(
  { kind: 'BROWSER', requireVariable: 'REQUIRE_CHROMIUM', missing: CHROMIUM_MISSING },
  'the stock browser lists (D39)',
  () => {
    let server: http.Server;
    let origin: string;
    let browser: Browser;
    let sku: string;

    beforeAll(async () => {
      server = http.createServer(ctx.app).listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const products = Array.from({ length: 120 }, (_, n) => ({
        sku: uniqueSku('LIST'),
        label: `Hinge ${n}`,
        baseUnit: pc(1),
      }));
      expectStatus(await call(ctx, 'post', '/v1/products').send(products), 201, 'create 120 Products');
      sku = await givenProduct(ctx, { label: 'Wall plugs' });
      const { locationId } = await givenLocation(ctx);
      const units = Array.from({ length: UNITS }, (_, n) => ({ quantity: pc(1 + (n % 3)) }));
      await givenUnitsOnLocation(ctx, locationId, sku, units);
      browser = await launchChromium();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => server?.close(resolve));
    });

    it("pages through a SKU's units, saying which are shown and whether more follow", async () => {
      const page = await browser.newPage();
      const errors = consoleErrorsOf(page);
      await showSku(page, origin, sku);
      const count = page.locator('#units-count');
      await expect.poll(() => count.textContent()).toBe('Units 1–100, more follow');
      expect(await page.locator('#unit-list li').count()).toBe(100);

      await page.getByRole('button', { name: 'Next units' }).click();
      await expect.poll(() => count.textContent()).toBe('Units 101–200, more follow');
      await page.getByRole('button', { name: 'Next units' }).click();
      await expect.poll(() => count.textContent()).toBe('Units 201–250 of 250');
      expect(await page.locator('#unit-list li').count()).toBe(50);
      expect(await page.getByRole('button', { name: 'Next units' }).isDisabled()).toBe(true);
      await page.getByRole('button', { name: 'Previous units' }).click();
      await expect.poll(() => count.textContent()).toBe('Units 101–200, more follow');
      expect(errors.filter((error) => !error.includes('400'))).toEqual([]);
      await page.close();
    }, 90_000);

    it('keeps the page a click on Next asked for when a refresh started before the click answers after it', async () => {
      const refreshed = await givenProduct(ctx, { label: 'Washers' });
      const { locationId } = await givenLocation(ctx);
      await givenUnitsOnLocation(
        ctx,
        locationId,
        refreshed,
        Array.from({ length: 150 }, () => ({ quantity: pc(1) })),
      );
      const page = await browser.newPage();
      await showSku(page, origin, refreshed);
      const count = page.locator('#units-count');
      await expect.poll(() => count.textContent()).toBe('Units 1–100, more follow');
      await page.locator('#live-state', { hasText: /^connected$/ }).waitFor();

      // The next read of the first page (the refresh a change causes) answers only after the click on Next.
      let refreshAsked!: () => void;
      const refreshing = new Promise<void>((resolve) => (refreshAsked = resolve));
      await page.route(
        (url) => url.pathname.endsWith('/packaging-units') && !url.searchParams.has('after'),
        async (route) => {
          refreshAsked();
          await new Promise((resolve) => setTimeout(resolve, 1500));
          await route.continue();
        },
        { times: 1 },
      );
      await givenUnitsOnLocation(ctx, locationId, refreshed, [{ quantity: pc(1) }]);
      await refreshing;
      await page.getByRole('button', { name: 'Next units' }).click();
      await expect.poll(() => count.textContent()).toBe('Units 101–151 of 151');
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(await count.textContent()).toBe('Units 101–151 of 151');
      await page.close();
    }, 90_000);

    it('lists Products a page at a time, narrows the page with the filter box, and shows a chosen SKU', async () => {
      const all = await call(ctx, 'get', '/v1/products?limit=1000');
      const total = (all.body as unknown[]).length;
      const page = await browser.newPage();
      await page.goto(`${origin}/browser`);
      await page.getByLabel('Access token').fill((await import('../support/tokens.js')).signToken({ sub: 'lists' }));
      await page.getByRole('button', { name: 'Show Products' }).click();
      const count = page.locator('#products-count');
      await expect.poll(() => count.textContent()).toBe('Products 1–100, more follow');
      expect(await page.locator('#product-rows tr').count()).toBe(100);

      await page.getByLabel('Filter Products').fill('Hinge 7');
      // "Hinge 7" and "Hinge 70" … "Hinge 79" of the first page.
      expect(await page.locator('#product-rows tr:visible').count()).toBe(11);
      await page.getByRole('button', { name: 'Next Products' }).click();
      await expect.poll(() => count.textContent()).toBe(`Products 101–${total} of ${total}`);
      await page.getByLabel('Filter Products').fill('Wall plugs');
      await page.locator('#product-rows').getByRole('button', { name: sku }).click();
      await page.locator('#stock-sku', { hasText: sku }).waitFor();
      await expect.poll(() => page.locator('#units-count').textContent()).toBe('Units 1–100, more follow');
      await page.close();
    }, 90_000);

    it('passes axe-core with everything shown, on desktop and at 390 px, light and dark', async () => {
      // axe is injected as an inline script, which the page's Content-Security-Policy would refuse.
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      await showSku(page, origin, sku);
      await page.getByText('Live changes connected').waitFor();
      await page.locator('#unit-list button').first().click();
      await page.locator('#unit-details dd').first().waitFor();
      await page.getByRole('button', { name: 'Show Products' }).click();
      await page.locator('#product-rows tr').first().waitFor();
      await page.addScriptTag({ path: AXE });

      for (const width of [1280, 390]) {
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.setViewportSize({ width, height: 900 });
          await page.emulateMedia({ colorScheme });
          expect(await axeViolations(page), `${width} px, ${colorScheme}`).toEqual([]);
        }
      }
      for (const name of ['Products table', 'Stock table']) {
        const region = page.getByRole('region', { name });
        await region.focus();
        expect(await region.evaluate((node) => node === node.ownerDocument.activeElement)).toBe(true);
      }
      await page.close();
    }, 90_000);
  },
);
