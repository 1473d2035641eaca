import type http from 'node:http';
import { EventKind } from '../../proto/gen/adserver/reporting/v1/events';
import { serveBaseUrl } from '../shared/config';
import { errorFields, log } from '../shared/log';
import { countRequest } from '../shared/metrics';
import { tracedRequest } from '../shared/telemetry';
import { callerTenant } from './caller';
import { Conversions } from './conversions';
import { decide, systemClock, type Clock, type DecisionRequest } from './decide';
import { TIERS, type Candidate, type DecisionData } from './decision-store';
import type { DeliveryLedger } from './delivery-ledger';
import { decisionEvent, type EventContext, type EventSink } from './events';
import { headerBid, isHeaderBidRequest, type HeaderBidSeam } from './header-bidding';
import { adHtml, AD_DOCUMENT_CSP, ASYNC_JS, creativeOf, demandLanding, iframeDocument, jsDocument, LANDING_PARAM, placementJson, rendered, type Creative, type Rendered } from './render';
import { adserveParams, cookies, HttpError, invalid, readBody, safeDecode, serveRequest, tagRequest, type ServeRequest } from './request';
import type { GeoDatabase } from './targeting/geo';
import type { PageMemory } from './targeting/unique-delivery';
import type { Decision, TokenSigner } from './tracking';
import { Visitors } from './visitor';
import { allowPlayerOrigin, VideoServing } from './video-serving';
import { effectiveCpm } from './decide';
import { isDemand } from './demand/candidate';
import { CURRENCY } from './demand/openrtb';
import type { PendingAuction, Programmatic } from './demand/programmatic';

/**
 * The public serving paths (AdButler's forms) and the tag paths inventory hands out under
 * SERVE_BASE_URL/serve/..., plus /v2/adserve for the gateway (which authenticates the key and passes
 * account and mode with the internal token). Each request is parsed (request.ts), decided from memory
 * (decide.ts), rendered (render.ts) and tracked (tracking.ts, events.ts); this file routes them.
 */

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

export { AD_DOCUMENT_CSP };

export interface ServeDeps {
  data: { current: DecisionData };
  signer: TokenSigner;
  events: EventSink;
  /** Whether a first snapshot of decision data has arrived (readiness). */
  ready(): boolean;
  geo: GeoDatabase;
  pages: PageMemory;
  /** Signs the frequency-cap cookie. */
  secret: string;
  /** Every account's test-mode decision data, kept like the live data by a stream of its own. */
  testData: { current: DecisionData };
  /** Whether the first test-mode snapshot has arrived. */
  testReady(): boolean;
  clock?: Clock;
  /** Delivery goals and pacing of live decisions (test decisions record nothing, so none apply). */
  delivery?: DeliveryLedger;
  /** Programmatic demand (OpenRTB bidders) of live decisions; test decisions never ask it. */
  programmatic?: Programmatic;
}

