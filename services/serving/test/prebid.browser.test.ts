/**
 * The published Prebid.js (npm `prebid.js`, its core and its `adbutler` bid adapter, bundled unmodified
 * with esbuild) in a real browser (Debian's chromium, driven by playwright-core) bids on this platform's
 * zone: a publisher page on another origin configures an ad unit of the zone's size with the adapter
 * pointed at the gateway's serving origin (HTTPS), gets a bid of the placement's CPM and size, renders
 * it with pbjs.renderAd, and the report counts the bid's response, no impression until the ad is
 * rendered, then exactly one.
 * Screenshots go to .ci/out/screenshots/.
 */
import http from 'node:http';
import path from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchBrowser, SCREENSHOTS } from '../../../gateway/test/support/browser';
import { startOwnPlatform, type OwnPlatform } from '../../../gateway/test/support/own-platform';
import { freePort, ROOT } from '../../../gateway/test/support/platform';
import { answering, Bidder } from './bidder';
import { within, zoneWithCampaign } from './serving-fixtures';

const maybe = chromiumAvailable() ? test : test.skip;

const CREATIVE = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="250"><rect width="300" height="250" fill="#2e7d32"/><text x="150" y="135" font-family="sans-serif" font-size="26" fill="#fff" text-anchor="middle">Prebid shoes</text></svg>`;

/** Prebid.js as a publisher builds it from npm: the core and the adapter, as the package's README imports them. */
async function bundlePrebid(): Promise<string> {
  const out = await build({
    stdin: { contents: "import pbjs from 'prebid.js';\nimport 'prebid.js/modules/adbutlerBidAdapter';\npbjs.processQueue();\n", resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'iife',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

/** The publisher's page: one 300x250 ad unit bid on by adbutler; the winning bid rendered into an iframe. */
const page = (params: Record<string, string>) => `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Daily News</title>
<style>body{font-family:sans-serif;margin:12px}#slot{width:300px;height:250px;border:1px dashed #999}pre{font-size:12px}</style>
<script>window.pbjs = window.pbjs || { que: [] };</script>
<script src="/prebid.js"></script>
<script>
pbjs.que.push(function () {
  pbjs.addAdUnits([{
    code: 'slot',
    mediaTypes: { banner: { sizes: [[300, 250]] } },
    bids: [{ bidder: 'adbutler', params: ${JSON.stringify(params)} }],
  }]);
  pbjs.requestBids({
    timeout: 5000,
    bidsBackHandler: function () {
      var bid = pbjs.getHighestCpmBids('slot')[0];
      window.bidSeen = bid ? { bidder: bid.bidderCode, cpm: bid.cpm, currency: bid.currency, width: bid.width, height: bid.height, creativeId: bid.creativeId, advertiserId: bid.meta.advertiserId, advertiserDomains: bid.meta.advertiserDomains } : null;
      document.getElementById('bid').textContent = JSON.stringify(window.bidSeen);
      window.renderBid = function () { render(bid); };
    },
  });
  // The page shows the bid when it chooses (here: when the test says so).
  function render(bid) {
    var f = document.createElement('iframe');
    f.width = 300; f.height = 250; f.frameBorder = '0'; f.scrolling = 'no'; f.style.border = '0';
    document.getElementById('slot').appendChild(f);
    pbjs.renderAd(f.contentWindow.document, bid.adId);
    f.contentWindow.document.body.style.margin = '0';
  }
});
</script></head><body><h3>Daily News: header bidding</h3><div id="slot"></div><pre id="bid">waiting for bids…</pre></body></html>`;

interface Site {
  port: number;
  hits: string[];
  pages: Record<string, string>;
  server: http.Server;
}

async function startSite(prebid: string): Promise<Site> {
  const site: Site = { port: await freePort(), hits: [], pages: {}, server: undefined as never };
  site.server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    site.hits.push(url);
    if (url === '/prebid.js') return void res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(prebid);
    if (url.startsWith('/creative.svg')) return void res.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end(CREATIVE);
    if (url.startsWith('/pixel')) return void res.writeHead(204).end();
    if (url.startsWith('/landing')) return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><title>Landing</title><h1>Shoes</h1>');
    const html = site.pages[url.split('?')[0]];
    if (html) return void res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.server.listen(site.port, '127.0.0.1', () => r()));
  return site;
}

let platform: OwnPlatform;
let site: Site;
let browser: Browser;
let servePort: number;

beforeAll(async () => {
  if (!chromiumAvailable()) return;
  const started = Date.now();
  const prebid = await bundlePrebid();
  expect(Date.now() - started).toBeLessThan(10_000);
  site = await startSite(prebid);
  servePort = await freePort();
  // Tracking URLs name the gateway's serving origin (HTTPS, the platform's self-signed certificate), where the browser reaches them.
  platform = await startOwnPlatform({ GATEWAY_SERVE_PORT: String(servePort), SERVE_BASE_URL: `https://127.0.0.1:${servePort}` });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  site?.server.close();
  await platform?.stop();
}, 60_000);

