import type http from 'node:http';
import { Counter } from 'prom-client';
import { EventKind } from '../../proto/gen/adserver/reporting/v1/events';
import { envInt, serveBaseUrl } from '../shared/config';
import { registry } from '../shared/metrics';
import { isVideoEvent } from '../shared/video-events';
import type { Clock, DecisionResult } from './decide';
import type { Candidate, DecisionData } from './decision-store';
import type { DeliveryLedger } from './delivery-ledger';
import { decisionEvent, videoEvent, type EventSink } from './events';
import { decisionOf } from './render';
import { HttpError, vastRequest, type ServeRequest } from './request';
import type { Decision, TokenSigner } from './tracking';
import { vastDocument, type VastVersion } from './vast';
import { eventUrl, own, vastAdElement, vastPlayable } from './vast-serving';
import { trackedVastBid } from './demand/vast-bid';
import type { Visitors } from './visitor';
import { vast4Destination } from './vast4-serving';
import { isDemand, type DemandCandidate } from './demand/candidate';

/**
 * Video serving: `/vast.spark?setID=&ID=` answers a player with VAST XML (an ad, a pod, a wrapper or
 * the empty `<VAST/>` when nothing is eligible), decided by the same engine and delivery rules as
 * display; `/vast/imp`, `/vast/event`, `/vast/companion-click` and `/vast/error` are the signed URLs
 * its documents carry. Each event counts once per decision and event (its id says so).
 */

const vastErrors = new Counter({ name: 'serving_vast_errors_total', help: 'VAST error pings from players, by VAST error code', labelNames: ['code'], registers: [registry] });
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Wrappers of this platform a chain may pass through before only inline ads are served (VAST_WRAPPER_LIMIT). */
const wrapperLimit = () => envInt('VAST_WRAPPER_LIMIT', 5);

/**
 * Players fetch VAST from other sites' pages, some with credentials (the frequency cookie): the
 * requesting origin is allowed with them; other callers get `*`.
 */
export function allowPlayerOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
  const origin = req.headers.origin;
  if (typeof origin === 'string' && /^https?:\/\/[^\s/]+$/.test(origin)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Vary', 'Origin');
  } else res.setHeader('Access-Control-Allow-Origin', '*');
}

export interface VideoDeps {
  data: { current: DecisionData };
  signer: TokenSigner;
  events: EventSink;
  visitors: Visitors;
  delivery?: DeliveryLedger;
  clock: Clock;
  /**
   * One decision among the zone's ads that `accepts` takes (serve-app's decideFor for a VAST zone); with
   * `res`, programmatic demand takes part and `settle` finishes its auction once the decision is known.
   */
  decide(data: DecisionData, r: ServeRequest, req: http.IncomingMessage, accepts: (c: Candidate) => boolean, res?: http.ServerResponse): Promise<DecisionResult & { settle?: (chosen: Candidate | undefined, decisionId: string) => void }>;
  /** Sends a programmatic win's billing notice (once per decision). */
  bill(d: Decision): void;
}

export class VideoServing {
  private readonly base = serveBaseUrl();

  constructor(private readonly deps: VideoDeps) {}

  /** GET /vast.spark: the VAST document of one ad, or of a pod of `pod` different ads. */
  async serve(req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): Promise<void> {
    const r = vastRequest(q);
    const data = this.deps.data.current;
    const zone = data.zone(r.account, r.zone, true)?.zone;
    const version = (r.version ?? (zone?.vastVersion || '3.0')) as VastVersion;
    // VAST 2.0 has no pods: one ad.
    const size = version === '2.0' ? 1 : r.pod;
    const allowWrapper = r.wrapperDepth < wrapperLimit();
    const chosen: Candidate[] = [];
    if (zone) {
      const taken = new Set<number>();
      for (let i = 0; i < size; i++) {
        // The first ad of a request asks programmatic demand too; a winning bid's VAST is served alone.
        const decided = await this.deps.decide(data, r, req, (x) => !taken.has(x.adItem) && vastPlayable(data, x, allowWrapper), i === 0 ? res : undefined);
        const [c] = decided.ads;
        if (isDemand(c)) {
          const d = decisionOf(c, r, false, this.deps.clock.now());
          decided.settle?.(c, d.id);
          return this.serveBid(c, d, req, res, r);
        }
        decided.settle?.(c, '');
        if (!c) break;
        taken.add(c.adItem);
        chosen.push(c);
      }
      if (!chosen.length) {
        const fallback = this.zoneDefault(data, r, allowWrapper);
        if (fallback) chosen.push(fallback);
      }
    }
    const now = this.deps.clock.now();
    const ads: string[] = [];
    const ctx = chosen.length ? this.deps.visitors.context(req, res, r.ip) : undefined;
    chosen.forEach((c, i) => {
      const d = decisionOf(c, r, false, now);
      if (c.placement) this.deps.delivery?.decided(data, c, now, d.id);
      const token = encodeURIComponent(this.deps.signer.sign(d));
      ads.push(vastAdElement(data, d, { version, urls: { base: this.base, token }, sequence: size > 1 ? i + 1 : undefined, wrapperDepth: r.wrapperDepth }));
      this.deps.events.push(decisionEvent(EventKind.RESPONSE, d, ctx!));
    });
    const xml = vastDocument(version, ads);
    res.writeHead(200, { 'Content-Type': 'application/xml; charset=utf-8', 'Content-Length': Buffer.byteLength(xml), 'Cache-Control': 'no-store' });
    res.end(xml);
  }

