/**
 * The programmatic auction against real HTTP bidders on loopback: bid requests as OpenRTB 2.6 says,
 * the budget kept whatever a bidder does, floors, deals and seats, the tiers, and the win and loss
 * notices with their macros substituted. Decision data is built in memory; everything past it (the
 * demand client, undici's pool, the auction, decide) is the code serving runs.
 */
import { DecisionEntity, type DeepPartial } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { BidOutcome, EventKind, type ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { decide, systemClock } from '../decide';
import { dataFrom, type DecisionData } from '../decision-store';
import { DemandClient, demandNotices } from '../demand/demand-client';
import { isDemand, Programmatic } from '../demand/programmatic';
import type { EventSink } from '../events';
import { adMarkup, creativeOf, demandLanding, rendered } from '../render';
import type { ServeRequest } from '../request';
import { TokenSigner } from '../tracking';
import { Bidder, type Behaviour } from './bidder';

process.env.DEMAND_ALLOW_PRIVATE_NETWORKS = 'true';

const ACCOUNT = 7;
const ZONE = 10;

/** A bid answer: `price`, markup, and OpenRTB's notice URLs with their macros left for the exchange. */
function bidding(price: number, opts: { seat?: string; dealid?: string; adm?: string | null; url?: () => string } = {}): Behaviour {
  return (req, res) => {
    const base = opts.url?.() ?? '';
    const body = {
      id: req.id,
      bidid: 'response-1',
      cur: 'USD',
      seatbid: [{
        seat: opts.seat ?? 'seat-a',
        bid: [{
          id: 'bid-1', impid: req.imp[0].id, price, adid: 'ad-9', crid: 'creative-9', adomain: ['buyer.example'], w: 300, h: 250,
          // null: no adm, the markup is the answer to the win notice.
          ...(opts.adm === null ? {} : { adm: opts.adm ?? `<div class="rtb">price \${AUCTION_PRICE}</div>` }),
          ...(opts.dealid ? { dealid: opts.dealid } : {}),
          nurl: `${base}/win?auction=\${AUCTION_ID}&price=\${AUCTION_PRICE}&bid=\${AUCTION_BID_ID}&imp=\${AUCTION_IMP_ID}&seat=\${AUCTION_SEAT_ID}&ad=\${AUCTION_AD_ID}&cur=\${AUCTION_CURRENCY}`,
          burl: `${base}/bill?price=\${AUCTION_PRICE}&auction=\${AUCTION_ID}`,
          lurl: `${base}/loss?auction=\${AUCTION_ID}&reason=\${AUCTION_LOSS}&min=\${AUCTION_MIN_TO_WIN}`,
        }],
      }],
    };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };
}

const entity = (kind: string, id: number, fields: DeepPartial<DecisionEntity>) => DecisionEntity.fromPartial({ kind, id, account: ACCOUNT, ...fields });

function snapshot(bidders: Array<{ id: number; url: string; floor?: string; priority?: string; share?: string }>, zone: DeepPartial<DecisionEntity['zone']> = {}, direct?: { cpm: string; priority?: string; serveMethod?: string }, deals: Array<{ id: number; floor: string; seats: string[] }> = []): DecisionData {
  const entities = [
    entity('standard_zone', ZONE, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 3, allowDemand: true, bidFloor: '1', bidTimeoutMs: 1000, pmpDeals: deals.map((d) => d.id), ...zone } }),
    entity('demand_source', 40, { demandSource: { network: 'openrtb', active: true } }),
    ...bidders.map((b) => entity('demand_endpoint', b.id, {
      demandEndpoint: { source: 40, url: b.url, supportedFormats: ['display'], bidFloor: b.floor ?? '', revenueShare: b.share ?? '80', markupPercent: '', priority: b.priority ?? 'network', filterType: 'all', active: true },
    })),
    ...deals.map((d) => entity('pmp_deal', d.id, { pmpDeal: { name: `deal ${d.id}`, bidFloor: d.floor, whitelistSeats: d.seats } })),
  ];
  if (direct) {
    entities.push(
      entity('schedule', 50, { schedule: {} }),
      entity('image_ad_item', 100, { adItem: { width: 300, height: 250, location: 'https://example.com/', creativeUrl: 'https://cdn.example/direct.png' } }),
      entity('placement', 200, {
        placement: { zoneKind: 'standard_zone', zone: ZONE, advertisementKind: 'image_ad_item', advertisement: 100, schedule: 50, weight: 1, active: true, priority: direct.priority ?? 'network', serveMethod: direct.serveMethod ?? 'weight', pricingModel: 'cpm', price: direct.cpm, costCpm: direct.cpm },
      }),
    );
  }
  return dataFrom(entities);
}

