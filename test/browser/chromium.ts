import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { signToken } from '../support/tokens.js';

/**
 * Debian's Chromium driven by Playwright, for the stock browser's tests. CI installs it (.ci/run) and sets
 * REQUIRE_CHROMIUM=1, so a missing browser fails instead of skipping.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_MISSING = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium)`;

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

/** A port chosen before a server starts, so it can be named in settings or listened on again after a restart. */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Opens the stock browser, enters a token and shows the SKU; answers once its stock table is shown. */
export async function showSku(page: Page, origin: string, sku: string): Promise<void> {
  await page.goto(`${origin}/browser`);
  await page.getByLabel('Access token').fill(signToken({ sub: 'browser-user' }));
  await page.getByLabel('SKU').fill(sku);
  await page.getByLabel('SKU').press('Enter');
  await page.locator('#stock-total tr').waitFor();
}

/** The texts of a table row's cells. */
export async function cellsOf(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).locator('th, td').allTextContents();
}

/** Collects console errors, to be empty at the end of a test. */
export function consoleErrorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return errors;
}
