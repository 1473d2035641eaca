/**
 * The tags the API hands out, in a real browser (Debian's chromium driven by playwright-core): a
 * static page holding every zone tag form shows the ad in each, a click lands on the destination with
 * `extra` passed on (through the tag's `click` tracker), the conversion pixel fires, and the events
 * are exactly one response and impression per shown ad, one click per click and one conversion, as
 * the reporting service stores them (through the Redis stream with REDIS_URL, else gRPC batches).
 * Screenshots go to .ci/out/screenshots/.
 */
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../../../gateway/test/support/browser';
import { startOwnPlatform, type OwnPlatform } from '../../../gateway/test/support/own-platform';
import { freePort } from '../../../gateway/test/support/platform';
import { reportedEvents, within, zoneWithCampaign } from './serving-fixtures';

const SHOTS = SCREENSHOTS;
const maybe = chromiumAvailable() ? test : test.skip;

/** The test's own loopback site: the publisher page, the creative, the click tracker and the landing page. */
interface Site {
  port: number;
  hits: string[];
  pages: Record<string, string>;
  server: http.Server;
}

const CREATIVE = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250"><rect width="300" height="250" fill="#1565c0"/><text x="150" y="135" font-family="sans-serif" font-size="28" fill="#fff" text-anchor="middle">Spring shoes</text></svg>`;

async function startSite(): Promise<Site> {
  const site: Site = { port: await freePort(), hits: [], pages: {}, server: undefined as never };
  site.server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    site.hits.push(url);
    if (url.startsWith('/creative.svg')) {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
      return void res.end(CREATIVE);
    }
    if (url.startsWith('/track?to=')) {
      // A third-party click tracker: counts, then follows the ad server's click URL it was given.
      res.writeHead(302, { Location: url.slice('/track?to='.length) });
      return void res.end();
    }
    if (url.startsWith('/landing')) {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      return void res.end('<h1>Landing page</h1>');
    }
    const page = site.pages[url.split('?')[0]];
    if (page) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return void res.end(page);
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => site.server.listen(site.port, '127.0.0.1', () => r()));
  return site;
}

let platform: OwnPlatform;
let site: Site;
let browser: Browser;
let servingPort: number;

beforeAll(async () => {
  if (!chromiumAvailable()) return;
  site = await startSite();
  servingPort = await freePort();
  // The tags point at this platform's ad server, where the browser can reach it.
  platform = await startOwnPlatform({ SERVING_PORT: String(servingPort), SERVE_BASE_URL: `http://127.0.0.1:${servingPort}` });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  site?.server.close();
  await platform?.stop();
}, 60_000);