const request = (): ServeRequest => ({
  account: ACCOUNT, zone: ZONE, type: 'json', rf: false, click: '', extra: '', ip: '203.0.113.9', ua: 'Mozilla/5.0 test', keywords: [], data: {}, pid: '', debug: false,
  consent: { gdpr: 1, gdprConsent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA', usPrivacy: '1YNN', gpp: '', gppSid: [] },
});

const visitor = { ip: '203.0.113.9', ua: 'Mozilla/5.0 test', userId: 'hashed-visitor', page: 'https://news.example/story', secure: true };
const signer = new TokenSigner('programmatic-auction-test');
const ctx = { visitor: 'hashed-visitor', ip: '203.0.113.9', userAgent: 'Mozilla/5.0 test', referrer: 'https://news.example/story' };

describe('programmatic auction with real HTTP bidders', () => {
  const client = new DemandClient();
  const events: ServingEvent[] = [];
  const sink = { push: (e: ServingEvent) => events.push(e) } as unknown as EventSink;
  const programmatic = new Programmatic(client, sink);
  const bidders: Bidder[] = [];
  const bidder = async (b: Behaviour) => {
    const x = await new Bidder(b).start();
    bidders.push(x);
    return x;
  };

  afterEach(async () => {
    await Promise.all(bidders.splice(0).map((b) => b.stop()));
    events.length = 0;
  });
  afterAll(() => client.close());

  /** demand_notices_total for one kind and result. */
  async function noticeCount(kind: string, result: string): Promise<number> {
    const { values } = await demandNotices.get();
    return values.find((v) => v.labels.kind === kind && v.labels.result === result)?.value ?? 0;
  }

  // The first request of a process loads undici's HTTP machinery; a decision's budget is for the steady state.
  beforeAll(async () => {
    const warm = await new Bidder((req, res) => (req.id === 'answer' ? res.writeHead(204).end() : undefined)).start();
    await client.bid(warm.url, '{"id":"answer"}', AbortSignal.timeout(2000));
    await client.bid(warm.url, '{"id":"silent"}', AbortSignal.timeout(50)).catch(() => undefined);
    await warm.stop();
  });

  /** One live decision of the zone: the auction opened, the bids awaited, decide, then settlement. */
  async function run(data: DecisionData) {
    const started = performance.now();
    const auction = programmatic.open(data, request(), visitor, false)!;
    expect(auction).toBeDefined();
    const visitorFacts = { now: new Date(), keywords: [], data: {}, frequency: [], platform: { device: 'desktop', os: '', browser: '' } as never, accountTimezone: 'UTC' } as never;
    const [chosen] = (await auction.decide((bids) => decide({ account: ACCOUNT, zone: ZONE, visitor: visitorFacts, want: 'one' }, data, { bids }, systemClock))).ads;
    const ms = performance.now() - started;
    auction.settle(chosen, 'decision-1', ctx, chosen && !isDemand(chosen) ? Number(chosen.cost.cpm) : undefined);
    const event = events.find((e) => e.kind === EventKind.AUCTION);
    return { chosen, ms, event, auctionId: auction.opportunity.auctionId };
  }

  it('sends an OpenRTB 2.6 request and the bidder that pays most wins; the winner gets nurl, the loser lurl, macros substituted', async () => {
    const high = await bidder(bidding(4.25, { url: () => high.url }));
    const low = await bidder(bidding(2.5, { url: () => low.url }));
    const data = snapshot([{ id: 1, url: high.url }, { id: 2, url: low.url }], { iabCategories: ['IAB12'], rtbPlacementId: 'homepage-top' });
    const { chosen, event, auctionId } = await run(data);
    expect(isDemand(chosen)).toBe(true);
    expect(isDemand(chosen) && chosen.demand).toMatchObject({ endpoint: 1, price: 4.25, adm: '<div class="rtb">price 4.25</div>', width: 300, height: 250 });
    expect(isDemand(chosen) && chosen.demand.billingUrl).toBe(`${high.url}/bill?price=4.25&auction=${auctionId}`);

    const req = high.requests[0];
    expect(req).toMatchObject({
      id: auctionId, at: 1, tmax: 1000, cur: ['USD'],
      imp: [{ id: '1', tagid: 'homepage-top', bidfloor: 1, bidfloorcur: 'USD', secure: 1, banner: { w: 300, h: 250, format: [{ w: 300, h: 250 }] } }],
      site: { id: String(ZONE), page: 'https://news.example/story', domain: 'news.example', publisher: { id: '3' }, cat: ['IAB12'] },
      device: { ua: 'Mozilla/5.0 test', ip: '203.0.113.9' },
      user: { id: 'hashed-visitor', consent: 'CPXxRfAPXxRfAAfKABENB-CgAAAAAAAAAAYgAAAAAAAA' },
      regs: { gdpr: 1, us_privacy: '1YNN' },
    });

    expect(await high.noticesArrived(1)).toEqual([`/win?auction=${auctionId}&price=4.25&bid=response-1&imp=1&seat=seat-a&ad=ad-9&cur=USD`]);
    expect(await low.noticesArrived(1)).toEqual([`/loss?auction=${auctionId}&reason=102&min=4.25`]);
    expect(event?.bids.map((b) => [b.demandEndpoint, b.outcome, b.cpm, b.won, b.lossReason])).toEqual([
      [1, BidOutcome.BID, '4.25', true, 0],
      [2, BidOutcome.BID, '2.5', false, 102],
    ]);
    expect(event).toMatchObject({ id: 'decision-1:auction', account: ACCOUNT, zone: ZONE, publisher: 3, demandEndpoint: 1, demandSource: 40, price: '4.25', revenueShare: '80' });
  });

  it('fetches the markup of a bid without adm from its nurl when it wins: called once, its answer served', async () => {
    const markupless = await bidder(bidding(4.25, { adm: null, url: () => markupless.url }));
    markupless.notice = (path, res) => (path.startsWith('/win') ? res.end(`<div class="fetched">won at \${AUCTION_PRICE} for ${path.length}</div>`) : res.end());
    const low = await bidder(bidding(2.5, { url: () => low.url }));
    const data = snapshot([{ id: 1, url: markupless.url }, { id: 2, url: low.url }]);
    const { chosen, event, auctionId } = await run(data);
    const win = `/win?auction=${auctionId}&price=4.25&bid=response-1&imp=1&seat=seat-a&ad=ad-9&cur=USD`;
    expect(isDemand(chosen) && chosen.demand).toMatchObject({ endpoint: 1, price: 4.25, adm: `<div class="fetched">won at 4.25 for ${win.length}</div>` });
    const x = rendered(creativeOf(data, chosen!)!, chosen!, { click: '', extra: '' }, signer, 'https://ads.example', false, Date.now());
    expect(x.body).toBe(`<div class="fetched">won at 4.25 for ${win.length}</div>`);
    expect(await low.noticesArrived(1)).toEqual([`/loss?auction=${auctionId}&reason=102&min=4.25`]);
    // Its nurl was its win notice: no second call.
    await new Promise((r) => setTimeout(r, 200));
    expect(markupless.notices).toEqual([win]);
    expect(event?.bids.map((b) => [b.demandEndpoint, b.outcome, b.won, b.lossReason])).toEqual([[1, BidOutcome.BID, true, 0], [2, BidOutcome.BID, false, 102]]);
    expect(event).toMatchObject({ demandEndpoint: 1, price: '4.25' });
  });

  it('drops a winner whose nurl brings no markup (an error, an empty answer) with loss reason 7; the next bid wins', async () => {
    const failing = await bidder(bidding(6, { adm: null, url: () => failing.url }));
    failing.notice = (path, res) => void (path.startsWith('/win') ? res.writeHead(500).end('<div>error page</div>') : res.end());
    const empty = await bidder(bidding(5, { adm: null, url: () => empty.url }));
    const next = await bidder(bidding(3, { url: () => next.url }));
    const before = await noticeCount('nurl_markup', 'failed');
    const { chosen, event, auctionId } = await run(snapshot([{ id: 1, url: failing.url }, { id: 2, url: empty.url }, { id: 3, url: next.url }], {}, { cpm: '1' }));
    expect(isDemand(chosen) && chosen.demand).toMatchObject({ endpoint: 3, adm: '<div class="rtb">price 3</div>' });
    expect(await failing.noticesArrived(2)).toEqual([expect.stringMatching(/^\/win\?/), `/loss?auction=${auctionId}&reason=7&min=3`]);
    expect(await empty.noticesArrived(2)).toEqual([expect.stringMatching(/^\/win\?/), `/loss?auction=${auctionId}&reason=7&min=3`]);
    expect(await next.noticesArrived(1)).toEqual([expect.stringMatching(/^\/win\?auction=[\w-]+&price=3&/)]);
    expect(event?.bids.map((b) => [b.demandEndpoint, b.outcome, b.cpm, b.won, b.lossReason])).toEqual([
      [1, BidOutcome.BID, '6', false, 7],
      [2, BidOutcome.BID, '5', false, 7],
      [3, BidOutcome.BID, '3', true, 0],
    ]);
    expect(await noticeCount('nurl_markup', 'failed')).toBe(before + 2);
  });

  it('falls back to the direct placement within the budget when the nurl of a winner without adm never answers', async () => {
    const hanging = await bidder(bidding(9, { adm: null, url: () => hanging.url }));
    hanging.notice = (path, res) => (path.startsWith('/win') ? undefined : res.end());
    const data = snapshot([{ id: 1, url: hanging.url }], { bidTimeoutMs: 300 }, { cpm: '2' });
    const before = await noticeCount('nurl_markup', 'timeout');
    const { chosen, ms, event, auctionId } = await run(data);
    expect(chosen?.placement).toBe(200);
    // The budget covers the bids and the markup together (slack for a loaded machine's timers).
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(300 + 150);
    expect(await hanging.noticesArrived(2)).toEqual([expect.stringMatching(/^\/win\?/), `/loss?auction=${auctionId}&reason=7&min=2`]);
    expect(event?.bids[0]).toMatchObject({ outcome: BidOutcome.BID, won: false, lossReason: 7 });
    expect(await noticeCount('nurl_markup', 'timeout')).toBe(before + 1);
  });

  it('still refuses a bid with neither adm nor nurl, with loss reason 7', async () => {
    const bare = await bidder((req, res) => res.end(JSON.stringify({ id: req.id, seatbid: [{ bid: [{ id: 'b', impid: '1', price: 5, lurl: `${bare.url}/loss?reason=\${AUCTION_LOSS}` }] }] })));
    const data = snapshot([{ id: 1, url: bare.url }], {}, { cpm: '2' });
    const { chosen, event } = await run(data);
    expect(chosen?.placement).toBe(200);
    expect(event?.bids[0]).toMatchObject({ outcome: BidOutcome.REJECTED, lossReason: 7 });
    expect(await bare.noticesArrived(1)).toEqual(['/loss?reason=7']);
  });

  it('turns away a bid under the floor (the zone floor raised by the endpoint floor) with loss reason 100', async () => {
    const under = await bidder(bidding(1.4, { url: () => under.url }));
    const data = snapshot([{ id: 1, url: under.url, floor: '1.5' }]);
    const { chosen, event } = await run(data);
    expect(chosen).toBeUndefined();
    expect(under.requests[0].imp[0].bidfloor).toBe(1.5);
    expect(await under.noticesArrived(1)).toEqual([expect.stringMatching(/^\/loss\?auction=[\w-]+&reason=100&min=$/)]);
    expect(event?.bids[0]).toMatchObject({ outcome: BidOutcome.BELOW_FLOOR, cpm: '1.4', won: false, lossReason: 100 });
  });

  it('answers within the budget when a bidder never answers, and counts it a timeout', async () => {
    const silent = await bidder(() => undefined);
    const quick = await bidder(bidding(2, { url: () => quick.url }));
    const data = snapshot([{ id: 1, url: silent.url }, { id: 2, url: quick.url }], { bidTimeoutMs: 250 });
    // Five decisions, each beside a plain timer of the same length started with it: on a loaded machine
    // both fire late alike, so what the decision adds past the budget is measured against that timer.
    const overruns: number[] = [];
    for (let i = 0; i < 5; i++) {
      events.length = 0;
      const timerStarted = performance.now();
      const timer = new Promise<number>((r) => setTimeout(() => r(performance.now() - timerStarted), 250));
      const { chosen, ms, event } = await run(data);
      const timerMs = await timer;
      overruns.push(ms - Math.max(250, timerMs));
      expect(ms).toBeGreaterThanOrEqual(249);
      expect(ms).toBeLessThan(250 + 1000);
      expect(isDemand(chosen) && chosen.demand.endpoint).toBe(2);
      expect(event?.bids.map((b) => b.outcome)).toEqual([BidOutcome.TIMEOUT, BidOutcome.BID]);
    }
    overruns.sort((a, b) => a - b);
    expect(overruns[2]).toBeLessThan(20);
    expect(silent.requests).toHaveLength(5);
  });

  it('counts an answer that is not OpenRTB as an error and decides without it', async () => {
    const garbage = await bidder((_req, res) => res.end('<html>oops</html>'));
    const wrongId = await bidder((_req, res) => res.end(JSON.stringify({ id: 'another-auction', seatbid: [{ bid: [{ id: 'x', impid: '1', price: 9, adm: 'x' }] }] })));
    const failing = await bidder((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    const data = snapshot([{ id: 1, url: garbage.url }, { id: 2, url: wrongId.url }, { id: 3, url: failing.url }], {}, { cpm: '2' });
    const { chosen, event } = await run(data);
    expect(chosen?.placement).toBe(200);
    expect(event?.bids.map((b) => b.outcome)).toEqual([BidOutcome.ERROR, BidOutcome.ERROR, BidOutcome.ERROR]);
  });

  it('lets only the buyer of a PMP deal win it: another seat is turned away (104), and a private auction ignores open bids', async () => {
    const buyer = await bidder(bidding(3, { seat: 'buyer-seat', dealid: '900', url: () => buyer.url }));
    const intruder = await bidder(bidding(8, { seat: 'other-seat', dealid: '900', url: () => intruder.url }));
    const open = await bidder(bidding(6, { url: () => open.url }));
    const data = snapshot([{ id: 1, url: buyer.url }, { id: 2, url: intruder.url }, { id: 3, url: open.url }], { privateAuction: true }, undefined, [{ id: 900, floor: '2.5', seats: ['buyer-seat'] }]);
    const { chosen, event } = await run(data);
    expect(buyer.requests[0].imp[0].pmp).toEqual({ private_auction: 1, deals: [{ id: '900', bidfloor: 2.5, bidfloorcur: 'USD', wseat: ['buyer-seat'] }] });
    expect(isDemand(chosen) && chosen.demand).toMatchObject({ endpoint: 1, deal: '900', price: 3 });
    expect(event?.bids.map((b) => [b.outcome, b.lossReason, b.deal])).toEqual([
      [BidOutcome.BID, 0, '900'],
      [BidOutcome.REJECTED, 104, '900'],
      [BidOutcome.REJECTED, 103, ''],
    ]);
    expect(await intruder.noticesArrived(1)).toEqual([expect.stringContaining('reason=104')]);
  });

  it('a direct placement of a higher tier wins whatever the bid; in the same tier the higher effective CPM wins', async () => {
    const rich = await bidder(bidding(50, { url: () => rich.url }));
    const sponsored = await run(snapshot([{ id: 1, url: rich.url }], {}, { cpm: '1', priority: 'sponsorship' }));
    expect(sponsored.chosen?.placement).toBe(200);
    expect(await rich.noticesArrived(1)).toEqual([expect.stringMatching(/reason=102&min=1$/)]);
    events.length = 0;

    const modest = await bidder(bidding(3, { url: () => modest.url }));
    const sameTierDirectWins = await run(snapshot([{ id: 1, url: modest.url }], {}, { cpm: '4', priority: 'network' }));
    expect(sameTierDirectWins.chosen?.placement).toBe(200);
    events.length = 0;
    const sameTierBidWins = await run(snapshot([{ id: 1, url: modest.url }], {}, { cpm: '2.5', priority: 'network' }));
    expect(isDemand(sameTierBidWins.chosen)).toBe(true);
  });

  it('stops asking a demand source once its billed impressions reach its spend limit for the period', async () => {
    const b = await bidder(bidding(3, { url: () => b.url }));
    const data = snapshot([{ id: 1, url: b.url }]);
    const source = data.demandSource(ACCOUNT, 40)!;
    Object.assign(source, { spendLimit: '0.005', spendLimitPeriod: 'monthly' });
    for (let i = 0; i < 2; i++) {
      const { chosen } = await run(data);
      expect(isDemand(chosen)).toBe(true);
      // Each impression costs 3 / 1000; billed twice for the same decision, it counts once.
      programmatic.bill(data, { id: `d${i}`, account: ACCOUNT, demandSource: 40, price: '3', billingUrl: '' });
      programmatic.bill(data, { id: `d${i}`, account: ACCOUNT, demandSource: 40, price: '3', billingUrl: '' });
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(programmatic.open(data, request(), visitor, false)).toBeUndefined();
    // A source whose limit starts later is not limited yet.
    Object.assign(source, { spendLimitStart: new Date(Date.now() + 86_400_000).toISOString() });
    expect(programmatic.open(data, request(), visitor, false)).toBeDefined();
  });

  it("asks native demand with the zone's OpenRTB native template and shows the answer through the template", async () => {
    const native = await bidder((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({
        id: req.id,
        seatbid: [{ seat: 's', bid: [{ id: 'n1', impid: '1', price: 2, adm: JSON.stringify({ native: { assets: [{ id: 31, title: { text: 'Running shoes <50% off>' } }, { id: 32, img: { url: 'https://cdn.buyer.example/shoe.jpg', w: 600, h: 314 } }, { id: 33, data: { value: 'Shoe Co' } }], link: { url: 'https://buyer.example/shoes' }, imptrackers: ['https://buyer.example/imp'] } }) }] }],
      }));
    });
    const data = dataFrom([
      entity('standard_zone', ZONE, { zone: { width: 0, height: 0, dimensions: 'dynamic', publisher: 3, allowDemand: true, bidTimeoutMs: 1000 } }),
      entity('demand_source', 40, { demandSource: { network: 'openrtb', active: true } }),
      entity('demand_endpoint', 1, { demandEndpoint: { source: 40, url: native.url, supportedFormats: ['native'], revenueShare: '100', priority: 'network', filterType: 'all', active: true } }),
      entity('ortb_native_template', 30, { ortbNativeTemplate: { htmlTemplate: '<a href="{{click_url}}"><img src="{{image}}"><b>{{title}}</b><i>{{Sponsor}}</i></a>' } }),
      entity('ortb_native_title_asset', 31, { ortbNativeAsset: { template: 30, asset: 'title', textLength: 60, name: 'Headline' } }),
      entity('ortb_native_image_asset', 32, { ortbNativeAsset: { template: 30, asset: 'image', type: 3, width: 600, height: 314, mimes: ['image/jpeg'], name: 'Main' } }),
      entity('ortb_native_data_asset', 33, { ortbNativeAsset: { template: 30, asset: 'data', type: 1, textLength: 25, name: 'Sponsor' } }),
      entity('ortb_native_ad', 34, { ortbNativeAd: { zone: ZONE, template: 30, demandEndpoint: 0, contextType: 1, contextSubType: 12, placementType: 1 } }),
    ]);
    const { chosen } = await run(data);
    const imp = native.requests[0].imp[0];
    expect(imp.banner).toBeUndefined();
    expect(imp.native?.ver).toBe('1.2');
    expect(JSON.parse(imp.native!.request as string)).toEqual({
      ver: '1.2', context: 1, contextsubtype: 12, plcmttype: 1,
      assets: [
        { id: 31, required: 1, title: { len: 60 } },
        { id: 32, required: 1, img: { type: 3, w: 600, h: 314, mimes: ['image/jpeg'] } },
        { id: 33, required: 1, data: { type: 1, len: 25 } },
      ],
    });
    // The link goes through this platform's click URL, so the click counts before the landing page.
    const x = rendered(creativeOf(data, chosen!)!, chosen!, { click: '', extra: '' }, signer, 'https://ads.example', false, Date.now());
    const click = `https://ads.example/serve/click?t=${encodeURIComponent(signer.sign(x.decision))}&url=`;
    expect(x.body).toBe(
      `<a href="${click}https%3A%2F%2Fbuyer.example%2Fshoes"><img src="https://cdn.buyer.example/shoe.jpg"><b>Running shoes &lt;50% off&gt;</b><i>Shoe Co</i></a>`
        + '<img src="https://buyer.example/imp" width="1" height="1" alt="" style="display:none" />',
    );
    expect(demandLanding(new URL(`${click}https%3A%2F%2Fbuyer.example%2Fshoes`).search)).toBe('https://buyer.example/shoes');
  });

  it("asks each endpoint with the zone's native ad made for it, else the zone-wide one, whatever their order", async () => {
    const noBid = () => bidder((_req, res) => res.writeHead(204).end());
    const own = await noBid();
    const other = await noBid();
    const endpoint = (id: number, url: string) => entity('demand_endpoint', id, { demandEndpoint: { source: 40, url, supportedFormats: ['native'], revenueShare: '100', priority: 'network', filterType: 'all', active: true } });
    const data = dataFrom([
      entity('standard_zone', ZONE, { zone: { width: 0, height: 0, dimensions: 'dynamic', publisher: 3, allowDemand: true, bidTimeoutMs: 1000 } }),
      entity('demand_source', 40, { demandSource: { network: 'openrtb', active: true } }),
      endpoint(1, own.url),
      endpoint(2, other.url),
      entity('ortb_native_template', 30, { ortbNativeTemplate: { htmlTemplate: '<b>{{title}}</b>' } }),
      entity('ortb_native_title_asset', 31, { ortbNativeAsset: { template: 30, asset: 'title', textLength: 60, name: 'Headline' } }),
      // The zone-wide native ad comes first (a lower id); endpoint 1 has one of its own after it.
      entity('ortb_native_ad', 34, { ortbNativeAd: { zone: ZONE, template: 30, demandEndpoint: 0, contextType: 1, contextSubType: 12, placementType: 1 } }),
      entity('ortb_native_ad', 35, { ortbNativeAd: { zone: ZONE, template: 30, demandEndpoint: 1, contextType: 2, contextSubType: 20, placementType: 4 } }),
    ]);
    await run(data);
    const asked = (b: Bidder) => JSON.parse(b.requests[0].imp[0].native!.request as string);
    expect(asked(own)).toMatchObject({ context: 2, contextsubtype: 20, plcmttype: 4 });
    expect(asked(other)).toMatchObject({ context: 1, contextsubtype: 12, plcmttype: 1 });
  });

  it('judges markup a nurl returns by the format asked: a native zone drops HTML (204) and shows the next bid\'s native response', async () => {
    const nativeBid = (price: number, url: () => string): Behaviour => (req, res) => res.end(JSON.stringify({ id: req.id, seatbid: [{ seat: 's', bid: [{ id: `n${price}`, impid: '1', price, nurl: `${url()}/win?p=\${AUCTION_PRICE}`, lurl: `${url()}/loss?reason=\${AUCTION_LOSS}` }] }] }));
    const html = await bidder(nativeBid(5, () => html.url));
    html.notice = (path, res) => res.end(path.startsWith('/win') ? '<div>not a native response</div>' : '');
    const native = await bidder(nativeBid(3, () => native.url));
    native.notice = (path, res) => res.end(path.startsWith('/win') ? JSON.stringify({ native: { assets: [{ id: 31, title: { text: 'Fetched at ${AUCTION_PRICE}' } }], link: { url: 'https://buyer.example/n' } } }) : '');
    const data = dataFrom([
      entity('standard_zone', ZONE, { zone: { width: 0, height: 0, dimensions: 'dynamic', publisher: 3, allowDemand: true, bidTimeoutMs: 1000 } }),
      entity('demand_source', 40, { demandSource: { network: 'openrtb', active: true } }),
      entity('demand_endpoint', 1, { demandEndpoint: { source: 40, url: html.url, supportedFormats: ['native'], revenueShare: '100', priority: 'network', filterType: 'all', active: true } }),
      entity('demand_endpoint', 2, { demandEndpoint: { source: 40, url: native.url, supportedFormats: ['native'], revenueShare: '100', priority: 'network', filterType: 'all', active: true } }),
      entity('ortb_native_template', 30, { ortbNativeTemplate: { htmlTemplate: '<b>{{title}}</b>' } }),
      entity('ortb_native_title_asset', 31, { ortbNativeAsset: { template: 30, asset: 'title', textLength: 60, name: 'Headline' } }),
      entity('ortb_native_ad', 34, { ortbNativeAd: { zone: ZONE, template: 30, demandEndpoint: 0 } }),
    ]);
    const { chosen, event } = await run(data);
    expect(isDemand(chosen) && chosen.demand).toMatchObject({ endpoint: 2, adm: '<b>Fetched at 3</b>' });
    expect(event?.bids.map((b) => [b.demandEndpoint, b.won, b.lossReason])).toEqual([[1, false, 204], [2, true, 0]]);
    expect(await html.noticesArrived(2)).toEqual(['/win?p=5', '/loss?reason=204']);
    await new Promise((r) => setTimeout(r, 100));
    expect(native.notices).toEqual(['/win?p=3']);
  });

  it("points a display bid's click macros at this platform's signed click URL, escaped where the macro asks", async () => {
    const adm = '<a href="%%CLICK_URL_UNESC%%https%3A%2F%2Fbuyer.example%2Fa"><img src="x.png"></a>'
      + '<a href="https://dsp.example/c?r=%%CLICK_URL_ESC%%https%253A%252F%252Fbuyer.example%252Fb">b</a>'
      + '<script>var c = "${CLICK_URL}";</script>';
    await bidder(bidding(4, { adm }));
    const data = snapshot([{ id: 1, url: bidders[0].url }]);
    const { chosen } = await run(data);
    // A publisher's click tracker in front, with a quote that must not end the markup's attribute.
    const x = rendered(creativeOf(data, chosen!)!, chosen!, { click: 'https://pub.example/c?x="&to=', extra: '' }, signer, 'https://ads.example', false, Date.now());
    const click = `https://pub.example/c?x=%22&to=https://ads.example/serve/click?t=${encodeURIComponent(signer.sign(x.decision))}&url=`;
    expect(x.body).toBe(
      `<a href="${click}https%3A%2F%2Fbuyer.example%2Fa"><img src="x.png"></a>`
        + `<a href="https://dsp.example/c?r=${encodeURIComponent(click)}https%253A%252F%252Fbuyer.example%252Fb">b</a>`
        + `<script>var c = "${click}";</script>`,
    );
    expect(x.item.adItem!.customHtml).toBe(x.body);
    expect(adMarkup(x)).toBe(x.body);
    // What the buyer appends, escaped or not; anything but an http(s) URL is no landing page.
    expect(demandLanding('?t=abc&url=https%3A%2F%2Fbuyer.example%2Fa%3Fq%3D1%26r%3D2')).toBe('https://buyer.example/a?q=1&r=2');
    expect(demandLanding('?t=abc&url=https://buyer.example/a?q=1&r=2')).toBe('https://buyer.example/a?q=1&r=2');
    expect(demandLanding('?t=abc&url=')).toBe('');
    expect(demandLanding('?t=abc')).toBe('');
    expect(demandLanding('?t=abc&url=javascript%3Aalert(1)')).toBeUndefined();
    expect(demandLanding('?t=abc&url=%E0%A4%A')).toBeUndefined();
  });

  it('asks no endpoint of a zone that does not allow demand, nor an inactive endpoint', async () => {
    const b = await bidder(bidding(5));
    expect(programmatic.asks(snapshot([{ id: 1, url: b.url }], { allowDemand: false }), ACCOUNT, ZONE, false)).toBe(false);
    const inactive = snapshot([{ id: 1, url: b.url }]);
    inactive.demandEndpoints(ACCOUNT)[0].endpoint.active = false;
    expect(programmatic.asks(inactive, ACCOUNT, ZONE, false)).toBe(false);
    const paused = snapshot([{ id: 1, url: b.url }]);
    paused.demandSource(ACCOUNT, 40)!.active = false;
    expect(programmatic.asks(paused, ACCOUNT, ZONE, false)).toBe(false);
    expect(programmatic.asks(snapshot([{ id: 1, url: b.url }]), ACCOUNT, ZONE, false)).toBe(true);
    expect(b.requests).toHaveLength(0);
  });
});