export function createServeHandler(deps: ServeDeps): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  const clock = deps.clock ?? systemClock;
  const visitors = new Visitors(deps.geo, deps.signer, deps.secret);
  const conversions = new Conversions(deps.data, deps.signer, deps.events, visitors, deps.delivery);
  const video = new VideoServing({
    data: deps.data, signer: deps.signer, events: deps.events, visitors, delivery: deps.delivery, clock,
    decide: async (data, r, req, accepts, res) => {
      const decided = await decideFor(data, r, req, 'one', accepts, true, res);
      return { ...decided, settle: res ? (chosen: Candidate | undefined, id: string) => settle(decided.auction, chosen, id, req, res, r, data) : undefined };
    },
    bill: (d) => deps.programmatic?.bill(deps.data.current, d),
  });
  const delivery = deps.delivery;
  /** Tracking URLs point at the serving origin ad tags use, whatever host this request came through. */
  const base = serveBaseUrl();

  function record(kind: EventKind.RESPONSE | EventKind.IMPRESSION | EventKind.CLICK, d: Decision, ctx: EventContext): void {
    if (d.test) return;
    deps.events.push(decisionEvent(kind, d, ctx));
    if (!d.placement) {
      // A programmatic win: its impression is billable to the buyer (OpenRTB's burl), once per decision.
      if (kind === EventKind.IMPRESSION && d.demandEndpoint) deps.programmatic?.bill(deps.data.current, d);
      return;
    }
    if (kind === EventKind.IMPRESSION) delivery?.record(deps.data.current, 'views', d);
    else if (kind === EventKind.CLICK) delivery?.record(deps.data.current, 'clicks', d);
  }

  /** The visitor's event context, made once per request (a new visitor's cookie id is minted once). */
  const contexts = new WeakMap<http.IncomingMessage, EventContext>();
  function contextOf(req: http.IncomingMessage, res: http.ServerResponse, ip = ''): EventContext {
    let ctx = contexts.get(req);
    if (!ctx) contexts.set(req, (ctx = visitors.context(req, res, ip)));
    return ctx;
  }

  /** The goals a live decision reads; test data records nothing, so no goal applies to it. */
  const gateFor = (data: DecisionData) => (data === deps.data.current ? delivery : undefined);

  /** The decision for a parsed request: its visitor's facts and page memory gathered, then `decide`. */
  async function decideFor(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, want: DecisionRequest['want'], accepts?: (c: Candidate) => boolean, video = false, res?: http.ServerResponse) {
    // Programmatic demand: live single-ad decisions of zones that ask it; the bids travel while the rest is gathered.
    const auction = res && want === 'one' && data === deps.data.current ? openAuction(data, r, req, res, video) : undefined;
    const { request, counters } = await gather(data, r, req, want, accepts, video);
    // With demand, the auction decides: a winning bid whose markup its win notice brings may fall back.
    const result = auction ? await auction.decide((bids) => decide(request, data, { ...counters, bids }, clock)) : decide(request, data, counters, clock);
    return { ...result, auction };
  }

  /** What `decide` reads besides the snapshot: the request with its visitor's facts, delivery goals and page memory. */
  async function gather(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, want: DecisionRequest['want'], accepts: ((c: Candidate) => boolean) | undefined, video: boolean) {
    const gate = gateFor(data);
    // The first request for a goal on this replica waits for its counter; later ones never do.
    const counting = gate?.prepare(data, r.account, r.zone, clock.now());
    if (counting) await counting;
    const now = clock.now();
    // Unique delivery: what this page view showed already, read only for zones that ask for it.
    const shownOnPage = r.pid && data.zone(r.account, r.zone, video)?.zone?.uniqueDelivery ? (await deps.pages.served(r.account, r.pid).catch(() => undefined))?.adItems : undefined;
    const request: DecisionRequest = {
      account: r.account,
      zone: r.zone,
      size: r.size,
      visitor: visitors.facts(data, r, req, now),
      want,
      accepts,
      video,
    };
    return { request, counters: { shownOnPage, delivery: gate } };
  }

  /** Without `res` (decision debug) the auction is a debug one: no visitor cookie minted, nothing settled. */
  function openAuction(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, res: http.ServerResponse | undefined, video: boolean): PendingAuction | undefined {
    const p = deps.programmatic;
    if (!p || !p.asks(data, r.account, r.zone, video)) return undefined;
    const ctx = res ? contextOf(req, res, r.ip) : visitors.context(req, undefined, r.ip);
    if (!deps.geo.loaded) void deps.geo.load();
    const referrer = String(req.headers.referer ?? '');
    return p.open(data, r, { ip: ctx.ip, ua: ctx.userAgent, geo: deps.geo.lookup(ctx.ip), userId: ctx.visitor, page: referrer, secure: referrer.startsWith('https:') }, video, !res);
  }

  /**
   * Decision debug: every ad of the zone with the rule that excluded it, and, when a live zone asks
   * demand, its auction. The endpoints are really asked (a debug answer shows what they answer now),
   * with OpenRTB `test: 1`; the winner is decided as a live `one` decision would be, probing delivery
   * without changing it. Like the rest of debug it serves no ad, so nothing is recorded, counted or
   * notified (no nurl, lurl or burl).
   */
  async function debugDecision(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, video: boolean) {
    const live = data === deps.data.current;
    const asks = live && !!deps.programmatic?.asks(data, r.account, r.zone, video);
    const auction = asks ? openAuction(data, r, req, undefined, video) : undefined;
    const { request, counters } = await gather(data, r, req, 'all', undefined, video);
    const { ads, excluded } = decide(request, data, counters, clock);
    if (!asks) return { ads, excluded };
    const bids = auction ? await auction.bids : [];
    const [chosen] = decide({ ...request, want: 'one', probe: true }, data, { ...counters, bids }, clock).ads;
    let winner: Record<string, unknown> | null = null;
    if (isDemand(chosen)) {
      const d = chosen.demand;
      winner = { type: 'demand', demand_endpoint: d.endpoint, demand_source: d.source, price: d.price, currency: CURRENCY, deal: d.deal || null, priority: TIERS[chosen.tier] };
    } else if (chosen) {
      // The effective CPM a bid of its tier had to beat (a live loss notice's minimum to win).
      winner = { type: 'placement', placement: chosen.placement, ad_item: chosen.adItem, priority: TIERS[chosen.tier], ecpm: effectiveCpm(chosen, counters.delivery) };
    }
    return { ads, excluded, auction: { timeout_ms: auction?.opportunity.tmax ?? null, endpoints: auction?.debugView(chosen) ?? [], winner } };
  }

  /** Win and loss notices and the auction's event, once the decision is made. */
  function settle(auction: PendingAuction | undefined, chosen: Candidate | undefined, decisionId: string, req: http.IncomingMessage, res: http.ServerResponse, r: ServeRequest, data: DecisionData): void {
    if (!auction) return;
    const ecpm = chosen && !isDemand(chosen) ? effectiveCpm(chosen, gateFor(data)) : undefined;
    auction.settle(chosen, decisionId, contextOf(req, res, r.ip), ecpm);
  }

  /** The one ad for a request, rendered with its tracking URLs; the page remembers it for unique delivery. */
  async function decideOne(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, test: boolean, accepts?: (c: Creative) => boolean, res?: http.ServerResponse): Promise<Rendered | undefined> {
    const shows = accepts ? (c: Candidate) => { const cr = creativeOf(data, c); return !!cr && accepts(cr); } : undefined;
    // Bids carry markup only: a form that needs an image never asks demand.
    const { ads: [chosen], auction } = await decideFor(data, r, req, 'one', shows, false, accepts ? undefined : res);
    const creative = chosen && creativeOf(data, chosen);
    if (!chosen || !creative) {
      if (res) settle(auction, undefined, '', req, res, r, data);
      return undefined;
    }
    if (r.pid && !test && !isDemand(chosen) && data.targetingOf(chosen).uniqueDelivery) await deps.pages.remember(r.account, r.pid, chosen.adItem, chosen.campaign).catch(() => undefined);
    const x = rendered(creative, chosen, r, deps.signer, base, test, clock.now());
    if (!test && !isDemand(chosen)) gateFor(data)?.decided(data, chosen, clock.now(), x.decision.id);
    if (res) settle(auction, chosen, x.decision.id, req, res, r, data);
    return x;
  }

  /** Header bidding (Prebid's adbutler adapter, `type=hbr`) bids with the JSON form's decision. */
  const bidding: HeaderBidSeam = {
    decide: (r, req, res) => decideOne(deps.data.current, r, req, false, undefined, res),
    responded: (x, r, req, res) => record(EventKind.RESPONSE, x.decision, contextOf(req, res, r.ip)),
    ecpm: delivery && ((c) => delivery.ecpm(c)),
  };

  /** The JSON answer of /adserve, /serve/json and /v2/adserve. */
  async function adserveJson(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, res: http.ServerResponse, test: boolean): Promise<Record<string, unknown>> {
    const refresh = data.zone(r.account, r.zone)?.zone?.refreshFrequency ?? 0;
    const q = `ID=${r.account};setID=${r.zone};type=json${r.size ? `;size=${r.size.width}x${r.size.height}` : ''}`;
    const testFlag = test ? { test: true } : {};
    if (r.type === 'jsonr') {
      // Every ad handed out carries signed tracking URLs a client may fire, so each is a response:
      // impressions can never exceed responses.
      const ranked = (await decideFor(data, r, req, 'ranked')).ads;
      const placements: Record<string, Record<string, string>> = {};
      let n = 0;
      const ctx = ranked.length ? visitors.context(req, res, r.ip) : undefined;
      for (const c of ranked) {
        const creative = creativeOf(data, c);
        if (!creative) continue;
        const x = rendered(creative, c, r, deps.signer, base, test, clock.now());
        if (!test) gateFor(data)?.decided(data, c, clock.now(), x.decision.id);
        placements[`placement_${++n}`] = placementJson(x, r, refresh, base, q);
        record(EventKind.RESPONSE, x.decision, ctx!);
      }
      return n ? { status: 'SUCCESS', placements, ...testFlag } : { status: 'NO_ADS', ...testFlag };
    }
    const x = await decideOne(data, r, req, test, undefined, res);
    if (!x) return { status: 'NO_ADS', ...testFlag };
    record(EventKind.RESPONSE, x.decision, contextOf(req, res, r.ip));
    return { status: 'SUCCESS', placements: { placement_1: placementJson(x, r, refresh, base, q) }, ...testFlag };
  }

  /** /v2/adserve, forwarded by the gateway with the key's account and mode and the internal token. */
  async function v2Adserve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const tenant = callerTenant(req);
    if (!tenant) throw new HttpError(403, 'authentication_error', '/v2/adserve is answered through the API gateway with an API key.');
    let params: URLSearchParams | Record<string, unknown> = url.searchParams;
    if (req.method === 'POST') {
      const raw = await readBody(req, 64 * 1024);
      if (raw.trim()) {
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          throw new HttpError(400, 'invalid_request_error', 'The request body is not valid JSON.');
        }
        if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'invalid_request_error', 'The request body must be a JSON object of adserve parameters.');
        params = { ...Object.fromEntries(url.searchParams), ...(body as Record<string, unknown>) };
      }
    }
    const r = serveRequest(params);
    if (r.account !== tenant.accountId) throw invalid('ID', `'ID' must be the id of the account your key belongs to (${tenant.accountId}).`);
    const test = tenant.mode === 'test';
    if (test && !deps.testReady()) {
      res.setHeader('Retry-After', '1');
      throw new HttpError(503, 'service_unavailable_error', 'Test data is still loading; retry shortly.');
    }
    const data = test ? deps.testData.current : deps.data.current;
    if (r.debug) {
      // Decision debug for the account's own key: every ad of the zone and the rule that excluded it.
      // A VAST zone's id is debugged as the player's request would be decided.
      const video = !data.zone(r.account, r.zone) && !!data.zone(r.account, r.zone, true);
      const { ads, excluded, auction } = await debugDecision(data, r, req, video);
      return sendJson(res, 200, {
        object: 'decision_debug',
        zone: r.zone,
        test,
        eligible: ads.map((c) => ({
          placement: c.placement, ad_item: c.adItem, ad_item_type: c.adItemKind, campaign: c.campaign || null, weight: c.weight,
          priority: TIERS[c.tier], serve_method: c.serveMethod, ...pacingOf(data, r.account, c.placement),
        })),
        excluded: excluded.map((e) => ({ placement: e.placement, ad_item: e.adItem || null, rule: e.rule, detail: e.detail, ...pacingOf(data, r.account, e.placement) })),
        ...(auction ? { auction } : {}),
      });
    }
    sendJson(res, 200, await adserveJson(data, r, req, res, test));
  }

  /** A placement's goals (limit and count) and a smooth one's pace (expected against delivered) for decision debug. */
  function pacingOf(data: DecisionData, account: number, placement: number): { goals?: unknown[]; pacing?: Record<string, unknown> } {
    const gate = gateFor(data);
    if (!gate) return {};
    const goals = gate.goalsView(data, account, placement, clock.now());
    const p = gate.pacingOf(data, account, placement, clock.now());
    return { ...(goals.length ? { goals } : {}), ...(p ? { pacing: { expected: p.expected, delivered: p.delivered, quota: p.quota, behind: p.behind } } : {}) };
  }

  async function click(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams, search: string): Promise<void> {
    let d: Decision | undefined;
    if (q.has('t')) {
      d = deps.signer.verify(q.get('t') ?? '');
      if (!d) throw new HttpError(400, 'invalid_request_error', 'This click link is not valid: it was altered or not made by this ad server.');
    } else {
      // The image tag's link: the ad its image showed in this browser (a signed cookie per zone).
      const r = tagRequest(q);
      const shown = deps.signer.verify(safeDecode(cookies(req)[`adsrv_i${r.zone}`] ?? ''));
      if (shown && shown.account === r.account && shown.zone === r.zone) d = shown;
      else {
        // Nothing shown here before: follow an eligible ad without counting a click nobody saw.
        const x = await decideOne(deps.data.current, r, req, false, (y) => !!y.item.adItem?.location);
        return redirectTo(res, x ? destination(x.item.adItem!.location, r.extra) : '');
      }
    }
    const item = deps.data.current.get(d.account, d.adItemKind, d.adItem);
    // A programmatic win has no location of ours: its markup appended the buyer's landing page to the click URL.
    const landing = d.demandEndpoint && !d.placement ? demandLanding(search) : '';
    if (landing === undefined) throw invalid(LANDING_PARAM, `'${LANDING_PARAM}' (the landing page the ad appended to its click URL) must be an http(s) URL.`);
    if (d.test) return redirectTo(res, '');
    record(EventKind.CLICK, d, visitors.context(req, res));
    visitors.setCookie(res, `adsrv_c=${encodeURIComponent(deps.signer.sign(d))}; Max-Age=2592000`);
    const location = landing || item?.adItem?.location || item?.vastAd?.location;
    redirectTo(res, location ? destination(location, d.extra) : '');
  }

  function beacon(res: http.ServerResponse, req: http.IncomingMessage, q: URLSearchParams, count: boolean): void {
    const d = deps.signer.verify(q.get('t') ?? '');
    if (!d) throw new HttpError(400, 'invalid_request_error', 'This tracking link is not valid: it was altered or not made by this ad server.');
    if (count) {
      record(EventKind.IMPRESSION, d, visitors.context(req, res));
      visitors.countView(deps.data.current, d, req, res);
    }
    sendGif(res);
  }

  /** iframe, js and image forms: the served document is the impression. */
  async function documentForm(form: 'iframe' | 'js' | 'image', req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): Promise<void> {
    const r = tagRequest(q);
    const x = await decideOne(deps.data.current, r, req, false, form === 'image' ? (y) => !!y.imageUrl : undefined, res);
    if (x) {
      const ctx = contextOf(req, res, r.ip);
      record(EventKind.RESPONSE, x.decision, ctx);
      record(EventKind.IMPRESSION, x.decision, ctx);
      visitors.countView(deps.data.current, x.decision, req, res);
    }
    if (form === 'image') {
      if (!x) return sendGif(res);
      visitors.setCookie(res, `adsrv_i${r.zone}=${encodeURIComponent(deps.signer.sign(x.decision))}; Max-Age=86400`);
      res.writeHead(302, { Location: x.imageUrl, 'Cache-Control': 'no-store' });
      return void res.end();
    }
    const html = x ? adHtml(x) : '';
    if (form === 'iframe') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': AD_DOCUMENT_CSP });
      return void res.end(iframeDocument(html));
    }
    res.writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(jsDocument(html));
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<string> {
    const p = url.pathname;
    const method = req.method ?? 'GET';
    const getOnly = () => {
      if (method !== 'GET' && method !== 'HEAD') throw new HttpError(501, 'method_not_supported_error', `${method} is not supported on ${p}.`);
    };
    if (p === '/healthz') {
      // Not ready until the first snapshot is in memory: before that every zone would answer NO_ADS.
      const ready = deps.ready();
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ok' : 'loading decision data', events_pending: deps.events.pending });
      return 'healthz';
    }
    if (p === '/v2/adserve') {
      if (method !== 'GET' && method !== 'POST') throw new HttpError(501, 'method_not_supported_error', `${method} is not supported on /v2/adserve.`);
      await v2Adserve(req, res, url);
      return 'v2-adserve';
    }
    // The JSON forms are read by scripts of any page (no credentials involved).
    if (p === '/adserve' || p.startsWith('/adserve/') || p === '/serve/json') res.setHeader('Access-Control-Allow-Origin', '*');
    if (p === '/adserve' || p.startsWith('/adserve/')) {
      getOnly();
      const params = adserveParams(p, url.searchParams);
      if (isHeaderBidRequest(params)) {
        sendJson(res, 200, await headerBid(params, req, res, bidding));
        return 'adserve-hbr';
      }
      sendJson(res, 200, await adserveJson(deps.data.current, serveRequest(params), req, res, false));
      return 'adserve';
    }
    switch (p) {
      case '/serve/json':
        getOnly();
        sendJson(res, 200, await adserveJson(deps.data.current, tagRequest(url.searchParams), req, res, false));
        return 'serve-json';
      case '/serve/iframe':
      case '/serve/js':
      case '/serve/image':
        getOnly();
        await documentForm(p.slice(7) as 'iframe' | 'js' | 'image', req, res, url.searchParams);
        return p.slice(1);
      case '/serve/async.js':
        getOnly();
        res.writeHead(200, { 'Content-Type': 'application/javascript; charset=utf-8', 'Cache-Control': 'max-age=300' });
        res.end(ASYNC_JS);
        return 'serve-async';
      case '/serve/click':
        getOnly();
        await click(req, res, url.searchParams, url.search);
        return 'serve-click';
      case '/serve/imp':
        getOnly();
        beacon(res, req, url.searchParams, true);
        return 'serve-imp';
      case '/serve/view':
        getOnly();
        beacon(res, req, url.searchParams, false);
        return 'serve-view';
      case '/serve/conversion':
        getOnly();
        conversions.record(req, res, url.searchParams);
        sendGif(res);
        return 'serve-conversion';
      case '/vast.spark':
        getOnly();
        allowPlayerOrigin(req, res);
        await video.serve(req, res, url.searchParams);
        return 'vast';
      case '/vast/imp':
      case '/vast/event':
      case '/vast/error':
      case '/vast/click':
      case '/vast/companion-click':
        getOnly();
        allowPlayerOrigin(req, res);
        video.track(p.slice(6) as 'imp' | 'event' | 'error' | 'click' | 'companion-click', req, res, url.searchParams);
        return `vast-${p.slice(6)}`;
      default:
        throw new HttpError(404, 'resource_not_found_error', `No route ${method} ${p.slice(0, 200)} on the ad server.`);
    }
  }

  return (req, res) => {
    let routeName = 'unmatched';
    tracedRequest(req, res, () => serve(req, res, (name) => (routeName = name)), () => routeName);
  };

  function serve(req: http.IncomingMessage, res: http.ServerResponse, routed: (name: string) => void): void {
    const started = process.hrtime.bigint();
    let routeName = 'unmatched';
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.on('finish', () => countRequest(routeName, req.method ?? 'GET', res.statusCode, 'serve', started));
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://serving.invalid');
    } catch {
      return sendJson(res, 400, { object: 'error', type: 'invalid_request_error', message: 'The request URL is malformed.', http_status: 400 });
    }
    route(req, res, url).then(
      (name) => routed((routeName = name)),
      (err: unknown) => {
        if (res.headersSent) return res.destroy();
        if (err instanceof HttpError) {
          return sendJson(res, err.status, { object: 'error', type: err.type, message: err.message, http_status: err.status, ...(err.parameters ? { parameters: err.parameters } : {}) });
        }
        log.error('serve request failed', { path: url.pathname, ...errorFields(err) });
        sendJson(res, 500, { object: 'error', type: 'api_error', message: 'Internal error.', http_status: 500 });
      },
    );
  }
}

/** A destination with the tag's `extra` passed on as query parameters. */
export function destination(location: string, extra: string): string {
  if (!extra) return location;
  const hash = location.indexOf('#');
  const head = hash < 0 ? location : location.slice(0, hash);
  const tail = hash < 0 ? '' : location.slice(hash);
  return `${head}${head.includes('?') ? '&' : '?'}${extra.replace(/^[?&]+/, '')}${tail}`;
}

function redirectTo(res: http.ServerResponse, target: string): void {
  // The WHATWG serialisation percent-encodes what a header may not carry raw (non-ASCII paths and queries).
  let location = '';
  try {
    location = target ? new URL(target).href : '';
  } catch {
    /* a destination that is not a URL: no redirect */
  }
  if (!location) {
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    return void res.end();
  }
  res.writeHead(302, { Location: location, 'Cache-Control': 'no-store' });
  res.end();
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
  res.end(text);
}

function sendGif(res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'image/gif', 'Content-Length': GIF.length, 'Cache-Control': 'no-store' });
  res.end(GIF);
}
