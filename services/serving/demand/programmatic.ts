import type { Bid } from 'iab-openrtb/dist/v26';
import type { DecisionDemandEndpoint, DecisionEntity } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { BidOutcome, EventKind, ServingEvent, type DemandBid } from '../../../proto/gen/adserver/reporting/v1/events';
import { envInt } from '../../shared/config';
import { errorFields, log } from '../../shared/log';
import { geoTargetAdmits } from '../../targeting/geo-target';
import { TIERS, type Candidate, type DecisionData } from '../decision-store';
import { isDemand, type DemandCandidate } from './candidate';
import { visitorFields, type EventContext, type EventSink } from '../events';
import type { ServeRequest } from '../request';
import type { GeoLocation } from '../targeting/geo';
import { randomToken, type Decision } from '../tracking';
import { SpendLimits } from './spend-limits';
import { DemandClient, DemandError, demandLatency, demandNotices, demandRequests } from './demand-client';
import { bidRequest, CURRENCY, judgeAnswer, LOSS, markupByNotice, markupFits, money, nativeResponseOf, substituteMacros, type Judged, type NativeRequest, type NoticeFacts, type OfferedDeal, type Opportunity } from './openrtb';

/**
 * Programmatic demand in a decision: which demand endpoints a zone asks, the bid requests sent to them
 * in parallel within the zone's budget, their bids as candidates of the decision (decide.ts weighs them
 * against direct placements), and afterwards the notices (nurl to the winner, lurl with the loss reason
 * to every other bid) and the auction's event for the demand-source report.
 */

const DEFAULT_BUDGET_MS = envInt('DEMAND_TIMEOUT_MS', 150, 1);

export { isDemand, type DemandCandidate, type DemandWin } from './candidate';

interface Asked {
  endpoint: number;
  e: DecisionDemandEndpoint;
  format: 'display' | 'native' | 'video';
  judged?: Judged;
  outcome: BidOutcome;
  ms: number;
  candidate?: DemandCandidate;
  /** Its bid won and its markup was fetched from its nurl: that was its win notice. */
  fetched?: boolean;
  /** Its bid won but its markup could not be fetched: the loss reason it got instead. */
  dropped?: number;
}

/** The endpoints a zone may ask, and in which format, for one snapshot. */
function endpointsFor(data: DecisionData, account: number, zoneId: number, video: boolean): Array<{ id: number; e: DecisionDemandEndpoint; format: 'display' | 'native' | 'video' }> {
  return data.memo(`demand-endpoints:${account}:${zoneId}:${video ? 1 : 0}`, () => {
    const zone = data.zone(account, zoneId, video)?.zone;
    if (!zone?.allowDemand) return [];
    const out: Array<{ id: number; e: DecisionDemandEndpoint; format: 'display' | 'native' | 'video' }> = [];
    for (const { id, endpoint: e } of data.demandEndpoints(account)) {
      if (!e.active || !e.url || !data.demandSource(account, e.source)?.active) continue;
      const listed = (video ? e.filteredVastZones : e.filteredZones).includes(zoneId);
      if ((e.filterType === 'whitelist' && !listed) || (e.filterType === 'blacklist' && listed)) continue;
      const formats = e.supportedFormats;
      if (video) {
        if (formats.includes('video')) out.push({ id, e, format: 'video' });
      } else if (formats.includes('native') && nativeAdFor(data, account, zoneId, id)) {
        out.push({ id, e, format: 'native' });
      } else if (formats.includes('display') && zone.width > 0 && zone.height > 0 && (!e.allowedSizes.length || e.allowedSizes.includes(`${zone.width}x${zone.height}`))) {
        out.push({ id, e, format: 'display' });
      }
    }
    return out;
  });
}

/**
 * The zone's OpenRTB native ad an endpoint is asked with: the one naming that endpoint, else the first
 * that names none (for every endpoint), so a native ad set up for one buyer is not shadowed by a
 * zone-wide one made before it.
 */
function nativeAdFor(data: DecisionData, account: number, zoneId: number, endpoint: number) {
  const ads = data.ortbNativeAds(account, zoneId);
  return ads.find((n) => n.ad.demandEndpoint === endpoint) ?? ads.find((n) => !n.ad.demandEndpoint);
}

