import countries from 'i18n-iso-countries';
import type { Bid, BidRequest, BidResponse, Imp } from 'iab-openrtb/dist/v26';
import type { DecisionDemandEndpoint, DecisionVideoPlayer } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { BidOutcome } from '../../../proto/gen/adserver/reporting/v1/events';
import type { GeoLocation } from '../targeting/geo';
import type { Consent } from '../request';

/**
 * OpenRTB 2.6 as this platform speaks it to demand endpoints: the bid request for one impression
 * (a display, native or video zone), and the judgement of an answer. Pure: no HTTP, no clock, so every
 * rule can be tested by calling it. Types are the IAB's (iab-openrtb); loss reasons are OpenRTB's.
 */

/** OpenRTB's loss reason codes (section 5.25 of 2.6) that this auction gives. */
export const LOSS = {
  WON: 0,
  INVALID_RESPONSE: 3,
  INVALID_DEAL: 4,
  MISSING_MARKUP: 7,
  BELOW_FLOOR: 100,
  BELOW_DEAL_FLOOR: 101,
  LOST_TO_HIGHER_BID: 102,
  LOST_TO_DEAL: 103,
  SEAT_BLOCKED: 104,
  INCORRECT_FORMAT: 204,
} as const;

/**
 * Whether a bid's markup is to be fetched from its win notice: OpenRTB 2.x lets a bid leave `adm` out
 * (or empty), and then the body of the answer to its `nurl` is the markup.
 */
export function markupByNotice(bid: Pick<Bid, 'adm' | 'nurl'>): boolean {
  return (bid.adm === undefined || (typeof bid.adm === 'string' && !bid.adm.trim())) && typeof bid.nurl === 'string' && !!bid.nurl.trim();
}

/** Whether markup is of the format asked: a native response for native, VAST for video, anything for display. */
export function markupFits(format: 'display' | 'native' | 'video', adm: string): boolean {
  const m = adm.trim();
  if (!m) return false;
  return format === 'video' ? /<VAST[\s>]/i.test(m) : format === 'native' ? nativeResponseOf(m) !== undefined : true;
}

/** The currency of every floor and price: accounts have no other yet. */
export const CURRENCY = 'USD';

/** What one impression offers, the same for every endpoint asked. */
export interface Opportunity {
  /** The auction's id (OpenRTB BidRequest.id and the decision's ${AUCTION_ID}). */
  auctionId: string;
  account: number;
  zone: number;
  publisher: number;
  video: boolean;
  /** A display zone's size. */
  size?: { width: number; height: number };
  /** A VAST zone's player. */
  player?: DecisionVideoPlayer;
  /** An OpenRTB native request (ver 1.2) when the zone sells native. */
  native?: NativeRequest;
  tagId: string;
  categories: string[];
  /** The page the ad shows on (the request's referrer), its domain, and whether it is https. */
  page: string;
  secure: boolean;
  ip: string;
  ua: string;
  geo?: GeoLocation;
  /** The hashed visitor key (never the raw cookie). */
  userId: string;
  consent: Consent;
  deals: OfferedDeal[];
  privateAuction: boolean;
  /** Milliseconds the endpoints have. */
  tmax: number;
  /** The zone's own floor (CPM) before an endpoint's markup; 0: none. */
  zoneFloor: number;
  /** The least the publisher takes per thousand (min_payout); 0: none. */
  minPayout: number;
}

export interface OfferedDeal {
  id: string;
  floor: number;
  seats: string[];
}

export interface NativeRequest {
  ver: '1.2';
  context?: number;
  contextsubtype?: number;
  plcmttype?: number;
  assets: Array<{ id: number; required: 1; title?: { len: number }; img?: { type: number; w?: number; h?: number; wmin?: number; hmin?: number; mimes?: string[] }; data?: { type: number; len?: number } }>;
}

/** Money as the platform keeps it: decimal text with at most six places ('' never). */
export function money(n: number): string {
  const s = (Math.round(n * 1e6) / 1e6).toFixed(6);
  return s.replace(/\.?0+$/, '') || '0';
}

const num = (s: string) => (s ? Number(s) : 0);

/** The floor an endpoint must bid at least: the zone's floor with its markup, its own floor, and what min_payout needs at its revenue share. */
export function floorFor(o: Opportunity, e: DecisionDemandEndpoint): number {
  const markup = 1 + num(e.markupPercent) / 100;
  const share = e.revenueShare === '' ? 1 : num(e.revenueShare) / 100;
  const payoutFloor = o.minPayout > 0 ? (share > 0 ? o.minPayout / share : Infinity) : 0;
  return Math.max(o.zoneFloor * markup, num(e.bidFloor), payoutFloor);
}

