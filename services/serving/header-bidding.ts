import type http from 'node:http';
import type { Candidate } from './decision-store';
import { adMarkup, adPixels, type Rendered } from './render';
import { serveRequest, type ServeRequest } from './request';

/**
 * Header bidding: the answer of `/adserve/;…;type=hbr;…` to Prebid.js's `adbutler` bid adapter. The
 * adapter asks `https://{domain}/adserve/;ID={accountID};type=hbr;setID={zoneID};pid={page};place={n};kw={keyword};`
 * (a GET with credentials, every parameter written, an absent keyword as `kw=undefined`) and bids with
 * `cpm`, `width`, `height`, `ad_code` followed by an image per `tracking_pixels` entry, `placement_id`
 * as the creative id and `advertiser` as the bid's meta; any other `status` is no bid.
 *
 * The bid is the zone's decision as the JSON form makes it (the caller's `decide`), so it records a
 * response; the impression counts only when the page shows the bid and its pixel fires.
 */

/** What header bidding needs of the serving process: its decision, its response event, and prices. */
export interface HeaderBidSeam {
  /**
   * The zone's one ad for the request (programmatic demand included), decided and rendered with signed
   * tracking URLs; undefined: none.
   */
  decide(r: ServeRequest, req: http.IncomingMessage, res: http.ServerResponse): Promise<Rendered | undefined>;
  /** Records that the decision was handed out (its RESPONSE event). */
  responded(x: Rendered, r: ServeRequest, req: http.IncomingMessage, res: http.ServerResponse): void;
  /** The delivery gate's effective CPM of a placement not priced by CPM, when live goals are kept. */
  ecpm?(c: Candidate): number;
}

/** The adapter's bid, and the fields AdButler's answer carries besides (the adapter's own fixtures show them). */
export interface HeaderBid {
  status: 'SUCCESS';
  account_id: number;
  zone_id: number;
  place?: number;
  placement_id: number;
  banner_id: number;
  cpm: number;
  width: number;
  height: number;
  ad_code: string;
  tracking_pixels: string[];
  advertiser: { id: number; name: string; domain: string };
}

export interface NoBid {
  status: 'NO_ELIGIBLE_ADS';
  account_id?: number;
  zone_id?: number;
  place?: number;
}

export function isHeaderBidRequest(params: URLSearchParams): boolean {
  return params.get('type') === 'hbr';
}

/** The adserve parameters of a bid request read as the JSON form's request (one ad). */
export function headerBidRequest(params: URLSearchParams): ServeRequest {
  const p = new URLSearchParams(params);
  p.set('type', 'json');
  if (p.get('kw') === 'undefined') p.delete('kw');
  return serveRequest(p);
}

/**
 * Prebid sends bid requests with credentials, which a browser lets the page read only when the answer
 * names the page's origin and allows credentials (never with `*`).
 */
export function allowBidderOrigin(req: http.IncomingMessage, res: http.ServerResponse): void {
  const origin = req.headers.origin;
  res.setHeader('Vary', 'Origin');
  if (!origin) return;
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Allow-Credentials', 'true');
}

/** The answer to a bid request: the bid, or no bid. */
export async function headerBid(params: URLSearchParams, req: http.IncomingMessage, res: http.ServerResponse, seam: HeaderBidSeam): Promise<HeaderBid | NoBid> {
  allowBidderOrigin(req, res);
  const r = headerBidRequest(params);
  const place = placeOf(params.get('place'));
  const x = await seam.decide(r, req, res);
  if (!x) return { status: 'NO_ELIGIBLE_ADS', account_id: r.account, zone_id: r.zone, ...(place === undefined ? {} : { place }) };
  seam.responded(x, r, req, res);
  return bidOf(x, seam.ecpm, place);
}

export function bidOf(x: Rendered, ecpm: HeaderBidSeam['ecpm'], place?: number): HeaderBid {
  const ad = x.item.adItem!;
  const d = x.decision;
  return {
    status: 'SUCCESS',
    account_id: d.account,
    zone_id: d.zone,
    ...(place === undefined ? {} : { place }),
    placement_id: d.placement,
    banner_id: x.item.id,
    cpm: cpmOf(d, ecpm),
    width: ad.width,
    height: ad.height,
    // The adapter appends an image per tracking pixel: the item's own pixels are given there only.
    ad_code: adMarkup(x),
    tracking_pixels: [x.impressionUrl, ...adPixels(x)],
    // Prebid passes the domain on as meta.advertiserDomains: a winning bid's adomain. Decision data holds a
    // direct advertiser's id only (the advertiser resource has no domain), and a bid names no advertiser.
    advertiser: { id: d.advertiser, name: '', domain: x.advertiserDomain ?? '' },
  };
}

/** The placement's CPM; one priced by click or conversion bids its effective CPM where goals are kept, else 0. */
export function cpmOf(c: Candidate, ecpm: HeaderBidSeam['ecpm']): number {
  if (c.cost.cpm) return Number(c.cost.cpm);
  const e = ecpm?.(c) ?? 0;
  return Number.isFinite(e) && e > 0 ? Math.round(e * 10_000) / 10_000 : 0;
}

function placeOf(raw: string | null): number | undefined {
  return raw && /^\d{1,6}$/.test(raw) ? Number(raw) : undefined;
}
