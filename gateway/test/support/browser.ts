/**
 * Debian's Chromium driven by playwright-core, for the tests of what a browser sees (ad tags, the
 * settings page, /docs). `.ci/run` installs the `chromium` package when it is missing; CHROMIUM_PATH
 * points elsewhere. Screenshots go under the CI output, where the review reads them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ROOT } from './platform';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, '.ci/out/screenshots');

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM);
}

/** Headless, without the background networking a closed machine refuses. */
export function launchBrowser(): Promise<Browser> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