const alpha3 = (alpha2: string | undefined) => (alpha2 ? countries.alpha2ToAlpha3(alpha2.toUpperCase()) : undefined);

function domainOf(page: string): string | undefined {
  try {
    return page ? new URL(page).hostname : undefined;
  } catch {
    return undefined;
  }
}

/** OpenRTB video protocols a VAST 2.0–4.2 player takes (inline and wrapper). */
const VAST_PROTOCOLS = [2, 3, 5, 6, 7, 8];

function videoOf(p: DecisionVideoPlayer | undefined): Imp['video'] {
  const v: NonNullable<Imp['video']> = { mimes: p?.mimeTypes.length ? p.mimeTypes : ['video/mp4'], protocols: VAST_PROTOCOLS };
  if (!p) return v;
  if (p.width) v.w = p.width;
  if (p.height) v.h = p.height;
  if (p.minDuration) v.minduration = p.minDuration;
  if (p.maxDuration) v.maxduration = p.maxDuration;
  v.startdelay = p.startDelay;
  if (p.linearity === 'linear') v.linearity = 1;
  else if (p.linearity === 'nonlinear') v.linearity = 2;
  v.skip = p.allowSkip ? 1 : 0;
  if (p.allowSkip) {
    if (p.skipMin) v.skipmin = p.skipMin;
    if (p.skipAfter) v.skipafter = p.skipAfter;
  }
  if (p.minBitrate) v.minbitrate = p.minBitrate;
  if (p.maxBitrate) v.maxbitrate = p.maxBitrate;
  v.boxingallowed = p.boxingAllowed ? 1 : 0;
  const api = p.apiFrameworks.map((a) => (a === 'vpaid1' ? 1 : a === 'vpaid2' ? 2 : 0)).filter(Boolean);
  if (api.length) v.api = api as NonNullable<Imp['video']>['api'];
  return v;
}

/** The bid request one endpoint gets. */
export function bidRequest(o: Opportunity, e: DecisionDemandEndpoint, format: 'display' | 'native' | 'video'): BidRequest {
  const floor = floorFor(o, e);
  const imp: Imp = { id: '1', tagid: o.tagId, bidfloor: Number(money(floor)), bidfloorcur: CURRENCY, secure: o.secure ? 1 : 0 };
  if (format === 'video') imp.video = videoOf(o.player);
  else if (format === 'native' && o.native) imp.native = { request: JSON.stringify(o.native), ver: '1.2' };
  else if (o.size) imp.banner = { w: o.size.width, h: o.size.height, format: [{ w: o.size.width, h: o.size.height }] };
  if (o.deals.length) {
    imp.pmp = {
      private_auction: o.privateAuction ? 1 : 0,
      deals: o.deals.map((d) => ({ id: d.id, bidfloor: Number(money(Math.max(d.floor, num(e.bidFloor)))), bidfloorcur: CURRENCY, ...(d.seats.length ? { wseat: d.seats } : {}) })),
    };
  }
  const country = alpha3(o.geo?.country);
  const geo = o.geo ? { type: 2 as const, ...(country ? { country } : {}), ...(o.geo.region ? { region: o.geo.region } : {}), ...(o.geo.city ? { city: o.geo.city } : {}), ...(o.geo.postcode ? { zip: o.geo.postcode } : {}) } : undefined;
  const publisher = { id: String(o.publisher || o.account) };
  const req: BidRequest = {
    id: o.auctionId,
    imp: [imp],
    device: { ...(o.ua ? { ua: o.ua } : {}), ...(o.ip ? (o.ip.includes(':') ? { ipv6: o.ip } : { ip: o.ip }) : {}), ...(geo ? { geo } : {}) },
    user: { id: o.userId, ...(o.consent.gdprConsent ? { consent: o.consent.gdprConsent } : {}) },
    at: 1,
    tmax: o.tmax,
    cur: [CURRENCY],
  };
  if (o.player?.bundleId) req.app = { id: String(o.zone), bundle: o.player.bundleId, publisher, ...(o.categories.length ? { cat: o.categories } : {}) };
  else {
    const domain = domainOf(o.page);
    req.site = { id: String(o.zone), ...(o.page ? { page: o.page } : {}), ...(domain ? { domain } : {}), publisher, ...(o.categories.length ? { cat: o.categories } : {}) };
  }
  const regs: NonNullable<BidRequest['regs']> = {};
  if (o.consent.gdpr !== undefined) regs.gdpr = o.consent.gdpr;
  if (o.consent.usPrivacy) regs.us_privacy = o.consent.usPrivacy;
  if (o.consent.gpp) regs.gpp = o.consent.gpp;
  if (o.consent.gppSid.length) regs.gpp_sid = o.consent.gppSid;
  if (Object.keys(regs).length) req.regs = regs;
  return req;
}