maybe("Prebid.js's adbutler adapter gets the placement's bid (a response, no impression), renders it, and the report counts exactly one impression", async () => {
  const acct = await platform.newAccount();
  const api = acct.live;
  const fx = await zoneWithCampaign(api, [1], `http://127.0.0.1:${site.port}/landing`);
  const item = fx.items[0];
  const put = await api.put(`/v2/ad-items/image/${item.id}`, { creative_url: `http://127.0.0.1:${site.port}/creative.svg`, tracking_pixel: `http://127.0.0.1:${site.port}/pixel?ad=${item.id}` });
  expect(put.status).toBe(200);
  // Serving has the item as changed; the one response this waiting records is in the report before the page asks.
  await within(5000, async () => (await api.get(`/v2/adserve?ID=${acct.id}&setID=${fx.zone.id}&type=json`)).body?.placements?.placement_1?.image_url?.endsWith('/creative.svg'), 100);
  let before: Record<string, number> = {};
  await within(15_000, async () => (before = await summary(api, item.id)).responses >= 1, 600);
  expect(before).toMatchObject({ impressions: 0 });

  site.pages['/news.html'] = page({ accountID: String(acct.id), zoneID: String(fx.zone.id), domain: `127.0.0.1:${servePort}` });
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 900, height: 360 } });
  const tab = await context.newPage();
  const bidRequests: string[] = [];
  tab.on('request', (r) => r.url().includes('/adserve/') && bidRequests.push(`${r.method()} ${r.url()}`));
  const impression = tab.waitForResponse((r) => r.url().startsWith(`https://127.0.0.1:${servePort}/serve/imp?t=`), { timeout: 15_000 });
  await tab.goto(`http://127.0.0.1:${site.port}/news.html`);
  try {
    await within(15_000, async () => (await tab.evaluate('window.bidSeen')) !== undefined, 100);
    const bid = await tab.evaluate('window.bidSeen');
    expect(bid).toEqual({ bidder: 'adbutler', cpm: 2.5, currency: 'USD', width: 300, height: 250, creativeId: fx.placement.id, advertiserId: fx.advertiser.id, advertiserDomains: [] });
    // The bid is a response; nothing is shown yet, so no impression.
    let bidding: Record<string, number> = {};
    await within(15_000, async () => (bidding = await summary(api, item.id)).responses > before.responses, 600);
    expect(bidding).toMatchObject({ responses: before.responses + 1, impressions: 0 });
    await tab.evaluate('window.renderBid()');
    expect((await impression).status()).toBe(200);
    // The creative shows in the slot's iframe (Prebid may render it in a frame of its own inside).
    await within(10_000, async () => {
      for (const frame of tab.frames()) {
        if (frame === tab.mainFrame()) continue;
        if (await frame.evaluate(`Array.from(document.images).some((i) => i.complete && i.naturalWidth === 300 && i.src.endsWith('/creative.svg'))`).catch(() => false)) return true;
      }
      return false;
    }, 100);
  } finally {
    await tab.screenshot({ path: path.join(SCREENSHOTS, 'prebid-adbutler-bid.png') });
  }
  expect(bidRequests).toEqual([expect.stringMatching(new RegExp(`^GET https://127\\.0\\.0\\.1:${servePort}/adserve/;ID=${acct.id};type=hbr;setID=${fx.zone.id};pid=\\d+;place=0;kw=undefined;`))]);
  // The item's own pixel fired once.
  expect(site.hits.filter((h) => h.startsWith('/pixel'))).toEqual([`/pixel?ad=${item.id}`]);
  await context.close();

  // The report: the bid's response and the rendered ad's one impression.
  let now: Record<string, number> = {};
  await within(15_000, async () => (now = await summary(api, item.id)).impressions >= 1, 600);
  await new Promise((r) => setTimeout(r, 1000));
  now = await summary(api, item.id);
  expect({ responses: now.responses - before.responses, impressions: now.impressions }).toEqual({ responses: 1, impressions: 1 });
}, 120_000);

