/**
 * A real video player in a real browser (Debian's chromium, driven by playwright-core): a publisher page
 * with a `<video>` element and @dailymotion/vast-client (its browser build, unmodified) loads a VAST
 * zone's tag, plays the MP4 the platform stores and serves (uploaded through the API), and tracks it
 * with the client's VASTTracker: impression, start, quartiles and complete as the video plays, a click
 * that follows ClickThrough to the landing page, a skip after the skip offset. The VAST reports then
 * count exactly what the page played. Screenshots go to .ci/out/screenshots/.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { Client, TestAccount } from '../../../gateway/test/support/api';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../../../gateway/test/support/browser';
import { startOwnPlatform, type OwnPlatform } from '../../../gateway/test/support/own-platform';
import { freePort, ROOT } from '../../../gateway/test/support/platform';
import { within } from './serving-fixtures';

const maybe = chromiumAvailable() ? test : test.skip;
/** A 4-second 320x180 H.264 MP4 (fixtures/video/SOURCE.md says how it was made). */
const SPOT = fs.readFileSync(path.join(__dirname, 'fixtures/video/spot-4s.mp4'));
const CLIENT = fs.readFileSync(path.join(ROOT, 'node_modules/@dailymotion/vast-client/dist/vast-client.min.js'));

/**
 * The publisher's player: loads the tag with the client, picks the rendition the browser can play,
 * and reports to the tracker as the video plays; `window.played` logs every event the tracker sent.
 */
const PLAYER = `<!doctype html><html><head><meta charset="utf-8"><title>Player</title>
<style>body{margin:0;background:#1b1b1b;font:14px sans-serif;color:#eee} #stage{position:relative;width:640px;height:360px;margin:16px}
video{width:640px;height:360px;background:#000;cursor:pointer} #skip{position:absolute;right:12px;bottom:12px;display:none;padding:8px 14px}
#companion{margin:0 16px} #log{margin:16px;white-space:pre-wrap}</style></head>
<body><div id="stage"><video id="video" muted playsinline></video><button id="skip">Skip ad ▶</button></div>
<div id="companion"></div><pre id="log"></pre>
<script type="module">
import { VASTClient, VASTTracker } from '/vast-client.js';
window.played = [];
const say = (m) => { window.played.push(m); document.getElementById('log').textContent += m + '\\n'; };
window.playAd = async (tag) => {
  const client = new VASTClient();
  const response = await client.get(tag, { withCredentials: true });
  const ad = response.ads[0];
  const linear = ad.creatives.find((c) => c.type === 'linear');
  const tracker = new VASTTracker(client, ad, linear);
  for (const e of ['creativeView', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'skip', 'clickthrough']) tracker.on(e, () => say(e));
  const video = document.getElementById('video');
  const skip = document.getElementById('skip');
  const file = linear.mediaFiles.find((m) => video.canPlayType(m.mimeType));
  video.src = file.fileURL;
  const companion = ad.creatives.find((c) => c.type === 'companion');
  if (companion) document.getElementById('companion').textContent = 'companion ' + companion.variations[0].width + 'x' + companion.variations[0].height;
  tracker.on('clickthrough', (url) => window.open(url, '_blank'));
  // The previous ad's listeners go: each ad reports to its own tracker only.
  window.adListeners?.abort();
  const listeners = (window.adListeners = new AbortController());
  const on = (el, event, fn) => el.addEventListener(event, fn, { signal: listeners.signal });
  on(video, 'click', () => tracker.click());
  return new Promise((resolve) => {
    let shown = false;
    on(video, 'playing', () => { if (!shown) { shown = true; tracker.trackImpression(); say('impression'); } });
    on(video, 'timeupdate', () => {
      tracker.setProgress(video.currentTime);
      if (linear.skipDelay !== null && video.currentTime >= linear.skipDelay) skip.style.display = 'block';
    });
    on(video, 'ended', () => { tracker.complete(); resolve('ended'); });
    on(skip, 'click', () => { video.pause(); tracker.skip(); skip.style.display = 'none'; resolve('skipped'); });
    video.play();
  });
};
</script></body></html>`;

interface Site {
  port: number;
  hits: string[];
  server: http.Server;
}

async function startSite(): Promise<Site> {
  const site: Site = { port: await freePort(), hits: [], server: undefined as never };
  site.server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    site.hits.push(url);
    if (url === '/player.html') return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PLAYER);
    if (url === '/vast-client.js') return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(CLIENT);
    if (url.startsWith('/landing')) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>Spring shoes: landing page</h1>');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.server.listen(site.port, '127.0.0.1', () => r()));
  return site;
}

let platform: OwnPlatform;
let site: Site;
let browser: Browser;
let acct: TestAccount;
let api: Client;

beforeAll(async () => {
  if (!chromiumAvailable()) return;
  site = await startSite();
  // Tags, tracking and creative files name the gateway's plain HTTP listener, where the browser reaches them.
  const httpPort = await freePort();
  platform = await startOwnPlatform({ GATEWAY_HTTP_PORT: String(httpPort), SERVE_BASE_URL: `http://127.0.0.1:${httpPort}` });
  acct = await platform.newAccount();
  api = acct.live;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  site?.server.close();
  await platform?.stop();
}, 60_000);

async function made(path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

/** The spot uploaded as a video creative: the platform stores the file and serves it at its file_url. */
async function uploadSpot(): Promise<{ id: number; file_url: string }> {
  const group = await made('/v2/media-groups', { name: 'Videos' });
  const fd = new FormData();
  fd.append('attributes', JSON.stringify({ group: group.id, name: 'Spring spot', width: 320, height: 180, duration: 4 }));
  fd.append('file', new Blob([SPOT], { type: 'video/mp4' }), 'spot-4s.mp4');
  const body = new Response(fd);
  const res = await api.request('POST', '/v2/creatives/video', undefined, { raw: Buffer.from(await body.arrayBuffer()), headers: { 'Content-Type': body.headers.get('content-type')! } });
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { object: 'video_creative', file_size: SPOT.length } });
  return res.body;
}

