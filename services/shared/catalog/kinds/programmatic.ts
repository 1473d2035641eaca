import type { FieldSpec, ResourceKind } from '../types';
import { money, name, optionalName, priority } from './fields';

/**
 * Programmatic demand (the reference's demand sources, demand endpoints, PMP deals and OpenRTB native
 * templates and ads): who is asked for bids, where the bid requests go, which private deals a zone
 * offers, and how a standard zone asks native demand. Names, types and enums follow the reference
 * OpenAPI; ranges and defaults it leaves open are chosen at each field. Rules between fields and
 * between resources (a spend limit's period and window, default_parameters.url, zone and deal id
 * lists) are in services/inventory/hooks/programmatic.ts. The serving path reads these kinds as
 * decision data (services/inventory/decision-data.ts).
 */

/** The networks a demand source may represent (the reference's list). */
export const DEMAND_NETWORKS = [
  'adview', 'aerserv', 'inmobi', 'inneractive', 'loopme', 'mobilefuse', 'onebyaol', 'pubmatic', 'pubnative', 'smaato', 'startapp', 'tappx',
  'consumable', 'bidphysics', 'openrtb',
] as const;

export const AD_FORMATS = ['display', 'native', 'video'] as const;

const status: FieldSpec = { type: 'string', enum: ['active', 'inactive'], default: 'active' };
/** An instant in ISO 8601 with its offset (2016-09-01T12:00:00-08:00); the order of start and end is checked in hooks. */
const instant: FieldSpec = {
  type: 'string',
  nullable: true,
  maxLength: 40,
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})$',
  patternHint: 'an ISO 8601 date-time with its offset, such as 2016-09-01T12:00:00-08:00',
  default: null,
};
/** A CPM in the account's currency (kept as the JSON number given; decision data carries it as decimal text). */
const cpmValue: FieldSpec = { ...money, max: 1_000_000 };
const cpm: FieldSpec = { ...cpmValue, default: null };
const percent: FieldSpec = { type: 'number', min: 0, max: 100 };
/** Ids of the caller's resources of one kind; each must exist (hooks), and a deleted one leaves the list. */
const idListOf = (kind: string, maxLength: number): FieldSpec => ({ type: 'array', idsOf: kind, maxLength, items: { type: 'integer', min: 1 } });
const idList = (kind: string, maxLength: number): FieldSpec => ({ ...idListOf(kind, maxLength), default: [] });
export const pmpDealIds = idList('pmp_deal', 100);
const geoTarget: FieldSpec = { type: 'ref', ref: 'geo_target', nullable: true, default: null, onRefDelete: 'nullify' };

export const demandSource: ResourceKind = {
  kind: 'demand_source',
  service: 'inventory',
  title: 'demand source',
  fields: {
    name,
    // What the source is; the reference's update body has no network, so it is set on create only.
    network: { type: 'string', required: true, enum: DEMAND_NETWORKS, createOnly: true },
    status,
    // No more bid requests once this much is spent in a period (spend_limit_period, required with it),
    // counted between spend_limit_start and spend_limit_end when given.
    spend_limit: { ...money, max: 1_000_000_000, default: null },
    spend_limit_period: { type: 'string', nullable: true, enum: ['once', 'weekly', 'biweekly', 'monthly', 'quarterly'], default: null },
    spend_limit_start: instant,
    spend_limit_end: instant,
  },
  views: { v2: { object: 'demand_source', path: '/v2/demand-sources' } },
};

export const demandEndpoint: ResourceKind = {
  kind: 'demand_endpoint',
  service: 'inventory',
  title: 'demand endpoint',
  fields: {
    name,
    // Deleting the source deletes its endpoints: an endpoint is asked only for its source.
    demand_source: { type: 'ref', ref: 'demand_source', required: true, onRefDelete: 'delete' },
    // The endpoint's parameters; `url` (required) is where OpenRTB bid requests are POSTed.
    default_parameters: { type: 'object', required: true, maxBytes: 8192 },
    supported_formats: { type: 'array', required: true, minLength: 1, maxLength: AD_FORMATS.length, items: { type: 'string', enum: AD_FORMATS } },
    native_json_encoded: { type: 'boolean', default: false },
    // Bids under this CPM are not considered (null or 0: no floor of its own).
    bid_floor: { ...cpm, default: 0 },
    // Percent of a winning bid paid out to the publisher.
    revenue_share: { ...percent, default: 100 },
    // Percent added to the zone's floor in the bid request sent to this endpoint.
    markup_percent: { type: 'number', min: 0, max: 1000, default: 0 },
    // Zone sizes (WxH) whose display requests may go to the endpoint; empty: every size.
    allowed_sizes: { type: 'array', default: [], maxLength: 100, items: { type: 'string', format: 'size' } },
    priority: { ...priority, default: 'network' },
    geo_target: geoTarget,
    filter_type: { type: 'string', enum: ['all', 'whitelist', 'blacklist'], default: 'all' },
    filtered_zones: idList('standard_zone', 1000),
    filtered_vast_zones: idList('vast_zone', 1000),
    status,
  },
  views: { v2: { object: 'demand_endpoint', path: '/v2/demand-endpoints' } },
};