/** One endpoint's answer, judged: its best bid (valid or not) and why the others were turned away. */
export interface Judged {
  outcome: BidOutcome;
  /** The bid that takes part in the auction (outcome BID), else the best one turned away, if any. */
  bid?: Bid;
  seat: string;
  bidId: string;
  /** Its loss reason when turned away before the auction. */
  loss?: number;
  /** Valid bids of the same answer that the best one beat (they lose with reason 102). */
  others: Array<{ bid: Bid; seat: string }>;
  /** Bids turned away, each with its reason (their loss notices go out too). */
  refused: Array<{ bid: Bid; seat: string; loss: number }>;
  /** What was wrong with an ERROR answer, for the log and metrics. */
  problem?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Judges an HTTP answer to a bid request: no bid (204, empty, no seatbid), an error (not OpenRTB, another
 * auction's id), or its bids checked against floors, deals, seats, currency and markup.
 */
export function judgeAnswer(o: Opportunity, e: DecisionDemandEndpoint, format: 'display' | 'native' | 'video', status: number, body: string): Judged {
  const none = (outcome: BidOutcome, problem?: string): Judged => ({ outcome, seat: '', bidId: '', others: [], refused: [], problem });
  if (status === 204) return none(BidOutcome.NO_BID);
  if (status !== 200) return none(BidOutcome.ERROR, `HTTP ${status}`);
  if (!body.trim()) return none(BidOutcome.NO_BID);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return none(BidOutcome.ERROR, 'not JSON');
  }
  if (!isObject(parsed)) return none(BidOutcome.ERROR, 'not a BidResponse object');
  const res = parsed as Partial<BidResponse> & Record<string, unknown>;
  if (res.id !== o.auctionId) return none(BidOutcome.ERROR, 'id is not the request id');
  if (res.seatbid === undefined || (Array.isArray(res.seatbid) && !res.seatbid.length)) return none(BidOutcome.NO_BID);
  if (!Array.isArray(res.seatbid)) return none(BidOutcome.ERROR, 'seatbid is not an array');
  const currency = res.cur ?? CURRENCY;
  const floor = floorFor(o, e);
  const valid: Array<{ bid: Bid; seat: string }> = [];
  const refused: Judged['refused'] = [];
  let malformed = 0;
  for (const sb of res.seatbid) {
    if (!isObject(sb) || !Array.isArray(sb.bid)) {
      malformed++;
      continue;
    }
    const seat = typeof sb.seat === 'string' ? sb.seat : '';
    for (const b of sb.bid as unknown[]) {
      if (!isObject(b) || typeof b.price !== 'number' || !Number.isFinite(b.price) || b.price < 0 || b.impid !== '1' || typeof b.id !== 'string') {
        malformed++;
        continue;
      }
      const bid = b as unknown as Bid;
      const refuse = (loss: number) => refused.push({ bid, seat, loss });
      if (currency !== CURRENCY) refuse(LOSS.INVALID_RESPONSE);
      else if (!(typeof bid.adm === 'string' && bid.adm.trim()) && !markupByNotice(bid)) refuse(LOSS.MISSING_MARKUP);
      else if (bid.dealid) {
        const deal = o.deals.find((d) => d.id === bid.dealid);
        if (!deal) refuse(LOSS.INVALID_DEAL);
        else if (deal.seats.length && !deal.seats.includes(seat)) refuse(LOSS.SEAT_BLOCKED);
        else if (bid.price < Math.max(deal.floor, num(e.bidFloor))) refuse(LOSS.BELOW_DEAL_FLOOR);
        else valid.push({ bid, seat });
      } else if (o.privateAuction) refuse(LOSS.LOST_TO_DEAL);
      else if (bid.price < floor || bid.price === 0) refuse(LOSS.BELOW_FLOOR);
      else valid.push({ bid, seat });
    }
  }
  // A native answer's markup must be a native response; a VAST one, VAST (markup its nurl returns is judged when fetched).
  for (let i = valid.length - 1; i >= 0; i--) {
    const adm = valid[i].bid.adm;
    if (adm?.trim() && !markupFits(format, adm)) {
      refused.push({ ...valid[i], loss: LOSS.INCORRECT_FORMAT });
      valid.splice(i, 1);
    }
  }
  if (!valid.length && !refused.length) return none(malformed ? BidOutcome.ERROR : BidOutcome.NO_BID, malformed ? 'no well-formed bid' : undefined);
  // Deal bids first (they were invited), then price.
  valid.sort((a, b) => Number(!!b.bid.dealid) - Number(!!a.bid.dealid) || b.bid.price - a.bid.price);
  if (valid.length) {
    const [best, ...others] = valid;
    return { outcome: BidOutcome.BID, bid: best.bid, seat: best.seat, bidId: typeof res.bidid === 'string' ? res.bidid : '', others, refused };
  }
  refused.sort((a, b) => b.bid.price - a.bid.price);
  const top = refused[0];
  const belowFloor = top.loss === LOSS.BELOW_FLOOR || top.loss === LOSS.BELOW_DEAL_FLOOR;
  return { outcome: belowFloor ? BidOutcome.BELOW_FLOOR : BidOutcome.REJECTED, bid: top.bid, seat: top.seat, bidId: typeof res.bidid === 'string' ? res.bidid : '', loss: top.loss, others: [], refused: refused.slice(1) };
}

/** OpenRTB Native 1.2 response markup: an object with `assets` (directly or under `native`). */
export interface NativeResponse {
  assets: Array<{ id?: number; title?: { text?: string }; img?: { url?: string; w?: number; h?: number }; data?: { value?: string } }>;
  link?: { url?: string; clicktrackers?: string[] };
  imptrackers?: string[];
  eventtrackers?: Array<{ event?: number; method?: number; url?: string }>;
}

export function nativeResponseOf(adm: string): NativeResponse | undefined {
  try {
    const v = JSON.parse(adm) as unknown;
    const n = isObject(v) && isObject(v.native) ? v.native : v;
    if (isObject(n) && Array.isArray(n.assets)) return n as unknown as NativeResponse;
  } catch {
    /* not native markup */
  }
  return undefined;
}

/** The values OpenRTB's substitution macros take in a notice or markup. */
export interface NoticeFacts {
  auctionId: string;
  bidId: string;
  impId: string;
  seat: string;
  adId: string;
  price?: number;
  loss?: number;
  minToWin?: number;
}

/** Substitutes OpenRTB's ${AUCTION_…} macros (URL-encoded where a URL carries them). */
export function substituteMacros(text: string, f: NoticeFacts, encode = true): string {
  const enc = encode ? encodeURIComponent : (s: string) => s;
  const values: Record<string, string> = {
    AUCTION_ID: f.auctionId,
    AUCTION_BID_ID: f.bidId,
    AUCTION_IMP_ID: f.impId,
    AUCTION_SEAT_ID: f.seat,
    AUCTION_AD_ID: f.adId,
    AUCTION_PRICE: f.price !== undefined ? money(f.price) : '',
    AUCTION_CURRENCY: CURRENCY,
    AUCTION_MBR: '',
    AUCTION_LOSS: f.loss !== undefined ? String(f.loss) : '',
    AUCTION_MIN_TO_WIN: f.minToWin !== undefined ? money(f.minToWin) : '',
  };
  return text.replace(/\$\{(AUCTION_[A-Z_]+)\}/g, (m, name: string) => (name in values ? enc(values[name]) : m));
}

/**
 * The click macros DSPs write in markup: a prefix the creative puts before its landing page, which
 * `${CLICK_URL}` and `%%CLICK_URL_UNESC%%` take as is and `%%CLICK_URL_ESC%%` URL-encoded (for a
 * buyer's tracker that nests it in a parameter of its own).
 */
const CLICK_MACROS = /\$\{CLICK_URL\}|%%CLICK_URL_(UNESC|ESC)%%/g;

/**
 * Substitutes the click macros with `clickUrl` (this ad server's signed click redirect, ending in a
 * parameter the landing page is appended to). Known only once the decision is signed, so apart from
 * the ${AUCTION_…} macros, which the bid's arrival fills.
 */
export function substituteClickMacros(markup: string, clickUrl: string): string {
  // Quotes, brackets and spaces (a publisher's click prefix may hold them) are encoded, so the URL can
  // end neither the markup's attribute nor its script string.
  const safe = clickUrl.replace(/["'<>\\`\s]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return markup.replace(CLICK_MACROS, (_m, form?: string) => (form === 'ESC' ? encodeURIComponent(safe) : safe));
}

/** The landing page a buyer's creative appended to the click macro (escaped or not), if an http(s) URL. */
export function landingOf(appended: string): string | undefined {
  let url = appended;
  if (!/^https?:\/\//i.test(url)) {
    try {
      url = decodeURIComponent(url);
    } catch {
      return undefined;
    }
  }
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}
