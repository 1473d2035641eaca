/**
 * /docs in a real Chromium (Debian's, driven by playwright-core): the v2 reference renders from
 * /v2/openapi.json, and the page loads nothing from outside the platform.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser, SCREENSHOTS } from './support/browser';
import { gatewayPort } from './support/api';

const SHOTS = SCREENSHOTS;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
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
  // Swagger UI resolves the whole document (about 1 MB, 230 paths) before it shows anything: on a
  // loaded CI machine that took over 20 s.
  await page.getByText('Ad serving management API v2').waitFor({ timeout: 60_000 });
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
}, 120_000);
