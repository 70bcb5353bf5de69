import type { Server } from 'node:http';
import pino from 'pino';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { testConfig, useTestApp } from '../support/app.js';
import { BROWSER_CLIENT_ID, INVENTORY_RESOURCE, rsaSigningKey, TestProvider } from '../support/oidc-provider.js';
import { describeWith } from '../support/required-suite.js';
import {
  givenGroups,
  givenLocation,
  givenProduct,
  givenTransportUnitOn,
  givenUnitsIn,
  pc,
  unique,
} from '../support/stock-api.js';
import { CHROMIUM_MISSING, cellsOf, freePort, launchChromium } from './chromium.js';

// Short-lived access tokens, so the page renews them (a quarter before expiry) twice within the test.
const ACCESS_TOKEN_TTL_SECONDS = 4;

const appPort = await freePort();
const origin = `http://127.0.0.1:${appPort}`;
/** Filled in before the app starts: the provider's address is known once it listens. */
const environment: Record<string, string | undefined> = {};
let provider: TestProvider;

beforeAll(async () => {
  provider = await TestProvider.start([rsaSigningKey('browser-key')], 'browser-key', 0, {
    redirectUri: `${origin}/browser`,
    accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
  });
  Object.assign(environment, {
    AUTH_JWT_SECRET: '',
    AUTH_OIDC_ISSUER_URL: provider.issuer,
    AUTH_JWT_AUDIENCE: INVENTORY_RESOURCE,
    AUTH_REQUIRED_SCOPES_READ: 'inventory.read',
    BROWSER_OIDC_CLIENT_ID: BROWSER_CLIENT_ID,
    BROWSER_OIDC_SCOPES: 'openid offline_access inventory.read',
  });
});
const ctx = useTestApp(environment);

/** The Authorization header of a request to the service (not the provider). */
function bearerOf(request: Request): string | undefined {
  return request.url().startsWith(origin) ? request.headers().authorization : undefined;
}

/** Every access token the provider's token endpoint hands the page, by grant, in order. */
function tokensHandedTo(page: Page): { code: string[]; refresh: string[] } {
  const handed = { code: [] as string[], refresh: [] as string[] };
  page.on('response', (answer) => {
    if (answer.url() !== `${provider.issuer}/token` || answer.status() !== 200) return;
    const grant = answer.request().postData() ?? '';
    void answer.json().then((body: { access_token: string }) => {
      if (grant.includes('grant_type=refresh_token')) handed.refresh.push(body.access_token);
      else handed.code.push(body.access_token);
    });
  });
  return handed;
}

describeWith(
  { kind: 'BROWSER', requireVariable: 'REQUIRE_CHROMIUM', missing: CHROMIUM_MISSING },
  "the stock browser logs in at the company's provider (D37)",
  () => {
    let api: Server;
    let browser: Browser;
    let sku: string;
    let zone: string;

    beforeAll(async () => {
      // The stock is seeded through a second app on the same database that takes the test secret's tokens.
      const seeder = createApp({
        config: testConfig(),
        pool: ctx.db.pool,
        logger: pino({ level: 'silent' }),
        events: ctx.events,
      });
      zone = unique('ZONE');
      await givenGroups(seeder, { name: zone });
      const location = (await givenLocation(seeder, { locationGroupName: zone })).locationId;
      sku = await givenProduct(seeder, { label: 'Hinges' });
      await givenUnitsIn(seeder, await givenTransportUnitOn(seeder, location), '1', sku, [{ quantity: pc(7) }]);
      api = ctx.app.listen(appPort, '127.0.0.1');
      await new Promise((resolve) => api.once('listening', resolve));
      browser = await launchChromium();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await new Promise((resolve) => api?.close(resolve));
      await provider?.stop();
    });

    it("logs in through the provider's login page, shows stock, renews its token twice, and logs out", async () => {
      const page = await browser.newPage();
      // The page's own errors; the provider's pages (web fonts, favicon) are not the page's.
      const consoleErrors: string[] = [];
      page.on('console', (message) => {
        const source = message.location().url;
        // A feed without the `sku=` filter answers the filtered stream 400, and the page reads the whole feed (D39).
        const ownError = source.startsWith(origin) && !source.includes('/v1/events?sku=');
        if (message.type() === 'error' && ownError) consoleErrors.push(`${source}: ${message.text()}`);
      });
      const handed = tokensHandedTo(page);
      const bearers: string[] = [];
      page.on('request', (request) => {
        const bearer = bearerOf(request);
        if (bearer) bearers.push(bearer);
      });

      await page.goto(`${origin}/browser`);
      await page.getByText('Not logged in.').waitFor();
      expect(await page.getByLabel('Access token').isVisible()).toBe(false);
      await page.getByRole('button', { name: 'Log in' }).click();

      // The provider's own login and consent pages (oidc-provider's development interactions).
      await page.locator('input[name="login"]').fill('warehouse-user');
      await page.locator('input[name="password"]').fill('any password');
      await page.locator('button[type="submit"]').click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('Logged in as warehouse-user.').waitFor();
      expect(page.url()).toBe(`${origin}/browser`);
      expect(
        await page.evaluate(() => {
          const { sessionStorage, localStorage } = globalThis as unknown as Record<string, { length: number }>;
          return [sessionStorage!.length, localStorage!.length];
        }),
      ).toEqual([0, 0]);

      await page.getByLabel('SKU').fill(sku);
      await page.getByLabel('SKU').press('Enter');
      await page.locator(`#stock-rows tr[data-group="${zone}"]`).waitFor();
      expect(await cellsOf(page, `#stock-rows tr[data-group="${zone}"]`)).toEqual([zone, '7 PC', '0 PC', '7 PC']);
      expect(handed.code).toHaveLength(1);
      expect(bearers[0]).toBe(`Bearer ${handed.code[0]}`);

      // Renewed before it expires, with the refresh token; the second renewal uses the rotated refresh token.
      await expect.poll(() => handed.refresh.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      expect(new Set([...handed.code, ...handed.refresh]).size).toBe(handed.refresh.length + 1);
      await page.getByRole('button', { name: 'Show stock' }).click();
      await page.getByText(`Showing ${sku}.`).waitFor();
      expect(handed.refresh.map((token) => `Bearer ${token}`)).toContain(bearers.at(-1));
      await page.getByText('Live changes connected').waitFor();

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(`${origin}/browser`);
      await page.getByText('Not logged in.').waitFor();
      await page.getByLabel('SKU').fill(sku);
      await page.getByLabel('SKU').press('Enter');
      await page.getByText('Log in first.').waitFor();
      expect(consoleErrors).toEqual([]);
      await page.close();
    }, 40_000);
  },
);
