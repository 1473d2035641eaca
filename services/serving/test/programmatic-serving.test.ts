/**
 * Programmatic demand through the real platform: demand sources, endpoints and deals made through the
 * API, bidders on loopback started by the test, the ad tags' paths asked of the serving process. A bid
 * that wins is served as the tag's ad, its win notice arrives, its billing notice arrives once when
 * its impression counts (however often the pixel fires), and a VAST zone serves a winning VAST bid to
 * @dailymotion/vast-client with the platform's impression beside the buyer's.
 */
import { DOMParser } from '@xmldom/xmldom';
import { VASTParser } from '@dailymotion/vast-client';
import type { BidRequest } from 'iab-openrtb/dist/v26';
import { newAccount, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { answering, Bidder } from './bidder';
import { closeServeAgent, serveGet, within, zoneWithCampaign } from './serving-fixtures';

const serving = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;

const bid = (r: BidRequest, base: string, price: number, adm: string) => ({
  id: r.id,
  bidid: 'resp-7',
  cur: 'USD',
  seatbid: [{
    seat: 'seat-1',
    bid: [{
      id: 'b1', impid: r.imp[0].id, price, adm, adid: 'ad-1', crid: 'cr-1', adomain: ['buyer.example'], w: 300, h: 250,
      nurl: `${base}/win?price=\${AUCTION_PRICE}&auction=\${AUCTION_ID}`,
      burl: `${base}/bill?price=\${AUCTION_PRICE}&auction=\${AUCTION_ID}`,
    }],
  }],
});

const VAST_BID = `<?xml version="1.0" encoding="UTF-8"?>
<VAST version="3.0"><Ad id="buyer-ad"><InLine><AdSystem>Buyer DSP</AdSystem><AdTitle>Buyer spot</AdTitle>
<Impression><![CDATA[https://buyer.example/imp]]></Impression>
<Creatives><Creative><Linear><Duration>00:00:10</Duration>
<MediaFiles><MediaFile delivery="progressive" type="video/mp4" width="640" height="360"><![CDATA[https://buyer.example/spot.mp4]]></MediaFile></MediaFiles>
</Linear></Creative></Creatives></InLine></Ad></VAST>`;

let acct: TestAccount;
let api: Client;
const bidders: Bidder[] = [];

async function made(path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function bidder(answer: (r: BidRequest, base: string) => unknown, notice?: ConstructorParameters<typeof Bidder>[1]): Promise<Bidder> {
  const b = await new Bidder(answering(answer), notice).start();
  bidders.push(b);
  return b;
}

beforeAll(async () => {
  acct = await newAccount();
  api = acct.live;
});

afterAll(async () => {
  closeServeAgent();
  await Promise.all(bidders.map((b) => b.stop()));
});

async function demandFor(url: string, formats: string[], extra: Record<string, unknown> = {}) {
  const source = await made('/v2/demand-sources', { name: 'Exchange', network: 'openrtb' });
  const endpoint = await made('/v2/demand-endpoints', { name: 'Exchange US', demand_source: source.id, default_parameters: { url }, supported_formats: formats, revenue_share: 80, ...extra });
  return { source, endpoint };
}

describe('programmatic demand on the ad tags', () => {
  it('serves a winning bid as the zone ad; the win notice arrives, and the billing notice once, when the impression counts', async () => {
    const b = await bidder((r, base) => bid(r, base, 3.75, '<div id="buyer-creative">bought at ${AUCTION_PRICE}</div>'));
    const pub = await made('/v2/publishers', { name: 'News' });
    const zone = await made('/v2/zones/standard', { name: 'Programmatic slot', width: 300, height: 250, publisher: pub.id, allow_demand_sources: true, bid_floor: 1.25, rtb_placement_id: 'news-top' });
    const { endpoint, source } = await demandFor(`${b.url}/openrtb`, ['display']);
    let answer: any;
    await within(10_000, async () => {
      answer = (await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${zone.id};type=json`, { Referer: 'https://news.example/today' })).body;
      return answer?.status === 'SUCCESS';
    }, 100);
    const placement = answer.placements.placement_1;
    expect(placement).toMatchObject({ width: '300', height: '250', body: '<div id="buyer-creative">bought at 3.75</div>', redirect_url: '' });
    const request = b.requests[b.requests.length - 1];
    expect(request).toMatchObject({ imp: [{ tagid: 'news-top', bidfloor: 1.25, banner: { w: 300, h: 250 } }], site: { page: 'https://news.example/today', domain: 'news.example', publisher: { id: String(pub.id) } }, at: 1 });
    await within(5000, async () => b.notices.some((n) => n.startsWith('/win?price=3.75&auction=')));
    expect(b.notices.filter((n) => n.startsWith('/bill'))).toEqual([]);

    // The impression pixel, fired twice (a reload): one billing notice.
    const imp = new URL(placement.accupixel_url);
    expect((await serveGet(serving(), `${imp.pathname}${imp.search}`)).status).toBe(200);
    expect((await serveGet(serving(), `${imp.pathname}${imp.search}`)).status).toBe(200);
    await within(5000, async () => b.notices.some((n) => n.startsWith('/bill?price=3.75')));
    await new Promise((r) => setTimeout(r, 300));
    expect(b.notices.filter((n) => n.startsWith('/bill'))).toHaveLength(1);
    expect(endpoint.demand_source).toBe(source.id);

    // Prebid's adapter (type=hbr) gets the same auction: the bid's price is the header bid's CPM.
    const hb = (await serveGet(serving(), `/adserve/;ID=${acct.id};type=hbr;setID=${zone.id};pid=page-1;place=0;`, { Origin: 'https://publisher.example' })).body;
    expect(hb).toMatchObject({ status: 'SUCCESS', cpm: 3.75, width: 300, height: 250, ad_code: '<div id="buyer-creative">bought at 3.75</div>' });
    // The buyer's domain (the bid's adomain) for Prebid's meta.advertiserDomains; a bid names no advertiser.
    expect(hb.advertiser).toEqual({ id: 0, name: '', domain: 'buyer.example' });
  });

  it("counts a click on a winning bid through its click macro, then sends the visitor to the buyer's landing page", async () => {
    // An account of its own: the other tests' endpoints would bid for this zone too.
    const own = await newAccount();
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await own.live.post(path, body);
      if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const adm = '<a id="buy" href="%%CLICK_URL_UNESC%%https%3A%2F%2Fbuyer.example%2Flanding%3Fc%3D7%26d%3D8"><img src="https://cdn.buyer.example/a.png"></a>';
    const b = await bidder((r, base) => bid(r, base, 2.5, adm));
    const pub = await post('/v2/publishers', { name: 'Clicks' });
    const zone = await post('/v2/zones/standard', { name: 'Clickable slot', width: 300, height: 250, publisher: pub.id, allow_demand_sources: true });
    const source = await post('/v2/demand-sources', { name: 'Exchange', network: 'openrtb' });
    const endpoint = await post('/v2/demand-endpoints', { name: 'Exchange EU', demand_source: source.id, default_parameters: { url: `${b.url}/openrtb` }, supported_formats: ['display'], revenue_share: 80 });
    let answer: any;
    await within(10_000, async () => {
      answer = (await serveGet(serving(), `/adserve/;ID=${own.id};setID=${zone.id};type=json`)).body;
      return answer?.status === 'SUCCESS';
    }, 100);
    const href = /href="([^"]+)"/.exec(answer.placements.placement_1.body)![1];
    const click = new URL(href);
    expect(click.pathname).toBe('/serve/click');
    expect(click.search).toMatch(/^\?t=[^&]+&url=https%3A%2F%2Fbuyer\.example%2Flanding%3Fc%3D7%26d%3D8$/);

    // Not a landing page: refused, and nothing counted.
    const bad = await serveGet(serving(), `${click.pathname}${click.search.replace(/&url=.*$/, '&url=javascript%3Aalert(1)')}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ object: 'error', parameters: [{ field: 'url' }] });

    const followed = await serveGet(serving(), `${click.pathname}${click.search}`);
    expect(followed.status).toBe(302);
    expect(followed.headers.location).toBe('https://buyer.example/landing?c=7&d=8');

    // The click counts for the zone (its demand-source report has no clicks column, as the reference's has none).
    let summary: any;
    await within(10_000, async () => {
      const res = await own.live.get(`/v2/reports?type=zone&period=day&preset=today`);
      summary = res.body.data?.find((e: { id: number }) => e.id === zone.id)?.summary;
      return summary?.clicks === 1;
    }, 250);
    expect(summary).toMatchObject({ responses: 1, clicks: 1 });
    expect((await own.live.get(`/v2/reports/click-details?preset=today&limit=10`)).body.data).toHaveLength(1);
    expect(endpoint.demand_source).toBe(source.id);
  });

  it('leaves a zone that does not allow demand to its own placements, and a test key never asks a bidder', async () => {
    const b = await bidder((r, base) => bid(r, base, 9, '<div>never</div>'));
    const zone = await made('/v2/zones/standard', { name: 'Direct only', width: 300, height: 250, allow_demand_sources: false });
    await demandFor(`${b.url}/openrtb`, ['display']);
    await new Promise((r) => setTimeout(r, 1500));
    const answer = (await serveGet(serving(), `/adserve/;ID=${acct.id};setID=${zone.id};type=json`)).body;
    expect(answer.status).toBe('NO_ADS');

    const testZone = await acct.test.post('/v2/zones/standard', { name: 'Test programmatic', width: 300, height: 250, allow_demand_sources: true });
    expect(testZone.status).toBe(200);
    const testSource = await acct.test.post('/v2/demand-sources', { name: 'Test exchange', network: 'openrtb' });
    await acct.test.post('/v2/demand-endpoints', { name: 'Test endpoint', demand_source: testSource.body.id, default_parameters: { url: `${b.url}/openrtb` }, supported_formats: ['display'] });
    await new Promise((r) => setTimeout(r, 1500));
    const testAnswer = await acct.test.get(`/v2/adserve?ID=${acct.id}&setID=${testZone.body.id}&type=json`);
    expect(testAnswer.status).toBe(200);
    expect(testAnswer.body).toMatchObject({ status: 'NO_ADS', test: true });
    // Nor does a test key's decision debug: no auction section.
    const testDebug = await acct.test.get(`/v2/adserve?ID=${acct.id}&setID=${testZone.body.id}&type=json&debug=1`);
    expect(testDebug.status).toBe(200);
    expect(testDebug.body).toMatchObject({ object: 'decision_debug', test: true });
    expect(testDebug.body.auction).toBeUndefined();
    expect(b.requests).toHaveLength(0);
  });

  it('serves a winning bid without adm with the markup its nurl returns, calling it once; a failing or silent nurl leaves the zone to its placement within the budget', async () => {
    // An account of its own: the other tests' endpoints would bid for this zone too.
    const own = await newAccount();
    const fx = await zoneWithCampaign(own.live, [1]);
    expect((await own.live.put(`/v2/zones/standard/${fx.zone.id}`, { allow_demand_sources: true, bid_timeout_ms: 600 })).status).toBe(200);
    let mode: 'markup' | 'fail' | 'silent' = 'markup';
    const b = await bidder((r, base) => {
      const answer = bid(r, base, 3.5, '');
      delete (answer.seatbid[0].bid[0] as { adm?: string }).adm;
      return answer;
    }, (path, res) => {
      if (!path.startsWith('/win')) return void res.end();
      if (mode === 'markup') return void res.end('<div id="fetched">bought at ${AUCTION_PRICE}</div>');
      if (mode === 'fail') return void res.writeHead(503).end();
    });
    const source = await own.live.post('/v2/demand-sources', { name: 'Exchange', network: 'openrtb' });
    // In the placement's tier, so that the bid (3.5) beats its CPM (2.5) when its markup comes.
    const endpoint = await own.live.post('/v2/demand-endpoints', { name: 'Exchange markup by nurl', demand_source: source.body.id, default_parameters: { url: `${b.url}/openrtb` }, supported_formats: ['display'], revenue_share: 80, priority: 'standard' });
    expect(endpoint.status).toBe(200);
    const decision = async () => {
      const started = performance.now();
      const answer = (await serveGet(serving(), `/adserve/;ID=${own.id};setID=${fx.zone.id};type=json`)).body;
      return { placement: answer.placements?.placement_1, ms: performance.now() - started };
    };
    await within(10_000, async () => (await decision()).placement?.body?.includes('fetched'), 100);

    b.notices.length = 0;
    const won = await decision();
    expect(won.placement).toMatchObject({ body: '<div id="fetched">bought at 3.5</div>', width: '300', height: '250' });
    await new Promise((r) => setTimeout(r, 300));
    expect(b.notices).toEqual([expect.stringMatching(/^\/win\?price=3\.5&auction=[\w-]+$/)]);

    // A failing nurl, then one that never answers: the campaign's ad serves, within the zone's 600 ms.
    for (const m of ['fail', 'silent'] as const) {
      mode = m;
      b.notices.length = 0;
      const fallback = await decision();
      expect(fallback.placement?.banner_id).toBe(String(fx.items[0].id));
      expect(fallback.ms).toBeLessThan(600 + 400);
      expect(b.notices).toEqual([expect.stringMatching(/^\/win\?/)]);
    }
  });

  it('serves a winning VAST bid without adm with the VAST its nurl returns, tracked by this platform', async () => {
    const own = await newAccount();
    const b = await bidder((r, base) => {
      if (!r.imp[0].video) return undefined;
      const answer = bid(r, base, 6, '');
      delete (answer.seatbid[0].bid[0] as { adm?: string }).adm;
      return answer;
    }, (path, res) => void res.end(path.startsWith('/win') ? VAST_BID.replace('Buyer spot', 'Buyer spot at ${AUCTION_PRICE}') : ''));
    const pub = await own.live.post('/v2/publishers', { name: 'Video site' });
    const zone = await own.live.post('/v2/vast-zones', { name: 'Pre-roll', publisher: pub.body.id, rtb_options: { player_width: 640, player_height: 360, mime_types: ['video/mp4'], bid_floor: 2, bid_timeout_ms: 600 } });
    expect(zone.status).toBe(200);
    const source = await own.live.post('/v2/demand-sources', { name: 'Exchange', network: 'openrtb' });
    expect((await own.live.post('/v2/demand-endpoints', { name: 'Video exchange', demand_source: source.body.id, default_parameters: { url: `${b.url}/openrtb` }, supported_formats: ['video'], revenue_share: 80 })).status).toBe(200);
    let text = '';
    await within(10_000, async () => {
      b.notices.length = 0;
      text = (await serveGet(serving(), `/vast.spark?setID=${zone.body.id}&ID=${own.id}`)).text;
      return text.includes('buyer-ad');
    }, 100);
    expect(text).toContain('<AdTitle>Buyer spot at 6</AdTitle>');
    const parsed = await new VASTParser().parseVAST(new DOMParser().parseFromString(text, 'text/xml') as never);
    const impressions = (parsed.ads[0] as unknown as { impressionURLTemplates: { url: string }[] }).impressionURLTemplates.map((i) => i.url);
    expect(impressions).toEqual([expect.stringMatching(/\/vast\/imp\?t=/), 'https://buyer.example/imp']);
    const clicks = (parsed.ads[0].creatives[0] as unknown as { videoClickTrackingURLTemplates: { url: string }[] }).videoClickTrackingURLTemplates.map((c) => c.url);
    expect(clicks).toEqual([expect.stringMatching(/\/vast\/event\?t=.+&e=click$/)]);
    await new Promise((r) => setTimeout(r, 300));
    expect(b.notices).toEqual([expect.stringMatching(/^\/win\?price=6&auction=/)]);
    const ours = new URL(impressions[0]);
    expect((await serveGet(serving(), `${ours.pathname}${ours.search}`)).status).toBe(200);
    await within(5000, async () => b.notices.some((n) => n.startsWith('/bill?price=6')));
  });

  it('serves a winning VAST bid to a player with the platform impression beside the buyer one, and counts its click', async () => {
    const b = await bidder((r, base) => (r.imp[0].video ? bid(r, base, 6, VAST_BID) : undefined));
    const pub = await made('/v2/publishers', { name: 'Video site' });
    const zone = await made('/v2/vast-zones', { name: 'Programmatic pre-roll', publisher: pub.id, rtb_options: { player_width: 640, player_height: 360, mime_types: ['video/mp4'], min_duration: 5, max_duration: 30, linearity: 'linear', bid_floor: 2 } });
    await demandFor(`${b.url}/openrtb`, ['video']);
    let text = '';
    await within(10_000, async () => {
      text = (await serveGet(serving(), `/vast.spark?setID=${zone.id}&ID=${acct.id}`)).text;
      return text.includes('buyer-ad');
    }, 100);
    const request = b.requests[b.requests.length - 1];
    expect(request.imp[0]).toMatchObject({ bidfloor: 2, video: { w: 640, h: 360, mimes: ['video/mp4'], minduration: 5, maxduration: 30, linearity: 1 } });
    const parsed = await new VASTParser().parseVAST(new DOMParser().parseFromString(text, 'text/xml') as never);
    const impressions = (parsed.ads[0] as unknown as { impressionURLTemplates: { url: string }[] }).impressionURLTemplates.map((i) => i.url);
    expect(impressions).toEqual([expect.stringMatching(/\/vast\/imp\?t=/), 'https://buyer.example/imp']);
    const ours = new URL(impressions[0]);
    expect((await serveGet(serving(), `${ours.pathname}${ours.search}`)).status).toBe(200);
    await within(5000, async () => b.notices.some((n) => n.startsWith('/bill?price=6')));
    // The player's click tracker: ours, added to the buyer's Linear, counts the click in the zone's VAST report.
    const clicks = (parsed.ads[0].creatives[0] as unknown as { videoClickTrackingURLTemplates: { url: string }[] }).videoClickTrackingURLTemplates.map((c) => c.url);
    expect(clicks).toEqual([expect.stringMatching(/\/vast\/event\?t=.+&e=click$/)]);
    const tracker = new URL(clicks[0]);
    expect((await serveGet(serving(), `${tracker.pathname}${tracker.search}`)).status).toBe(200);
    await within(10_000, async () => {
      const res = await acct.live.get(`/v2/vast-reports?type=zone&period=day&preset=today`);
      return res.body.data?.find((e: { id: number }) => e.id === zone.id)?.summary?.clicks === 1;
    }, 250);
  });
});

describe('decision debug of a zone that asks demand', () => {
  /** A bid with every notice: none may arrive for a debug decision, which serves and bills nothing. */
  const noticed = (r: BidRequest, base: string, price: number) => {
    const answer = bid(r, base, price, '<div>debugged</div>');
    Object.assign(answer.seatbid[0].bid[0], { dealid: undefined, lurl: `${base}/loss?reason=\${AUCTION_LOSS}` });
    return answer;
  };

  async function ownAccount() {
    const own = await newAccount();
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await own.live.post(path, body);
      if (res.status !== 200) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const endpoint = async (name: string, url: string, extra: Record<string, unknown> = {}) => {
      const source = await post('/v2/demand-sources', { name: `${name} source`, network: 'openrtb' });
      return post('/v2/demand-endpoints', { name, demand_source: source.id, default_parameters: { url }, supported_formats: ['display'], ...extra });
    };
    return { own, post, endpoint };
  }

  it('lists every endpoint asked with its outcome, price and latency, and the winning bid; sends no notice', async () => {
    const { own, post, endpoint } = await ownAccount();
    const bidding = await bidder((r, base) => noticed(r, base, 3.5));
    const silent = await bidder(() => undefined);
    const slow = await new Bidder((_r, res) => void setTimeout(() => res.writeHead(204).end(), 1500)).start();
    bidders.push(slow);
    const zone = await post('/v2/zones/standard', { name: 'Debugged slot', width: 300, height: 250, allow_demand_sources: true, bid_timeout_ms: 300 });
    const winner = await endpoint('Bids', `${bidding.url}/openrtb`);
    const noBid = await endpoint('No bid', `${silent.url}/openrtb`);
    const late = await endpoint('Too late', `${slow.url}/openrtb`);

    const debug = async () => (await own.live.get(`/v2/adserve?ID=${own.id}&setID=${zone.id}&type=json&debug=1`)).body;
    let answer: any;
    await within(10_000, async () => (answer = await debug()).auction?.endpoints?.length === 3, 100);
    answer = await debug();
    expect(answer).toMatchObject({ object: 'decision_debug', test: false, eligible: [], excluded: [] });
    expect(answer.auction.timeout_ms).toBe(300);
    const byId = new Map<number, any>(answer.auction.endpoints.map((e: { demand_endpoint: number }) => [e.demand_endpoint, e]));
    expect(byId.get(winner.id)).toMatchObject({ demand_source: winner.demand_source, format: 'display', outcome: 'bid', price: 3.5, currency: 'USD', deal: null, won: true, loss_reason: null });
    expect(byId.get(winner.id).latency_ms).toBeLessThan(300);
    expect(byId.get(noBid.id)).toMatchObject({ demand_source: noBid.demand_source, outcome: 'no_bid', price: null, currency: null, won: false, loss_reason: null });
    expect(byId.get(late.id)).toMatchObject({ demand_source: late.demand_source, outcome: 'timeout', price: null, won: false, loss_reason: null, latency_ms: 300 });
    expect(answer.auction.winner).toEqual({ type: 'demand', demand_endpoint: winner.id, demand_source: winner.demand_source, price: 3.5, currency: 'USD', deal: null, priority: 'network' });

    // The endpoints were really asked, told that the auction is not billable (OpenRTB test mode)...
    expect(bidding.requests.length).toBeGreaterThan(0);
    expect(bidding.requests.every((r) => r.test === 1)).toBe(true);
    // ...and no win, loss or billing notice follows a decision that served nothing.
    await new Promise((r) => setTimeout(r, 500));
    expect([...bidding.notices, ...silent.notices, ...slow.notices]).toEqual([]);

    // The documented errors stay: another account's id is a 400, before any bidder is asked.
    const asked = bidding.requests.length;
    const other = await own.live.get(`/v2/adserve?ID=${own.id + 100000}&setID=${zone.id}&type=json&debug=1`);
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ object: 'error', parameters: [{ field: 'ID' }] });
    expect(bidding.requests.length).toBe(asked);
  });

  it('names a direct placement that outbids the bids of its tier, with the effective CPM it was compared at', async () => {
    const { own, endpoint } = await ownAccount();
    const fx = await zoneWithCampaign(own.live, [1]);
    expect((await own.live.put(`/v2/zones/standard/${fx.zone.id}`, { allow_demand_sources: true })).status).toBe(200);
    const b = await bidder((r, base) => noticed(r, base, 1.5));
    // The endpoint bids in the placement's tier, where a bid must beat the placement's effective CPM (2.5).
    const e = await endpoint('Cheap', `${b.url}/openrtb`, { priority: fx.placement.priority });
    let answer: any;
    await within(10_000, async () => (answer = (await own.live.get(`/v2/adserve?ID=${own.id}&setID=${fx.zone.id}&type=json&debug=1`)).body).auction?.endpoints?.[0]?.outcome === 'bid', 100);
    expect(answer.eligible).toEqual([expect.objectContaining({ placement: fx.placement.id })]);
    expect(answer.auction.endpoints).toEqual([expect.objectContaining({ demand_endpoint: e.id, outcome: 'bid', price: 1.5, won: false, loss_reason: 102 })]);
    expect(answer.auction.winner).toEqual({ type: 'placement', placement: fx.placement.id, ad_item: fx.items[0].id, priority: fx.placement.priority, ecpm: 2.5 });
    await new Promise((r) => setTimeout(r, 500));
    expect(b.notices).toEqual([]);
  });
});