  /**
   * A winning VAST bid: the buyer's document with this platform's impression and click tracking added
   * beside the buyer's own, so both count when the player shows the ad and the viewer clicks it.
   */
  private serveBid(c: DemandCandidate, d: Decision, req: http.IncomingMessage, res: http.ServerResponse, r: ServeRequest): void {
    const urls = { base: this.base, token: encodeURIComponent(this.deps.signer.sign(d)) };
    const xml = trackedVastBid(c.demand.adm, { impression: own(urls, '/vast/imp'), click: eventUrl(urls, 'click') });
    this.deps.events.push(decisionEvent(EventKind.RESPONSE, d, this.deps.visitors.context(req, res, r.ip)));
    res.writeHead(200, { 'Content-Type': 'application/xml; charset=utf-8', 'Content-Length': Buffer.byteLength(xml), 'Cache-Control': 'no-store' });
    res.end(xml);
  }

  /** The zone's default ad item, else a weighted pick of its default campaign's: served when nothing else is eligible. */
  private zoneDefault(data: DecisionData, r: ServeRequest, allowWrapper: boolean): Candidate | undefined {
    const zone = data.zone(r.account, r.zone, true)!.zone!;
    const candidate = (adItem: number, campaign: number, advertiser: number): Candidate => ({
      account: r.account, zone: r.zone, publisher: zone.publisher, placement: 0, assignment: 0, campaign, advertiser, adItem, adItemKind: 'vast_ad_item',
      channel: 0, geoTarget: 0, weight: 1, tier: 4, pricingModel: '', price: '', schedule: 0, serveMethod: 'weight', shareOfVoice: -1,
      cost: { cpm: '', cpc: '', cpa: '' }, fallback: true,
    });
    if (zone.defaultAdItem) {
      const c = candidate(zone.defaultAdItem, 0, 0);
      if (vastPlayable(data, c, allowWrapper)) return c;
    }
    if (zone.defaultCampaign) {
      const campaign = data.get(r.account, 'vast_campaign', zone.defaultCampaign)?.campaign;
      if (!campaign) return undefined;
      const options = data
        .activeAssignments(r.account, 'vast_campaign', zone.defaultCampaign)
        .map((a) => ({ c: { ...candidate(a.assignment!.adItem, zone.defaultCampaign, campaign.advertiser), assignment: a.id }, weight: a.assignment!.weight }))
        .filter((o) => vastPlayable(data, o.c, allowWrapper));
      let u = this.deps.clock.random() * options.reduce((s, o) => s + o.weight, 0);
      for (const o of options) if ((u -= o.weight) < 0) return o.c;
      return options[options.length - 1]?.c;
    }
    return undefined;
  }

