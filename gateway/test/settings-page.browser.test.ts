/**
 * The API settings page in a real Chromium (Debian's, driven by playwright-core) against the running
 * platform: sign in, create a key and use it, delete it and see it refused; forms without the
 * session's CSRF token are refused; one account's session cannot see or delete another's keys; sign-in
 * attempts are limited. Screenshots of every page go to .ci/out/screenshots.
 */
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, SCREENSHOTS } from './support/browser';
import { as, gatewayPort } from './support/api';
import { startGatewayProcess } from './support/gateway-process';
import { admin } from './support/platform';

const SHOTS = SCREENSHOTS;
let browser: Browser;
const run = async (...args: string[]) => JSON.parse((await admin(...args)).stdout);
const stamp = `${Date.now()}-${process.pid}`;

interface Owner {
  id: number;
  email: string;
  password: string;
}
async function owner(name: string): Promise<Owner> {
  const email = `${name}-${stamp}@settings.example`;
  const password = `pw-${name}-${stamp}`;
  const made = await run('create-account', '--name', `Settings ${name}`, '--email', email, '--password', password);
  return { id: made.account.id, email, password };
}
const keysOf = async (o: Owner) => (await run('list-keys', '--account', String(o.id))).keys as { id: number; name: string }[];

async function signIn(ctx: BrowserContext, o: Owner, port = gatewayPort()): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`https://localhost:${port}/settings/api`);
  await page.getByLabel('Email').fill(o.email);
  await page.getByLabel('Password').fill(o.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  return page;
}

const newContext = () => browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1100, height: 820 } });
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => browser?.close());

let alice: Owner;
let bob: Owner;
// One session each for the whole file: the address's sign-in budget (5 a minute) is shared with reruns.
let aliceCtx: BrowserContext;
let alicePage: Page;
let bobCtx: BrowserContext;
let bobPage: Page;
beforeAll(async () => {
  [alice, bob] = [await owner('alice'), await owner('bob')];
  aliceCtx = await newContext();
  const first = await aliceCtx.newPage();
  await first.goto(`https://localhost:${gatewayPort()}/settings/api`);
  await shot(first, 'settings-sign-in');
  await first.close();
  alicePage = await signIn(aliceCtx, alice);
  bobCtx = await newContext();
  bobPage = await signIn(bobCtx, bob);
}, 60_000);
afterAll(async () => {
  await aliceCtx?.close();
  await bobCtx?.close();
});

test('sign in, create a test key, use it, delete it: it is refused at once', async () => {
  const page = alicePage;
  const cookie = (await aliceCtx.cookies()).find((c) => c.name === 'settings_session')!;
  expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/settings' });
  await shot(page, 'settings-keys');

  await page.getByLabel('Name').fill('Browser test key');
  await page.getByLabel('Mode').selectOption('test');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.locator('#new-key').textContent())!.trim();
  expect(secret).toMatch(/^test_/);
  await shot(page, 'settings-key-created');
  expect((await as(secret).get('/v2/publishers')).status).toBe(200);
  // The table shows its first 8 and last 4 characters, never the whole key.
  const row = page.getByRole('row', { name: /Browser test key/ });
  await expect(row.textContent()).resolves.toContain(`${secret.slice(0, 8)}…${secret.slice(-4)}`);
  await page.goto(`https://localhost:${gatewayPort()}/settings/api`);
  expect(await page.content()).not.toContain(secret);

  await page.getByRole('link', { name: 'Delete key Browser test key' }).click();
  await page.getByRole('heading', { name: 'Delete this key?' }).waitFor();
  await shot(page, 'settings-delete-confirm');
  await page.getByRole('button', { name: 'Delete key' }).click();
  await page.getByText('The key was deleted').waitFor();
  let status = 200;
  for (let i = 0; i < 20 && status === 200; i++) {
    status = (await as(secret).get('/v2/publishers')).status;
    if (status === 200) await new Promise((r) => setTimeout(r, 50));
  }
  expect(status).toBe(403);
  expect((await keysOf(alice)).map((k) => k.name)).not.toContain('Browser test key');
}, 60_000);