maybe('every tag form shows the ad; clicks land with extra; the conversion pixel fires; each action is one event', async () => {
  const acct = await platform.newAccount();
  const fx = await zoneWithCampaign(acct.live, [1], `http://127.0.0.1:${site.port}/landing`);
  const item = fx.items[0];
  expect((await acct.live.put(`/v2/ad-items/image/${item.id}`, { creative_url: `http://127.0.0.1:${site.port}/creative.svg` })).status).toBe(200);
  const email = await acct.live.post('/v2/zones/email', { name: 'Newsletter', width: 300, height: 250, publisher: fx.publisher.id });
  expect(email.status).toBe(200);
  const schedule = fx.schedule.id;
  expect((await acct.live.post('/v2/placements', { zone: { id: email.body.id, type: 'email_zone' }, advertisement: { id: item.id, type: 'image_ad_item' }, schedule })).status).toBe(200);

  const click = `http://127.0.0.1:${site.port}/track?to=`;
  const extra = 'utm_source=dailynews&utm_medium=banner';
  const q = `protocol=http&click=${encodeURIComponent(click)}&extra=${encodeURIComponent(extra)}`;
  const tags = await acct.live.get(`/v2/zones/standard/${fx.zone.id}/tags?${q}`);
  expect(tags.status).toBe(200);
  const emailTags = await acct.live.get(`/v2/zones/email/${email.body.id}/tags?${q}`);
  expect(emailTags.status).toBe(200);
  const t = tags.body.data;
  for (const form of ['async', 'js', 'iframe', 'image', 'json', 'iframe-no-js']) expect(t[form]).toContain(`http://127.0.0.1:${servingPort}/serve/`);

  // The publisher's page: one block per tag form, as a publisher would paste them.
  site.pages['/page.html'] = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Daily News</title>
<style>body{font-family:sans-serif;margin:8px}.slot{display:inline-block;vertical-align:top;margin:6px;padding:4px;border:1px dashed #999;width:310px;min-height:280px}h3{margin:0 0 4px;font-size:13px}</style></head><body>
<div class="slot" id="async"><h3>async</h3>${t.async}</div>
<div class="slot" id="js"><h3>js</h3>${t.js}</div>
<div class="slot" id="iframe"><h3>iframe</h3>${t.iframe}</div>
<div class="slot" id="image"><h3>image</h3>${t.image}</div>
<div class="slot" id="iframe-no-js"><h3>iframe-no-js</h3>${t['iframe-no-js']}</div>
<div class="slot" id="email"><h3>email</h3>${emailTags.body.data.email}</div>
<div class="slot" id="json"><h3>json</h3><div class="ad"></div></div>
<script>
fetch(${JSON.stringify(t.json)}).then(function(r){return r.json()}).then(function(a){
  var p=a.placements.placement_1, box=document.querySelector('#json .ad');
  box.innerHTML='<a href="'+p.redirect_url+'" target="_blank"><img src="'+p.image_url+'" width="'+p.width+'" height="'+p.height+'"></a>';
  new Image().src=p.accupixel_url; // the client says the ad was shown
});
</script></body></html>`;

  const context = await browser.newContext({ viewport: { width: 1000, height: 1000 } });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${site.port}/page.html`);
  // Every form shows the creative: in the page (js, image, email, json) or in its iframe.
  const loadedIn = (slot: string) =>
    within(15_000, async () => {
      const el = await page.$(`#${slot} iframe`);
      const frame = await el?.contentFrame();
      return !!frame && !!(await frame.evaluate(`Array.from(document.images).some((i) => i.complete && i.naturalWidth === 300)`).catch(() => false));
    }, 100);
  const loadedInPage = (slot: string) =>
    within(15_000, async () => !!(await page.evaluate(`Array.from(document.querySelectorAll('#${slot} img')).some((i) => i.complete && i.naturalWidth === 300)`)), 100);
  try {
    for (const slot of ['async', 'iframe', 'iframe-no-js']) await loadedIn(slot);
    for (const slot of ['js', 'image', 'email', 'json']) await loadedInPage(slot);
  } catch (err) {
    await page.screenshot({ path: path.join(SHOTS, 'serving-tag-forms-failed.png'), fullPage: true });
    throw new Error(`${(err as Error).message}; frames: ${page.frames().map((f) => f.url()).join(' ')}; site hits: ${site.hits.join(' ')}`);
  }
  await page.screenshot({ path: path.join(SHOTS, 'serving-tag-forms.png'), fullPage: true });

  // A click on the iframe form's ad goes through the tag's click tracker to the landing page, with extra.
  const frame = (await (await page.$('#iframe-no-js iframe'))!.contentFrame())!;
  const [landing] = await Promise.all([context.waitForEvent('page'), frame.click('a')]);
  await landing.waitForLoadState();
  expect(landing.url()).toBe(`http://127.0.0.1:${site.port}/landing/ad0?${extra}`);
  await landing.screenshot({ path: path.join(SHOTS, 'serving-landing.png') });
  expect(site.hits.some((h) => h.startsWith('/track?to=http://127.0.0.1:'))).toBe(true);
  await landing.close();
  // The image form's link clicks through too (the ad its image showed).
  const [landing2] = await Promise.all([context.waitForEvent('page'), page.click('#image a')]);
  await landing2.waitForLoadState();
  expect(landing2.url()).toBe(`http://127.0.0.1:${site.port}/landing/ad0?${extra}`);
  await landing2.close();

  // The advertiser's confirmation page holds the conversion tag; its pixel fires.
  const conv = await acct.live.get(`/v2/ad-items/image/${item.id}/conversion-tag?protocol=http`);
  expect(conv.status).toBe(200);
  site.pages['/thanks.html'] = `<!DOCTYPE html><html><body><h1>Thank you for your order</h1>${conv.body.data.html}</body></html>`;
  const convHit = page.waitForResponse((r) => r.url().startsWith(conv.body.data.src));
  await page.goto(`http://127.0.0.1:${site.port}/thanks.html`);
  expect((await convHit).status()).toBe(200);
  await page.screenshot({ path: path.join(SHOTS, 'serving-conversion.png') });
  await context.close();

  // Reporting holds exactly one response and impression per shown ad (seven forms: async, js, iframe,
  // image, iframe-no-js, email, json), one click per click (two) and one conversion.
  let stored: Awaited<ReturnType<typeof reportedEvents>> = [];
  await within(15_000, async () => {
    stored = await reportedEvents(platform.info, acct.id);
    return stored.filter((e) => e.kind === 4).length >= 1 && stored.filter((e) => e.kind === 3).length >= 2 && stored.filter((e) => e.kind === 2).length >= 7;
  }, 250);
  await new Promise((r) => setTimeout(r, 500));
  stored = await reportedEvents(platform.info, acct.id);
  const byKind = (k: number) => stored.filter((e) => e.kind === k);
  // Shown with the events when it fails, to tell a missing event from a doubled one.
  expect({ counts: [1, 2, 3, 4].map((k) => byKind(k).length), ids: stored.map((e) => e.id).sort() }).toEqual({ counts: [7, 7, 2, 1], ids: expect.any(Array) });
  expect(byKind(2).map((e) => e.decision).sort()).toEqual(byKind(1).map((e) => e.decision).sort());
  // Every event names the ad item shown (the conversion through the click it followed).
  expect(new Set(stored.map((e) => Number(e.ad_item_id)))).toEqual(new Set([item.id]));

  // And the report the advertiser reads counts exactly the same.
  const report = await acct.live.get('/v2/reports?type=ad-item&period=day&preset=today&summary=true');
  expect(report.status).toBe(200);
  expect(report.body.data.find((d: { id: number }) => d.id === item.id)?.summary).toMatchObject({ responses: 7, impressions: 7, clicks: 2, conversions: 1 });
}, 120_000);