export const pmpDeal: ResourceKind = {
  kind: 'pmp_deal',
  service: 'inventory',
  title: 'PMP deal',
  fields: {
    name: optionalName,
    bid_floor: cpm,
    // Buyer seats that may bid on the deal; empty: any seat.
    whitelist_seats: { type: 'array', default: [], maxLength: 500, items: { type: 'string', minLength: 1, maxLength: 255 } },
    // The reference documents 0 as a deal's "no geo target".
    geo_target: { ...geoTarget, zeroAsNull: true },
    // User DB audiences do not exist on this platform: only null is taken (hooks say why).
    audience_target: { type: 'integer', nullable: true, min: 1, default: null },
    // The zones whose pmp_deals (a VAST zone's rtb_options.pmp_deals) name the deal, computed on read.
    standard_zones: { type: 'array', readOnly: true, items: { type: 'integer' } },
    vast_zones: { type: 'array', readOnly: true, items: { type: 'integer' } },
  },
  views: { v2: { object: 'pmp_deal', path: '/v2/pmp-deals' } },
};

export const ortbNativeTemplate: ResourceKind = {
  kind: 'ortb_native_template',
  service: 'inventory',
  title: 'ORTB native template',
  fields: {
    name,
    // Renders a native bid's assets ({{title}} and the like).
    html_template: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
  },
  views: { v2: { object: 'ortb_native_template', path: '/v2/templates/ortb-native' } },
};

/** The template an asset belongs to (from the path): deleting the template deletes its assets. */
const ofTemplate: FieldSpec = { type: 'ref', ref: 'ortb_native_template', required: true, parent: true, createOnly: true };
const side: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 10000, default: null };
const textLength: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 10000, default: null };

function asset(kind: string, title: string, segment: string, fields: Record<string, FieldSpec>): ResourceKind {
  return {
    kind,
    service: 'inventory',
    title,
    fields: { ortb_native_template: ofTemplate, name: optionalName, ...fields },
    views: {
      v2: {
        object: kind,
        path: `/v2/templates/ortb-native/:ortb_native_template_id/assets/${segment}`,
        scope: { ortb_native_template_id: 'ortb_native_template' },
        fields: ['name', ...Object.keys(fields)],
      },
    },
  };
}

export const ortbNativeTitleAsset = asset('ortb_native_title_asset', 'ORTB native title asset', 'title', {
  // OpenRTB native asks a title's maximum length.
  text_length: { type: 'integer', required: true, min: 1, max: 10000 },
});

export const ortbNativeImageAsset = asset('ortb_native_image_asset', 'ORTB native image asset', 'image', {
  // 1: icon, 3: main image (OpenRTB native image asset types).
  type: { type: 'integer', required: true, enum: [1, 3] },
  width: side,
  height: side,
  min_width: side,
  min_height: side,
  mimes: {
    type: 'array',
    default: [],
    maxLength: 20,
    items: { type: 'string', maxLength: 100, pattern: '^image/[a-z0-9.+-]+$', patternHint: 'an image MIME type such as image/png' },
  },
});

export const ortbNativeDataAsset = asset('ortb_native_data_asset', 'ORTB native data asset', 'data', {
  // OpenRTB native data asset types 1 (sponsored) to 12 (CTA text).
  type: { type: 'integer', required: true, min: 1, max: 12 },
  text_length: textLength,
});