test('forms without the session token, or with another session\'s, are refused and change nothing', async () => {
  const pageA = alicePage;
  const bobToken = await bobPage.locator('input[name="_csrf"]').first().inputValue();
  const before = await keysOf(alice);
  const origin = `https://localhost:${gatewayPort()}`;
  const missing = await pageA.request.post(`${origin}/settings/api/keys`, { form: { name: 'Forged', mode: 'live' } });
  expect(missing.status()).toBe(403);
  expect(await missing.text()).toContain('security token');
  const foreign = await pageA.request.post(`${origin}/settings/api/keys`, { form: { name: 'Forged', mode: 'live', _csrf: bobToken } });
  expect(foreign.status()).toBe(403);
  const view = await bobCtx.newPage();
  await view.setContent(await foreign.text());
  await shot(view, 'settings-csrf-refused');
  await view.close();
  expect(await keysOf(alice)).toEqual(before);
}, 60_000);

test("one account's session can neither see nor delete another account's keys", async () => {
  const page = alicePage;
  await page.goto(`https://localhost:${gatewayPort()}/settings/api`);
  const bobKeys = await keysOf(bob);
  expect(await page.content()).not.toContain(`Settings bob`);
  const token = await page.locator('input[name="_csrf"]').first().inputValue();
  const origin = `https://localhost:${gatewayPort()}`;
  for (const k of bobKeys) {
    expect((await page.request.get(`${origin}/settings/api/keys/${k.id}/delete`)).status()).toBe(404);
    expect((await page.request.post(`${origin}/settings/api/keys/${k.id}/delete`, { form: { _csrf: token } })).status()).toBe(404);
  }
  expect(await keysOf(bob)).toEqual(bobKeys);
}, 60_000);

test('sign-out ends every session of the account', async () => {
  const ctx = await newContext();
  const other = await signIn(ctx, alice);
  await other.getByRole('button', { name: 'Sign out everywhere' }).click();
  await other.getByRole('heading', { name: 'Sign in' }).waitFor();
  await alicePage.goto(`https://localhost:${gatewayPort()}/settings/api`);
  await alicePage.getByRole('heading', { name: 'Sign in' }).waitFor();
  // Bob's session is his own and stays.
  await bobPage.reload();
  await bobPage.getByRole('heading', { name: 'API keys' }).waitFor();
  await ctx.close();
}, 60_000);

test('sign-in attempts are limited per email and per address; a wrong email and a wrong password answer alike', async () => {
  // A gateway of its own (own limiter keys), so the shared platform's address budget stays untouched.
  const gw = await startGatewayProcess({ SIGNIN_LIMIT: '3', REDIS_KEY_PREFIX: `adserver-test:signin-${stamp}:` });
  const ctx = await newContext();
  try {
    const page = await ctx.newPage();
    const attempt = async (email: string, password: string) => {
      await page.goto(`https://localhost:${gw.httpsPort}/settings/api`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      const [res] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/settings/api/sign-in')), page.getByRole('button', { name: 'Sign in' }).click()]);
      return { status: res.status(), message: (await page.getByRole('alert').textContent())?.trim() };
    };
    const wrongPassword = await attempt(alice.email, 'not-the-password');
    const wrongEmail = await attempt(`nobody-${stamp}@settings.example`, alice.password);
    expect(wrongPassword).toEqual({ status: 401, message: 'The email or the password is wrong.' });
    expect(wrongEmail).toEqual(wrongPassword);
    expect(await attempt(alice.email, 'still-wrong')).toMatchObject({ status: 401 });
    // Over the limit even the right password is refused, with a clear message.
    const limited = await attempt(alice.email, alice.password);
    expect(limited.status).toBe(429);
    expect(limited.message).toMatch(/Too many sign-in attempts: at most 3 a minute from one address \(and for one email from it\), 100 an hour for one email\. Try again in \d+ seconds\./);
    await shot(page, 'settings-sign-in-limited');
    // The address's budget is spent too: another email from it is refused as well.
    expect((await attempt(bob.email, bob.password)).status).toBe(429);
  } finally {
    await ctx.close();
    await gw.stop();
  }
}, 90_000);