/** The zone's native request (OpenRTB Native 1.2) for an endpoint, from its native ad's template. */
function nativeRequestOf(data: DecisionData, account: number, zoneId: number, endpoint: number): { request: NativeRequest; template: string } | undefined {
  const ad = nativeAdFor(data, account, zoneId, endpoint);
  if (!ad) return undefined;
  const template = data.ortbNativeTemplate(account, ad.ad.template);
  if (!template) return undefined;
  const assets = data.ortbNativeAssets(account, ad.ad.template).map(({ id, asset: a }) => {
    if (a.asset === 'title') return { id, required: 1 as const, title: { len: a.textLength || 90 } };
    if (a.asset === 'image') return { id, required: 1 as const, img: { type: a.type || 3, ...(a.width ? { w: a.width } : {}), ...(a.height ? { h: a.height } : {}), ...(a.minWidth ? { wmin: a.minWidth } : {}), ...(a.minHeight ? { hmin: a.minHeight } : {}), ...(a.mimes.length ? { mimes: a.mimes } : {}) } };
    return { id, required: 1 as const, data: { type: a.type || 1, ...(a.textLength ? { len: a.textLength } : {}) } };
  });
  const n = ad.ad;
  return {
    request: { ver: '1.2', ...(n.contextType ? { context: n.contextType } : {}), ...(n.contextSubType ? { contextsubtype: n.contextSubType } : {}), ...(n.placementType ? { plcmttype: n.placementType } : {}), assets },
    template: template.htmlTemplate,
  };
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A native response shown through the zone's template: {{title}}, {{image}}, {{icon}}, {{data}}, {{click_url}} and each asset by name. */
function renderNative(data: DecisionData, account: number, zoneId: number, endpoint: number, adm: string): string {
  const spec = nativeRequestOf(data, account, zoneId, endpoint);
  const native = nativeResponseOf(adm);
  if (!spec || !native) return '';
  const tpl = nativeAdFor(data, account, zoneId, endpoint)!;
  const assets = data.ortbNativeAssets(account, tpl.ad.template);
  // The landing page behind this platform's click URL (its macro is filled once the decision is signed), so the click counts.
  const landing = native.link?.url;
  const values: Record<string, string> = { click_url: landing ? `\${CLICK_URL}${encodeURIComponent(landing)}` : '' };
  for (const a of native.assets) {
    const def = assets.find((x) => x.id === a.id)?.asset;
    const value = a.title?.text ?? a.img?.url ?? a.data?.value ?? '';
    const generic = a.title ? 'title' : a.img ? (def?.type === 1 ? 'icon' : 'image') : 'data';
    values[generic] ??= value;
    if (def?.name) values[def.name] = value;
  }
  const trackers = [...(native.imptrackers ?? []), ...(native.eventtrackers ?? []).filter((t) => t.event === 1 && t.method === 1 && t.url).map((t) => t.url!)];
  const body = spec.template.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_m, name: string) => escapeHtml(values[name] ?? ''));
  return body + trackers.map((u) => `<img src="${escapeHtml(u)}" width="1" height="1" alt="" style="display:none" />`).join('');
}

/** The OpenRTB part of a request that the caller knows (the visitor and page). */
export interface DemandVisitor {
  ip: string;
  ua: string;
  geo?: GeoLocation;
  /** The hashed visitor key. */
  userId: string;
  page: string;
  secure: boolean;
}

export class Programmatic {
  constructor(
    private readonly client: DemandClient,
    private readonly events: EventSink,
    /** Whether this is the first claim of a key (a day long); shared by replicas when it is Redis. */
    private readonly once: (key: string) => Promise<boolean> = localOnce(),
    private readonly spend = new SpendLimits(),
  ) {}

  /** Whether a zone asks demand at all (cheap: memoised per snapshot). */
  asks(data: DecisionData, account: number, zone: number, video: boolean): boolean {
    return endpointsFor(data, account, zone, video).length > 0;
  }

