import type { DecisionEntity, DecisionVideoPlayer, DecisionZone } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Json } from '../shared/catalog';
import { int, obj, str } from '../targeting/rule';

/**
 * The decision data of programmatic demand: demand sources and endpoints, PMP deals, OpenRTB native
 * templates, their assets and the native ads of standard zones, and what a zone says about the demand
 * it asks (its floors, deals, tag id and bid budget). Money and percentages travel as exact decimal
 * text; a floor or payout that is not set (null or 0) is ''.
 */

export const PROGRAMMATIC_DECISION_KINDS = [
  'demand_source', 'demand_endpoint', 'pmp_deal', 'ortb_native_template', 'ortb_native_title_asset', 'ortb_native_image_asset', 'ortb_native_data_asset',
  'ortb_native_ad',
] as const;

/** The wait for bids when a zone names none (the catalog's default of bid_timeout_ms). */
export const DEFAULT_BID_TIMEOUT_MS = 150;

type Body = Omit<DecisionEntity, 'kind' | 'id' | 'account'>;
type ZoneDemand = Pick<
  DecisionZone,
  'allowDemand' | 'bidFloor' | 'minPayout' | 'pmpDeals' | 'rtbPlacementId' | 'iabCategories' | 'auctionTieBreak' | 'privateAuction' | 'bidTimeoutMs' | 'player'
>;

/** A JSON number as exact decimal text (the digits the caller wrote: the catalog keeps them as given); '' for anything else. */
export function decimalText(v: Json | undefined): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '';
  const text = String(v);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!m) return text;
  // Exponent form (1.25e-7, 1e+21): the same digits with the point moved, never through binary arithmetic.
  const digits = m[2] + (m[3] ?? '');
  const point = 1 + Number(m[4]);
  const whole = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return m[1] + whole;
}

/** Decimal text of an amount where 0 and null both mean "none" (floors, minimum payouts): ''. */
const amount = (v: Json | undefined): string => (typeof v === 'number' && v > 0 ? decimalText(v) : '');
const strings = (v: Json | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const ids = (v: Json | undefined): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number' && Number.isInteger(x) && x > 0) : []);
const bidTimeout = (v: Json | undefined): number => int(v) || DEFAULT_BID_TIMEOUT_MS;

/** A zone that asks no demand (email zones; zones stored before these fields existed read the same). */
export const NO_DEMAND: ZoneDemand = {
  allowDemand: false, bidFloor: '', minPayout: '', pmpDeals: [], rtbPlacementId: '', iabCategories: [], auctionTieBreak: 'RANDOM', privateAuction: false,
  bidTimeoutMs: DEFAULT_BID_TIMEOUT_MS, player: undefined,
};

/** A standard zone's demand fields. */
export function standardZoneDemand(a: Record<string, Json>): ZoneDemand {
  return {
    allowDemand: a.allow_demand_sources === true,
    bidFloor: amount(a.bid_floor),
    minPayout: amount(a.min_payout),
    pmpDeals: ids(a.pmp_deals),
    rtbPlacementId: str(a.rtb_placement_id),
    iabCategories: strings(a.iab_categories),
    auctionTieBreak: str(a.auction_tie_break) || 'RANDOM',
    privateAuction: false,
    bidTimeoutMs: bidTimeout(a.bid_timeout_ms),
    player: undefined,
  };
}

/** A VAST zone's demand fields, from its rtb_options: a non-empty object asks demand. */
export function vastZoneDemand(a: Record<string, Json>): ZoneDemand {
  const rtb = obj(a.rtb_options);
  if (!Object.keys(rtb).length) return { ...NO_DEMAND };
  const player: DecisionVideoPlayer = {
    width: int(rtb.player_width), height: int(rtb.player_height), minDuration: int(rtb.min_duration), maxDuration: int(rtb.max_duration),
    mimeTypes: strings(rtb.mime_types), startDelay: int(rtb.start_delay), linearity: str(rtb.linearity), allowSkip: rtb.allow_skip === true,
    skipMin: int(rtb.skip_min), skipAfter: int(rtb.skip_after), minBitrate: int(rtb.min_bitrate), maxBitrate: int(rtb.max_bitrate),
    boxingAllowed: rtb.boxing_allowed === true, apiFrameworks: strings(rtb.api_frameworks), bundleId: str(rtb.bundle_id),
  };
  return {
    allowDemand: true,
    bidFloor: amount(rtb.bid_floor),
    minPayout: amount(rtb.min_payout),
    pmpDeals: ids(rtb.pmp_deals),
    rtbPlacementId: '',
    iabCategories: strings(rtb.iab_categories),
    auctionTieBreak: 'RANDOM',
    privateAuction: rtb.private_auction === true,
    bidTimeoutMs: bidTimeout(rtb.bid_timeout_ms),
    player,
  };
}

const ASSETS: Readonly<Record<string, string>> = { ortb_native_title_asset: 'title', ortb_native_image_asset: 'image', ortb_native_data_asset: 'data' };

/** The typed form of a programmatic resource, or undefined for other kinds. */
export function toProgrammaticEntity(kind: string, a: Record<string, Json>): Body | undefined {
  switch (kind) {
    case 'demand_source':
      return {
        demandSource: {
          network: str(a.network), active: a.status !== 'inactive', spendLimit: amount(a.spend_limit), spendLimitPeriod: str(a.spend_limit_period),
          spendLimitStart: str(a.spend_limit_start), spendLimitEnd: str(a.spend_limit_end),
        },
      };
    case 'demand_endpoint': {
      const params = obj(a.default_parameters);
      return {
        demandEndpoint: {
          source: int(a.demand_source), url: str(params.url), parametersJson: JSON.stringify(params), supportedFormats: strings(a.supported_formats),
          nativeJsonEncoded: a.native_json_encoded === true, bidFloor: amount(a.bid_floor),
          revenueShare: typeof a.revenue_share === 'number' ? decimalText(a.revenue_share) : '100',
          markupPercent: typeof a.markup_percent === 'number' ? decimalText(a.markup_percent) : '0', allowedSizes: strings(a.allowed_sizes),
          priority: str(a.priority) || 'network', geoTarget: int(a.geo_target), filterType: str(a.filter_type) || 'all',
          filteredZones: ids(a.filtered_zones), filteredVastZones: ids(a.filtered_vast_zones), active: a.status !== 'inactive',
        },
      };
    }
    case 'pmp_deal':
      return { pmpDeal: { name: str(a.name), bidFloor: amount(a.bid_floor), whitelistSeats: strings(a.whitelist_seats), geoTarget: int(a.geo_target) } };
    case 'ortb_native_template':
      return { ortbNativeTemplate: { htmlTemplate: str(a.html_template) } };
    case 'ortb_native_title_asset':
    case 'ortb_native_image_asset':
    case 'ortb_native_data_asset':
      return {
        ortbNativeAsset: {
          template: int(a.ortb_native_template), asset: ASSETS[kind], type: int(a.type), textLength: int(a.text_length), width: int(a.width),
          height: int(a.height), minWidth: int(a.min_width), minHeight: int(a.min_height), mimes: strings(a.mimes), name: str(a.name),
        },
      };
    case 'ortb_native_ad':
      return {
        ortbNativeAd: {
          zone: int(a.zone), template: int(a.ortb_native_template), demandEndpoint: int(a.demand_endpoint), contextType: int(a.context_type),
          contextSubType: int(a.context_sub_type), placementType: int(a.placement_type),
        },
      };
    default:
      return undefined;
  }
}
