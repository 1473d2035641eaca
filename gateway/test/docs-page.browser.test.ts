/**
 * /docs in a real Chromium (Debian's, driven by playwright-core): the v2 reference renders from
 * /v2/openapi.json, and the page loads nothing from outside the platform.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { gatewayPort } from './support/api';
import { ROOT } from './support/platform';

const SHOTS = path.join(ROOT, '.ci/out/screenshots');
let browser: Browser;

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => browser?.close());

test('/docs renders the v2 reference from the platform alone', async () => {
  const origin = `https://localhost:${gatewayPort()}`;
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  const consoleErrors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text().slice(0, 300)));
  page.on('pageerror', (e) => consoleErrors.push(String(e).slice(0, 300)));
  const res = await page.goto(`${origin}/docs`);
  expect(res?.status()).toBe(200);
  await page.getByText('Ad serving management API v2').waitFor({ timeout: 20_000 });
  await page.screenshot({ path: path.join(SHOTS, 'docs.png') });
  // Operations of the catalog and of routes beyond it are listed.
  await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
  // The browser asks for /favicon.ico by itself; nothing else may fail.
  expect(consoleErrors.filter((e) => !/404/.test(e))).toEqual([]);
  const summaries = await page.locator('.opblock-summary-description').allTextContents();
  expect(summaries).toEqual(expect.arrayContaining(['Create a custom HTML ad item']));
  const outside = requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'));
  expect(outside).toEqual([]);
  expect(requested).toContain(`${origin}/v2/openapi.json`);
  await context.close();
}, 60_000);