  /** The signed URLs of a VAST document. A forged or altered token is refused; a test decision records nothing. */
  track(kind: 'imp' | 'event' | 'error' | 'click' | 'companion-click', req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void {
    const d = this.deps.signer.verify(q.get('t') ?? '');
    if (!d || !isVideoDecision(d)) throw new HttpError(400, 'invalid_request_error', 'This tracking link is not valid: it was altered or not made by this ad server.');
    if (kind === 'error') {
      const code = q.get('code') ?? '';
      // A player that did not fill the macro sends it back as written.
      vastErrors.inc({ code: /^\d{3}$/.test(code) ? code : 'unknown' });
      return sendGif(res);
    }
    if (kind === 'companion-click') return this.companionClick(d, req, res, q);
    if (kind === 'click') return this.click(d, req, res, q);
    if (kind === 'imp') {
      this.record(EventKind.IMPRESSION, d, req, res);
      if (this.frequencyEventOf(d) === 'view') this.deps.visitors.countView(this.deps.data.current, d, req, res);
      return sendGif(res);
    }
    const event = q.get('e') ?? '';
    if (event === 'click') {
      this.recordClick(d, req, res);
      return sendGif(res);
    }
    if (!isVideoEvent(event)) throw new HttpError(400, 'invalid_request_parameters_error', `'e' must name a VAST tracking event this ad server counts, such as start or complete.`);
    this.recordVideo(event, d, req, res);
    if (this.frequencyEventOf(d) === event) this.deps.visitors.countView(this.deps.data.current, d, req, res);
    sendGif(res);
  }

  /**
   * A click-through: counted, then on to the destination of the decision's own ad (the 2/3 item's
   * location, or the 4.2 linear or non-linear `p` names): the redirect never goes anywhere else.
   */
  private click(d: Decision, req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void {
    const data = this.deps.data.current;
    const part = Number(q.get('p'));
    const destination = d.adItemKind === 'vast4_ad'
      ? vast4Destination(data, d.account, d.adItem, part, false)?.url
      : data.get(d.account, 'vast_ad_item', d.adItem)?.vastAd?.location;
    if (!destination) return redirect(res, '');
    this.recordClick(d, req, res);
    // A non-linear's click also counts as such: the 2/3 model marks it, a 4.2 part is one.
    const nonLinear = d.adItemKind === 'vast4_ad' ? !!data.get(d.account, 'vast4_non_linear', part) : q.get('nl') === '1';
    if (nonLinear) this.recordVideo('nonLinearClick', d, req, res);
    redirect(res, destination);
  }

  /** A companion's click: counted as companionClick<sequence>, then on to the companion's own destination. */
  private companionClick(d: Decision, req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void {
    const id = Number(q.get('c'));
    const data = this.deps.data.current;
    let target: { url: string; sequence: number } | undefined;
    if (d.adItemKind === 'vast4_ad') target = Number.isSafeInteger(id) ? vast4Destination(data, d.account, d.adItem, id, true) : undefined;
    else {
      const companion = Number.isSafeInteger(id) ? data.get(d.account, 'vast_companion', id)?.vastCompanion : undefined;
      // Only a companion of the decision's own ad item.
      if (companion && companion.adItem === d.adItem && companion.location) target = { url: companion.location, sequence: companion.sequence };
    }
    if (!target) return redirect(res, '');
    this.recordVideo(`companionClick${Math.min(5, Math.max(1, target.sequence))}`, d, req, res);
    redirect(res, target.url);
  }

  private recordClick(d: Decision, req: http.IncomingMessage, res: http.ServerResponse): void {
    this.record(EventKind.CLICK, d, req, res);
    // A later conversion on the advertiser's page is attributed to this click.
    if (!d.test) this.deps.visitors.setCookie(res, `adsrv_c=${encodeURIComponent(this.deps.signer.sign(d))}; Max-Age=2592000`);
  }

  /** The player event a placement's frequency cap counts (view: the impression). */
  private frequencyEventOf(d: Decision): string {
    if (!d.placement) return '';
    return this.deps.data.current.get(d.account, 'placement', d.placement)?.placement?.frequencyEvent || 'view';
  }

  private record(kind: EventKind.IMPRESSION | EventKind.CLICK, d: Decision, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (d.test) return;
    this.deps.events.push(decisionEvent(kind, d, this.deps.visitors.context(req, res)));
    if (!d.placement) {
      if (kind === EventKind.IMPRESSION && d.demandEndpoint) this.deps.bill(d);
      return;
    }
    this.deps.delivery?.record(this.deps.data.current, kind === EventKind.IMPRESSION ? 'views' : 'clicks', d);
  }

  private recordVideo(event: string, d: Decision, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (d.test) return;
    this.deps.events.push(videoEvent(event, d, this.deps.visitors.context(req, res)));
  }
}

/** A decision of a VAST ad of either model. */
export const isVideoDecision = (d: Pick<Decision, 'adItemKind'>) => d.adItemKind === 'vast_ad_item' || d.adItemKind === 'vast4_ad' || d.adItemKind === 'demand_vast';

/** 302 to a destination that is a URL, else 204. */
function redirect(res: http.ServerResponse, target: string): void {
  let location = '';
  try {
    location = target ? new URL(target).href : '';
  } catch {
    /* not a URL: no redirect */
  }
  res.writeHead(location ? 302 : 204, { ...(location ? { Location: location } : {}), 'Cache-Control': 'no-store' });
  res.end();
}

function sendGif(res: http.ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'image/gif', 'Content-Length': GIF.length, 'Cache-Control': 'no-store' });
  res.end(GIF);
}