maybe("a programmatic win through Prebid.js: the buyer's domain in the bid's meta, and a click on the rendered ad counts before the buyer's landing page", async () => {
  const acct = await platform.newAccount();
  const api = acct.live;
  const made = async (p: string, body: Record<string, unknown>) => {
    const res = await api.post(p, body);
    expect({ p, status: res.status }).toEqual({ p, status: 200 });
    return res.body;
  };
  const landing = `http://127.0.0.1:${site.port}/landing?from=buyer`;
  const adm = `<a id="buy" href="%%CLICK_URL_UNESC%%${encodeURIComponent(landing)}" target="_blank"><img src="http://127.0.0.1:${site.port}/creative.svg" width="300" height="250" border="0"></a>`;
  const bidder = await new Bidder(answering((r) => ({
    id: r.id, cur: 'USD', seatbid: [{ seat: 's1', bid: [{ id: 'b1', impid: r.imp[0].id, price: 4.2, adm, adomain: ['buyer.example'], crid: 'c1', w: 300, h: 250 }] }],
  }))).start();
  try {
    const pub = await made('/v2/publishers', { name: 'Daily News' });
    const zone = await made('/v2/zones/standard', { name: 'Header bid slot', width: 300, height: 250, publisher: pub.id, allow_demand_sources: true });
    const source = await made('/v2/demand-sources', { name: 'Exchange', network: 'openrtb' });
    await made('/v2/demand-endpoints', { name: 'Exchange', demand_source: source.id, default_parameters: { url: `${bidder.url}/openrtb` }, supported_formats: ['display'], revenue_share: 80 });
    site.pages['/programmatic.html'] = page({ accountID: String(acct.id), zoneID: String(zone.id), domain: `127.0.0.1:${servePort}` });
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 900, height: 360 } });
    const tab = await context.newPage();
    try {
      // The zone and endpoint reach serving shortly after they are made: reload until the bid comes.
      await within(20_000, async () => {
        await tab.goto(`http://127.0.0.1:${site.port}/programmatic.html`);
        await within(10_000, async () => (await tab.evaluate('window.bidSeen')) !== undefined, 100);
        return (await tab.evaluate('window.bidSeen')) !== null;
      }, 500);
      expect(await tab.evaluate('window.bidSeen')).toEqual({ bidder: 'adbutler', cpm: 4.2, currency: 'USD', width: 300, height: 250, creativeId: 0, advertiserId: 0, advertiserDomains: ['buyer.example'] });
      await tab.evaluate('window.renderBid()');
      let link: import('playwright-core').ElementHandle | undefined;
      await within(10_000, async () => {
        for (const frame of tab.frames()) {
          if (frame === tab.mainFrame()) continue;
          const found = await frame.$('#buy').catch(() => null);
          if (found) return !!(link = found);
        }
        return false;
      }, 100);
      // The markup's click macro is this platform's signed click URL, the buyer's landing page after it.
      const href = new URL((await link!.getAttribute('href'))!);
      expect(`${href.origin}${href.pathname}`).toBe(`https://127.0.0.1:${servePort}/serve/click`);
      expect(href.search.endsWith(`&url=${encodeURIComponent(landing)}`)).toBe(true);
      const opened = context.waitForEvent('page', { timeout: 15_000 });
      await link!.click();
      const landed = await opened;
      await landed.waitForURL(landing, { timeout: 15_000 });
    } finally {
      await tab.screenshot({ path: path.join(SCREENSHOTS, 'prebid-programmatic-bid.png') });
      await context.close();
    }
    // The zone's report: the click, counted once.
    let clicks = 0;
    await within(15_000, async () => {
      const res = await api.get('/v2/reports?type=zone&period=day&preset=today&summary=true');
      clicks = res.body.data?.find((d: { id: number }) => d.id === zone.id)?.summary?.clicks ?? 0;
      return clicks >= 1;
    }, 600);
    expect(clicks).toBe(1);
  } finally {
    await bidder.stop();
  }
}, 120_000);

/** The ad item's summary in today's report (reports are rate-limited per account: callers poll slowly). */
async function summary(api: OwnPlatformClient, adItem: number): Promise<Record<string, number>> {
  const res = await api.get('/v2/reports?type=ad-item&period=day&preset=today&summary=true');
  expect(res.status).toBe(200);
  return res.body.data.find((d: { id: number }) => d.id === adItem)?.summary ?? { responses: 0, impressions: 0 };
}

type OwnPlatformClient = Awaited<ReturnType<OwnPlatform['newAccount']>>['live'];