  /**
   * Starts the auction of one live request; its bids arrive by the zone's budget. A `debug` auction
   * (decision debug) asks the same endpoints with OpenRTB's `test: 1` (not billable) and is never
   * settled: no notice, no metric, no event.
   */
  open(data: DecisionData, r: ServeRequest, visitor: DemandVisitor, video: boolean, debug = false): PendingAuction | undefined {
    const zoneEntity = data.zone(r.account, r.zone, video);
    const zone = zoneEntity?.zone;
    if (!zone) return undefined;
    const now = Date.now();
    const endpoints = endpointsFor(data, r.account, r.zone, video).filter(({ e }) => {
      if (!this.spend.allows(r.account, e.source, data.demandSource(r.account, e.source)!, now)) return false;
      const geo = e.geoTarget ? data.get(r.account, 'geo_target', e.geoTarget)?.geoTarget : undefined;
      return !geo || geoTargetAdmits(geo, visitor.geo);
    });
    if (!endpoints.length) return undefined;
    const deals: OfferedDeal[] = [];
    for (const id of zone.pmpDeals) {
      const d = data.pmpDeal(r.account, id);
      if (!d) continue;
      const geo = d.geoTarget ? data.get(r.account, 'geo_target', d.geoTarget)?.geoTarget : undefined;
      if (geo && !geoTargetAdmits(geo, visitor.geo)) continue;
      deals.push({ id: String(id), floor: d.bidFloor ? Number(d.bidFloor) : 0, seats: d.whitelistSeats });
    }
    const budget = zone.bidTimeoutMs || DEFAULT_BUDGET_MS;
    const o: Opportunity = {
      auctionId: randomToken(12),
      account: r.account,
      zone: r.zone,
      publisher: zone.publisher,
      video,
      size: r.size ?? (zone.width && zone.height ? { width: zone.width, height: zone.height } : undefined),
      player: zone.player,
      tagId: zone.rtbPlacementId || String(r.zone),
      categories: zone.iabCategories,
      page: visitor.page,
      secure: visitor.secure,
      ip: r.ip || visitor.ip,
      ua: r.ua || visitor.ua,
      geo: visitor.geo,
      userId: visitor.userId,
      consent: r.consent,
      deals,
      privateAuction: zone.privateAuction && deals.length > 0,
      tmax: budget,
      zoneFloor: zone.bidFloor ? Number(zone.bidFloor) : 0,
      minPayout: zone.minPayout ? Number(zone.minPayout) : 0,
    };
    return new PendingAuction(this.client, this.events, data, zoneEntity!, o, endpoints, budget, debug);
  }

  /**
   * A programmatic impression: its cost counts against its source's spend limit and its billing notice
   * goes to the buyer, once per decision however often its pixel fires (claimed in Redis when replicas
   * share one, else in this process).
   */
  bill(data: DecisionData, d: Pick<Decision, 'id' | 'account' | 'demandSource' | 'price' | 'billingUrl'>): void {
    void this.once(`billed:${d.id}`).then((first) => {
      if (!first) return;
      const source = d.demandSource ? data.demandSource(d.account, d.demandSource) : undefined;
      if (source) this.spend.record(d.account, d.demandSource!, source, Number(d.price), Date.now());
      if (d.billingUrl) this.client.notify('burl', d.billingUrl);
    });
  }
}

export class PendingAuction {
  readonly bids: Promise<DemandCandidate[]>;
  private readonly asked: Asked[];
  private settled = false;
  /** When the zone's budget ends (performance.now()): bids, and markup fetched from a win notice, by then. */
  private readonly deadline: number;