/** A VAST zone with one placed video ad of the uploaded spot; answers the zone's player tag once serving has it. */
async function videoZone(creative: number, name: string, skipDuration: string | null): Promise<{ tag: string; item: number }> {
  const publisher = await made('/v2/publishers', { name: `${name} publisher` });
  const zone = await made('/v2/vast-zones', { name, publisher: publisher.id, vast_version: '4.2' });
  const item = await made('/v2/vast-ad-items', {
    name, duration: '00:00:04', location: `http://127.0.0.1:${site.port}/landing?ad=${encodeURIComponent(name)}`,
    skippable: skipDuration !== null, skip_duration: skipDuration,
  });
  await made('/v2/vast-media/linear', { ad_item: item.id, type: 'video/mp4', width: 320, height: 180, creative });
  await made('/v2/vast-companions', { ad_item: item.id, width: 300, height: 250, content: `http://127.0.0.1:${site.port}/companion.png` });
  const schedule = await made('/v2/vast-schedules', { start_date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ') });
  await made('/v2/vast-placements', { zone: zone.id, advertisement: { id: item.id, type: 'vast_ad_item' }, schedule: schedule.id });
  const tag = (await api.get(`/v2/vast-zones/${zone.id}/tags?type=basic&protocol=http`)).body.data.basic as string;
  await within(5000, async () => (await (await fetch(tag)).text()).includes('<Ad '), 100);
  return { tag, item: item.id };
}

async function vastTotals(adItem: number): Promise<Record<string, number>> {
  const res = await api.get(`/v2/vast-reports?type=ad-item&period=day&preset=today&ad-items=${adItem}`);
  expect(res.status).toBe(200);
  return res.body.data.find((e: { id: number }) => e.id === adItem)?.summary ?? {};
}

// Page code is given as text: this file is compiled without the DOM's types.
const played = (page: Page) => page.evaluate('window.played') as Promise<string[]>;
const playAd = (page: Page, tag: string) => page.evaluate(`window.playAd(${JSON.stringify(tag)})`) as Promise<string>;

maybe('a player plays the served MP4 to the end, follows the click-through, skips a skippable ad; the VAST reports count exactly that', async () => {
  const spot = await uploadSpot();
  const file = await fetch(spot.file_url);
  expect([file.status, file.headers.get('content-type'), Buffer.from(await file.arrayBuffer()).equals(SPOT)]).toEqual([200, 'video/mp4', true]);
  const full = await videoZone(spot.id, 'Full play', null);
  const skippable = await videoZone(spot.id, 'Skippable', '00:00:01');

  const context = await browser.newContext({ viewport: { width: 672, height: 520 } });
  const page = await context.newPage();
  await page.goto(`http://127.0.0.1:${site.port}/player.html`);
  await page.waitForFunction("typeof window.playAd === 'function'");

  // 1. Played to the end; a screenshot while it plays shows the frame of the served file.
  const ending = playAd(page, full.tag);
  await page.waitForFunction("document.querySelector('video').currentTime > 1.5", undefined, { timeout: 15_000 });
  await page.screenshot({ path: path.join(SCREENSHOTS, 'vast-player-playing.png') });
  expect(await ending).toBe('ended');
  // The tracker reports creativeView as it sends the impression.
  expect(await played(page)).toEqual(['creativeView', 'impression', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete']);
  // A click on the video follows ClickThrough (through the ad server) to the landing page.
  const [landing] = await Promise.all([context.waitForEvent('page'), page.click('video')]);
  await landing.waitForLoadState();
  expect(landing.url()).toBe(`http://127.0.0.1:${site.port}/landing?ad=Full%20play`);
  await landing.screenshot({ path: path.join(SCREENSHOTS, 'vast-player-landing.png') });
  await landing.close();

  // 2. A skippable ad: the skip button shows after the offset; skipping fires skip, not complete.
  await page.evaluate("window.played = []; document.getElementById('log').textContent = ''");
  const skipping = playAd(page, skippable.tag);
  await page.waitForSelector('#skip', { state: 'visible', timeout: 15_000 });
  await page.screenshot({ path: path.join(SCREENSHOTS, 'vast-player-skip-offered.png') });
  await page.click('#skip');
  expect(await skipping).toBe('skipped');
  const skippedEvents = await played(page);
  expect(skippedEvents.slice(0, 3)).toEqual(['creativeView', 'impression', 'start']);
  expect(skippedEvents).toContain('skip');
  expect(skippedEvents).not.toContain('complete');
  await context.close();

  // The reports: exactly what was played (each ad once), counted from the tracking URLs the client called.
  let fullTotals: Record<string, number> = {};
  let skipTotals: Record<string, number> = {};
  await within(10_000, async () => {
    fullTotals = await vastTotals(full.item);
    skipTotals = await vastTotals(skippable.item);
    return fullTotals.clicks === 1 && skipTotals.skip === 1;
  }, 1000);
  expect(fullTotals).toMatchObject({ impressions: 1, start: 1, first_quartile: 1, midpoint: 1, third_quartile: 1, complete: 1, clicks: 1, skip: 0, completion_rate: 1 });
  const quartile = (e: string) => (skippedEvents.includes(e) ? 1 : 0);
  expect(skipTotals).toMatchObject({
    impressions: 1, start: 1, skip: 1, complete: 0, clicks: 0,
    first_quartile: quartile('firstQuartile'), midpoint: quartile('midpoint'), third_quartile: quartile('thirdQuartile'),
  });
}, 90_000);