export const ortbNativeAd: ResourceKind = {
  kind: 'ortb_native_ad',
  service: 'inventory',
  title: 'ORTB native ad',
  fields: {
    // The standard zone of the path: archiving or deleting it takes its native ads along.
    zone: { type: 'ref', ref: 'standard_zone', required: true, parent: true, createOnly: true },
    ortb_native_template: { type: 'ref', ref: 'ortb_native_template', required: true, onRefDelete: 'delete' },
    // Only this endpoint's bids are rendered with the template (null: every endpoint's). An ad for a
    // deleted endpoint goes with it rather than widening to every endpoint.
    demand_endpoint: { type: 'ref', ref: 'demand_endpoint', nullable: true, default: null, onRefDelete: 'delete' },
    // OpenRTB native context, context sub-type and placement type.
    context_type: { type: 'integer', nullable: true, enum: [1, 2, 3], default: null },
    context_sub_type: { type: 'integer', nullable: true, enum: [10, 11, 12, 13, 14, 15, 20, 21, 22, 30, 31, 32], default: null },
    placement_type: { type: 'integer', nullable: true, enum: [1, 2, 3, 4], default: null },
  },
  views: {
    v2: {
      object: 'ortb_native_ad',
      path: '/v2/zones/standard/:zone_id/ortb-native-ads',
      scope: { zone_id: 'zone' },
      fields: ['ortb_native_template', 'demand_endpoint', 'context_type', 'context_sub_type', 'placement_type'],
    },
  },
};

/** The extension every zone asking demand has: how long its decision waits for bids. */
const bidTimeoutValue: FieldSpec = { type: 'integer', min: 10, max: 2000 };
export const bidTimeout: FieldSpec = { ...bidTimeoutValue, default: 150 };

/** A VAST zone's programmatic options (the reference's vast_rtb_options); rules between members are in hooks. */
export const vastRtbOptions: FieldSpec = {
  type: 'object',
  nullable: true,
  default: null,
  maxBytes: 8192,
  closed: true,
  properties: {
    player_width: side,
    player_height: side,
    // Seconds.
    min_duration: { type: 'integer', nullable: true, min: 0, max: 86_400 },
    max_duration: { type: 'integer', nullable: true, min: 0, max: 86_400 },
    mime_types: {
      type: 'array',
      nullable: true,
      maxLength: 20,
      items: { type: 'string', maxLength: 100, pattern: '^(video|application)/[A-Za-z0-9.+-]+$', patternHint: 'a video MIME type such as video/mp4' },
    },
    // 0 pre-roll, -1 generic mid-roll, -2 generic post-roll, above 0 mid-roll at that second.
    start_delay: { type: 'integer', nullable: true, min: -2, max: 86_400 },
    linearity: { type: 'string', nullable: true, enum: ['linear', 'nonlinear', 'both'] },
    allow_skip: { type: 'boolean', nullable: true },
    skip_min: { type: 'integer', nullable: true, min: 0, max: 86_400 },
    skip_after: { type: 'integer', nullable: true, min: 0, max: 86_400 },
    // Kbps.
    min_bitrate: { type: 'integer', nullable: true, min: 0, max: 1_000_000 },
    max_bitrate: { type: 'integer', nullable: true, min: 0, max: 1_000_000 },
    boxing_allowed: { type: 'boolean', nullable: true },
    iab_categories: { type: 'array', nullable: true, maxLength: 100, items: { type: 'string', minLength: 1, maxLength: 16 } },
    api_frameworks: { type: 'array', nullable: true, maxLength: 2, items: { type: 'string', enum: ['vpaid1', 'vpaid2'] } },
    bundle_id: { type: 'string', nullable: true, maxLength: 255 },
    bid_floor: cpmValue,
    min_payout: cpmValue,
    private_auction: { type: 'boolean', nullable: true },
    // Ids of the caller's PMP deals (hooks).
    pmp_deals: { ...idListOf('pmp_deal', 100), nullable: true },
    bid_timeout_ms: {
      ...bidTimeoutValue,
      nullable: true,
      description: 'An extension of the reference: milliseconds a decision of the zone waits for bids from demand endpoints (150 when not given).',
    },
  },
};

export const kinds: ResourceKind[] = [
  demandSource, demandEndpoint, pmpDeal, ortbNativeTemplate, ortbNativeTitleAsset, ortbNativeImageAsset, ortbNativeDataAsset, ortbNativeAd,
];