  constructor(
    private readonly client: DemandClient,
    private readonly events: EventSink,
    private readonly data: DecisionData,
    private readonly zone: DecisionEntity,
    readonly opportunity: Opportunity,
    endpoints: Array<{ id: number; e: DecisionDemandEndpoint; format: 'display' | 'native' | 'video' }>,
    budget: number,
    /** Decision debug: bid requests say `test: 1`, and nothing is counted or notified. */
    readonly debug = false,
  ) {
    this.asked = endpoints.map(({ id, e, format }) => ({ endpoint: id, e, format, outcome: BidOutcome.TIMEOUT, ms: budget }));
    const controller = new AbortController();
    const started = performance.now();
    this.deadline = started + budget;
    const calls = this.asked.map((a) => this.ask(a, controller.signal, started));
    this.bids = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, budget);
      void Promise.allSettled(calls).then(() => {
        clearTimeout(timer);
        resolve();
      });
    }).then(() => {
      // Whatever has not answered by now is a timeout; its request is abandoned.
      controller.abort();
      return this.asked.filter((a) => a.candidate).map((a) => a.candidate!);
    });
  }

  private async ask(a: Asked, signal: AbortSignal, started: number): Promise<void> {
    const o = this.opportunity;
    if (a.format === 'native') {
      const spec = nativeRequestOf(this.data, o.account, o.zone, a.endpoint);
      if (!spec) return void (a.outcome = BidOutcome.ERROR);
      o.native = spec.request;
    }
    const request = bidRequest(o, a.e, a.format);
    if (this.debug) request.test = 1;
    const body = JSON.stringify(request);
    const label = String(a.endpoint);
    try {
      const answer = await this.client.bid(a.e.url, body, signal);
      if (signal.aborted) return; // answered after the deadline: still a timeout
      a.ms = answer.ms;
      a.judged = judgeAnswer(o, a.e, a.format, answer.status, answer.body);
      a.outcome = a.judged.outcome;
      if (a.outcome === BidOutcome.BID) a.candidate = this.candidateOf(a);
    } catch (err) {
      if (signal.aborted || (err instanceof DemandError && err.timedOut)) return;
      a.outcome = BidOutcome.ERROR;
      a.ms = performance.now() - started;
    } finally {
      if (!this.debug) demandLatency.observe({ demand_endpoint: label }, (signal.aborted && a.outcome === BidOutcome.TIMEOUT ? a.ms : performance.now() - started) / 1000);
    }
  }

  private candidateOf(a: Asked): DemandCandidate {
    const o = this.opportunity;
    const bid = a.judged!.bid!;
    const facts = this.factsOf(a, bid, a.judged!.seat);
    facts.price = bid.price;
    const width = bid.w || o.size?.width || o.player?.width || 0;
    const height = bid.h || o.size?.height || o.player?.height || 0;
    const byNotice = markupByNotice(bid);
    const adm = byNotice ? '' : this.markupOf(a, facts, bid.adm!);
    const tier = TIERS.indexOf((a.e.priority || 'network') as (typeof TIERS)[number]);
    const price = money(bid.price);
    return {
      account: o.account,
      zone: o.zone,
      publisher: o.publisher,
      placement: 0,
      assignment: 0,
      campaign: 0,
      advertiser: 0,
      adItem: 0,
      adItemKind: a.format === 'video' ? 'demand_vast' : 'demand_bid',
      channel: 0,
      geoTarget: 0,
      weight: 1,
      tier: tier < 0 ? 2 : tier,
      pricingModel: 'cpm',
      price,
      schedule: 0,
      serveMethod: 'auction',
      shareOfVoice: -1,
      cost: { cpm: price, cpc: '', cpa: '' },
      fallback: false,
      demand: {
        endpoint: a.endpoint,
        source: a.e.source,
        revenueShare: a.e.revenueShare || '100',
        price: bid.price,
        format: a.format,
        adm,
        markupUrl: byNotice ? substituteMacros(bid.nurl!, facts) : '',
        width,
        height,
        billingUrl: bid.burl ? substituteMacros(bid.burl, facts) : '',
        // Judged bids are checked for what the auction needs only: an adomain that is not a list of text is none.
        advertiserDomain: Array.isArray(bid.adomain) && typeof bid.adomain[0] === 'string' ? bid.adomain[0].slice(0, 253) : '',
        creativeId: bid.crid ?? bid.adid ?? '',
        deal: bid.dealid ?? '',
      },
    };
  }

  /** A bid's markup as served: the auction's macros substituted, a native response shown through the zone's template. */
  private markupOf(a: Asked, facts: NoticeFacts, raw: string): string {
    const adm = substituteMacros(raw, facts, false);
    const o = this.opportunity;
    return a.format === 'native' ? renderNative(this.data, o.account, o.zone, a.endpoint, adm) : adm;
  }

  /**
   * The decision `decide` makes with the bids that arrived. A winning bid without adm gets its markup
   * from its win notice (its nurl, called once, within what is left of the budget); when that fails the
   * bid is dropped and the decision made again without it, so the next bid or placement serves.
   */
  async decide<T extends { ads: Candidate[] }>(decide: (bids: readonly DemandCandidate[]) => T): Promise<T> {
    let bids = await this.bids;
    for (;;) {
      const result = decide(bids);
      const [won] = result.ads;
      if (!isDemand(won) || won.demand.adm || (await this.fetchMarkup(won))) return result;
      // Each round drops one bid (matched as settle matches the winner), so the loop ends.
      bids = bids.filter((b) => b.demand !== won.demand);
    }
  }

  /** Fetches a winning bid's markup from its nurl; false (the bid dropped with its loss reason) when it cannot be had. */
  private async fetchMarkup(c: DemandCandidate): Promise<boolean> {
    const a = this.asked.find((x) => x.candidate?.demand === c.demand);
    if (!a || a.dropped !== undefined) return false;
    const left = Math.floor(this.deadline - performance.now());
    let body = '';
    let result = 'failed';
    try {
      if (left < 1) throw new DemandError('no budget left', true);
      const answer = await this.client.markup(c.demand.markupUrl, AbortSignal.timeout(left));
      if (answer.status >= 200 && answer.status < 300) body = answer.body;
    } catch (err) {
      if (err instanceof DemandError && err.timedOut) result = 'timeout';
      else log.debug('demand markup fetch failed', { demand_endpoint: a.endpoint, ...errorFields(err) });
    }
    a.fetched = true; // called (or given up on): never sent again as a plain win notice
    // OpenRTB has no loss reason for a win notice that brought no markup; 7 (missing markup) is what the
    // buyer failed to give, and 204 (incorrect creative format) as for an adm of the wrong format.
    if (!body.trim()) a.dropped = LOSS.MISSING_MARKUP;
    else if (!markupFits(a.format, body)) a.dropped = LOSS.INCORRECT_FORMAT;
    else {
      const j = a.judged!;
      const adm = this.markupOf(a, { ...this.factsOf(a, j.bid!, j.seat), price: j.bid!.price }, body);
      if (adm) c.demand.adm = adm;
      else a.dropped = LOSS.INCORRECT_FORMAT;
    }
    demandNotices.inc({ kind: 'nurl_markup', result: a.dropped === undefined ? 'sent' : result });
    return a.dropped === undefined;
  }

  private factsOf(a: Asked, bid: Bid, seat: string): NoticeFacts {
    return { auctionId: this.opportunity.auctionId, bidId: a.judged?.bidId ?? '', impId: bid.impid, seat, adId: bid.adid ?? '' };
  }

  /**
   * Each endpoint's part in a decision that chose `chosen`: its outcome, its bid's price, deal and
   * latency, and OpenRTB's loss reason (0 for the winner; none without a bid). Changes nothing.
   */
  private results(chosen: Candidate | undefined): Array<{ a: Asked; isWinner: boolean; loss: number | undefined; bid: DemandBid }> {
    const won = isDemand(chosen) ? chosen.demand : undefined;
    return this.asked.map((a) => {
      const j = a.judged;
      const isWinner = !!won && a.candidate?.demand === won;
      // A winner dropped because its nurl brought no markup keeps the reason it was dropped for.
      const loss = !j?.bid ? undefined : isWinner ? LOSS.WON : a.dropped ?? (a.outcome === BidOutcome.BID ? LOSS.LOST_TO_HIGHER_BID : j.loss);
      return {
        a,
        isWinner,
        loss,
        bid: {
          demandEndpoint: a.endpoint,
          demandSource: a.e.source,
          outcome: a.outcome,
          cpm: j?.bid && (a.outcome === BidOutcome.BID || a.outcome === BidOutcome.BELOW_FLOOR || a.outcome === BidOutcome.REJECTED) ? money(j.bid.price) : '',
          won: isWinner,
          latencyMs: Math.round(a.ms),
          deal: j?.bid?.dealid ?? '',
          lossReason: loss ?? 0,
        },
      };
    });
  }

  /**
   * After the decision: the win notice to the winning bid, a loss notice with its reason to every other
   * bid, the metrics, and the auction's event. `winnerEcpm` is what won when a placement did (its
   * effective CPM), so a losing bid learns the price to beat. A debug auction is never settled.
   */
  settle(chosen: Candidate | undefined, decisionId: string, ctx: EventContext | undefined, winnerEcpm?: number): void {
    if (this.settled || this.debug) return;
    this.settled = true;
    const won = isDemand(chosen) ? chosen.demand : undefined;
    const winningPrice = won ? won.price : winnerEcpm;
    const results = this.results(chosen);
    for (const { a, isWinner, loss } of results) {
      demandRequests.inc({ demand_endpoint: String(a.endpoint), outcome: OUTCOME_NAMES[a.outcome] });
      const j = a.judged;
      if (!j?.bid) continue;
      const facts = { ...this.factsOf(a, j.bid, j.seat), loss, ...(winningPrice !== undefined && !isWinner ? { minToWin: winningPrice } : {}) };
      // A bid whose markup came from its nurl was notified by that call.
      if (isWinner && j.bid.nurl && !a.fetched) this.client.notify('nurl', substituteMacros(j.bid.nurl, { ...facts, price: j.bid.price }));
      else if (!isWinner && j.bid.lurl) this.client.notify('lurl', substituteMacros(j.bid.lurl, facts));
      for (const other of j.others) if (other.bid.lurl) this.client.notify('lurl', substituteMacros(other.bid.lurl, { ...this.factsOf(a, other.bid, other.seat), loss: LOSS.LOST_TO_HIGHER_BID, minToWin: winningPrice }));
      for (const r of j.refused) if (r.bid.lurl) this.client.notify('lurl', substituteMacros(r.bid.lurl, { ...this.factsOf(a, r.bid, r.seat), loss: r.loss }));
    }
    if (!ctx) return;
    const o = this.opportunity;
    this.events.push(ServingEvent.fromPartial({
      id: `${decisionId || o.auctionId}:auction`,
      kind: EventKind.AUCTION,
      occurredAt: new Date().toISOString(),
      account: o.account,
      publisher: o.publisher,
      zone: o.zone,
      decision: decisionId,
      ...visitorFields(ctx),
      vast: this.zone.kind === 'vast_zone',
      demandEndpoint: won?.endpoint ?? 0,
      demandSource: won?.source ?? 0,
      price: won ? money(won.price) : '',
      pricingModel: won ? 'cpm' : '',
      currency: won ? 'USD' : '',
      revenueShare: won?.revenueShare ?? '',
      bids: results.map((x) => x.bid),
    }));
  }

  /**
   * Decision debug's view of the auction once `chosen` is decided: every endpoint asked with its
   * outcome (the AUCTION event's and the metrics' names), its bid and the loss reason a live decision
   * would have sent it. Sends and records nothing.
   */
  debugView(chosen: Candidate | undefined): Array<Record<string, unknown>> {
    return this.results(chosen).map(({ a, isWinner, loss, bid }) => ({
      demand_endpoint: a.endpoint,
      demand_source: a.e.source,
      format: a.format,
      outcome: OUTCOME_NAMES[a.outcome],
      price: bid.cpm ? Number(bid.cpm) : null,
      currency: bid.cpm ? CURRENCY : null,
      deal: bid.deal || null,
      latency_ms: bid.latencyMs,
      won: isWinner,
      loss_reason: !isWinner && loss !== undefined ? loss : null,
    }));
  }
}

const OUTCOME_NAMES: Record<BidOutcome, string> = {
  [BidOutcome.BID_OUTCOME_UNSPECIFIED]: 'unknown',
  [BidOutcome.BID]: 'bid',
  [BidOutcome.NO_BID]: 'no_bid',
  [BidOutcome.TIMEOUT]: 'timeout',
  [BidOutcome.ERROR]: 'error',
  [BidOutcome.BELOW_FLOOR]: 'below_floor',
  [BidOutcome.REJECTED]: 'rejected',
  [BidOutcome.UNRECOGNIZED]: 'unknown',
};

/** A claim of a key in this process only, remembered for a day (bounded: the oldest go first). */
export function localOnce(max = 200_000): (key: string) => Promise<boolean> {
  const seen = new Map<string, number>();
  return async (key) => {
    const now = Date.now();
    const at = seen.get(key);
    if (at !== undefined && now - at < 86_400_000) return false;
    seen.set(key, now);
    if (seen.size > max) seen.delete(seen.keys().next().value!);
    return true;
  };
}
