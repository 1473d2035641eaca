import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { DISPLAY_AD_ITEM_KINDS } from './fields';
import { bidTimeout, pmpDealIds } from './programmatic';

/**
 * Inventory shared by v1 and v2: zones, campaigns, image/flash ad items (v1 banners), campaign
 * assignments, flexible types. Cross-field rules (flexible type sizes, creative vs creative_url,
 * assignment types) live in services/inventory/hooks/.
 */

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
const size = (required: boolean): FieldSpec => ({ type: 'integer', min: required ? 1 : 0, max: 10000, ...(required ? { required } : { default: 0 }) });
const url: FieldSpec = { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null };
const text = (maxLength: number): FieldSpec => ({ type: 'string', nullable: true, maxLength, default: null });
const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192, default: null };
/** Set on POST only; a flexible banner may only go into a zone or campaign of the same flexible type. */
const flexibleType: FieldSpec = { type: 'ref', ref: 'flexible_type', nullable: true, createOnly: true, default: null, onRefDelete: 'nullify' };
/** v1 shows `deleted`; deleted resources are gone, so what is shown is always false. */
const deleted: FieldSpec = { type: 'boolean', readOnly: true };
const publisher: FieldSpec = { type: 'ref', ref: 'publisher', nullable: true, default: null, parent: true };
const advertiser: FieldSpec = { type: 'ref', ref: 'advertiser', nullable: true, default: null, parent: true };

export const flexibleTypeKind: ResourceKind = {
  kind: 'flexible_type',
  service: 'inventory',
  title: 'flexible type',
  fields: {
    name,
    width: size(true),
    height: size(true),
  },
  views: {
    v1: { object: 'flexible_type', path: '/v1/flexible-types', fields: ['name', 'width', 'height'] },
    v2: { object: 'flexible_type', path: '/v2/flexible-types', fields: ['name', 'width', 'height'] },
  },
};

export const standardZone: ResourceKind = {
  kind: 'standard_zone',
  service: 'inventory',
  title: 'standard zone',
  archivable: true,
  fields: {
    name,
    dimensions: { type: 'string', enum: ['fixed', 'dynamic'], default: 'fixed' },
    width: size(false),
    height: size(false),
    publisher,
    popup_frequency: { type: 'integer', min: 0, max: 1000000, default: 0 },
    refresh_frequency: { type: 'integer', min: 0, max: 86400, default: 0 },
    refresh_limit: { type: 'integer', min: 0, max: 1000000, default: 0 },
    responsive: { type: 'string', enum: ['fixed', 'auto', 'inherit'], default: 'fixed' },
    unique_delivery: { type: 'boolean', default: false },
    flexible_type: flexibleType,
    iab_categories: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 16 }, maxLength: 100, default: [] },
    allow_demand_sources: { type: 'boolean', default: false },
    bid_floor: { type: 'number', nullable: true, min: 0, default: null },
    min_payout: { type: 'number', nullable: true, min: 0, default: null },
    auction_tie_break: { type: 'string', enum: ['RANDOM', 'SCORE'], default: 'RANDOM' },
    // Ids of the caller's PMP deals offered in the zone's bid requests (services/inventory/hooks/programmatic.ts).
    pmp_deals: pmpDealIds,
    // The OpenRTB `tagid` of the zone's bid requests.
    rtb_placement_id: { type: 'string', nullable: true, maxLength: 255, default: null },
    bid_timeout_ms: {
      ...bidTimeout,
      description: 'An extension of the reference: milliseconds a decision of the zone waits for bids from demand endpoints (150 when not given).',
    },
    metadata,
    deleted,
  },
  views: {
    v1: {
      object: 'banner_zone',
      path: '/v1/zones/banner',
      fields: ['dimensions', 'height', 'width', 'name', 'popup_frequency', 'publisher', 'refresh_frequency', 'refresh_limit', 'responsive', 'unique_delivery', 'flexible_type', 'deleted'],
    },
    v2: {
      object: 'standard_zone',
      path: '/v2/zones/standard',
      archive: true,
      fields: [
        'name', 'dimensions', 'width', 'height', 'publisher', 'popup_frequency', 'refresh_frequency', 'refresh_limit', 'responsive',
        'unique_delivery', 'iab_categories', 'allow_demand_sources', 'bid_floor', 'min_payout', 'auction_tie_break', 'pmp_deals', 'rtb_placement_id',
        'bid_timeout_ms', 'metadata',
      ],
    },
  },
};

export const emailZone: ResourceKind = {
  kind: 'email_zone',
  service: 'inventory',
  title: 'email zone',
  archivable: true,
  fields: {
    name,
    width: size(true),
    height: size(true),
    publisher,
    uid_rotate: { type: 'boolean', default: false },
    metadata,
  },
  views: {
    v1: { object: 'email_zone', path: '/v1/zones/email', fields: ['name', 'width', 'height', 'publisher'] },
    v2: { object: 'email_zone', path: '/v2/zones/email', archive: true, fields: ['name', 'width', 'height', 'publisher', 'uid_rotate', 'metadata'] },
  },
};

export const textZone: ResourceKind = {
  kind: 'text_zone',
  service: 'inventory',
  title: 'text zone',
  fields: {
    // The v1 create body does not mark the name as required.
    name: { type: 'string', nullable: true, maxLength: 255, default: null },
    publisher,
  },
  views: {
    v1: { object: 'text_zone', path: '/v1/zones/text', fields: ['name', 'publisher'] },
  },
};

export const standardCampaign: ResourceKind = {
  kind: 'standard_campaign',
  service: 'inventory',
  title: 'standard campaign',
  archivable: true,
  fields: {
    advertiser,
    name,
    width: size(false),
    height: size(false),
    roadblock_tags: { type: 'string', nullable: true, maxLength: 1024, default: null },
    flexible_type: flexibleType,
    metadata,
    deleted,
  },
  views: {
    v1: {
      object: 'banner_campaign',
      path: '/v1/campaigns/banner',
      fields: ['advertiser', 'height', 'width', 'name', 'roadblock_tags', 'flexible_type', 'deleted'],
    },
    v2: { object: 'standard_campaign', path: '/v2/campaigns/standard', archive: true, archivedDelete: true, fields: ['advertiser', 'name', 'roadblock_tags', 'metadata'] },
  },
};

export const textCampaign: ResourceKind = {
  kind: 'text_campaign',
  service: 'inventory',
  title: 'text campaign',
  fields: { advertiser, name },
  views: {
    v1: { object: 'text_campaign', path: '/v1/campaigns/text', fields: ['advertiser', 'name'] },
  },
};

const adItemCommon: Record<string, FieldSpec> = {
  name,
  /**
   * The advertiser owning the item (an extension of the reference shape, optional): an advertiser's
   * archive takes its items along as direct descendants, and deleting it deletes them.
   */
  advertiser,
  width: size(true),
  height: size(true),
  location: url,
  // A third-party impression pixel is a URL that pages will load: the same http(s) rule as every URL.
  tracking_pixel: url,
  html_content_below: text(8192),
};

export const imageAdItem: ResourceKind = {
  kind: 'image_ad_item',
  service: 'inventory',
  title: 'image ad item',
  timestamps: { created: 'created_date', modified: 'last_modified' },
  fields: {
    ...adItemCommon,
    creative: { type: 'ref', ref: 'image_creative', nullable: true, default: null, onRefDelete: 'nullify' },
    creative_url: url,
    html_alt_text: text(1024),
    html_target: text(255),
    flexible_type: flexibleType,
    /** The spec gives it as a boolean-like string. */
    is_self_serve: { type: 'string', readOnly: true },
    metadata,
  },
  views: {
    v1: {
      object: 'image_banner',
      path: '/v1/banners/image',
      fields: [
        'created_date', 'creative', 'creative_url', 'height', 'width', 'html_alt_text', 'html_content_below', 'html_target', 'last_modified',
        'location', 'name', 'tracking_pixel', 'flexible_type', 'advertiser',
      ],
    },
    v2: {
      object: 'image_ad_item',
      path: '/v2/ad-items/image',
      fields: [
        'name', 'height', 'width', 'tracking_pixel', 'location', 'html_content_below', 'creative', 'creative_url', 'html_alt_text', 'html_target',
        'created_date', 'last_modified', 'flexible_type', 'is_self_serve', 'metadata', 'advertiser',
      ],
      nullAs: { flexible_type: 0 },
    },
  },
};

export const flashAdItem: ResourceKind = {
  kind: 'flash_ad_item',
  service: 'inventory',
  title: 'flash ad item',
  timestamps: { created: 'created_date', modified: 'last_modified' },
  fields: {
    ...adItemCommon,
    /** A flash creative id; exactly one of creative and creative_url is given on create. */
    creative: { type: 'string', nullable: true, minLength: 1, maxLength: 64, default: null },
    creative_url: url,
    mode: { type: 'string', enum: ['window', 'opaque', 'transparent'], default: 'opaque' },
    quality: { type: 'string', enum: ['low', 'medium', 'high'], default: 'high' },
    version: { type: 'integer', min: 5, max: 100, default: 7 },
  },
  views: {
    v1: {
      object: 'flash_banner',
      path: '/v1/banners/flash',
      fields: [
        'created_date', 'creative', 'creative_url', 'height', 'width', 'html_content_below', 'last_modified', 'location', 'mode', 'quality',
        'tracking_pixel', 'version', 'name', 'advertiser',
      ],
    },
    v2: {
      object: 'flash_ad_item',
      path: '/v2/ad-items/flash',
      fields: [
        'name', 'height', 'width', 'tracking_pixel', 'location', 'html_content_below', 'creative', 'creative_url', 'mode', 'quality', 'version',
        'created_date', 'last_modified', 'advertiser',
      ],
      asString: ['version'],
      operations: ['list', 'create', 'get', 'update'],
      disabled: { create: 'Flash ad items are deprecated: creating them is disabled. Use an image or custom HTML ad item instead.' },
    },
  },
};

/** Kinds an assignment's `advertisement` may name (those without a view in a version are not accepted there). */
const ADVERTISEMENT_KINDS = DISPLAY_AD_ITEM_KINDS;

export const campaignAssignment: ResourceKind = {
  kind: 'campaign_assignment',
  service: 'inventory',
  title: 'campaign assignment',
  archiveGroup: 'campaign_assignments',
  fields: {
    campaign: { type: 'typed_ref', refKinds: ['standard_campaign', 'text_campaign'], required: true, createOnly: true, onRefDelete: 'delete' },
    advertisement: { type: 'typed_ref', refKinds: ADVERTISEMENT_KINDS, required: true, createOnly: true, onRefDelete: 'delete' },
    weight: { type: 'integer', min: 1, max: 1000000, default: 1 },
    /** false pauses the assignment: the serving path skips it until it is true again. */
    active: { type: 'boolean', default: true },
    status: { type: 'string', readOnly: true },
  },
  views: {
    v1: { object: 'campaign_assignment', path: '/v1/campaign-assignments', fields: ['active', 'advertisement', 'campaign', 'weight'] },
    v2: { object: 'campaign_assignment', path: '/v2/campaign-assignments', fields: ['active', 'advertisement', 'campaign', 'weight', 'status'] },
  },
};

export const kinds: ResourceKind[] = [
  flexibleTypeKind,
  standardZone,
  emailZone,
  textZone,
  standardCampaign,
  textCampaign,
  imageAdItem,
  flashAdItem,
  campaignAssignment,
];

/** v1 "all types" lists; the v2 groups are described with the v2-only kinds. */
export const groups: KindGroup[] = [
  { version: 'v1', path: '/v1/zones', kinds: ['standard_zone', 'email_zone', 'text_zone'] },
  { version: 'v1', path: '/v1/campaigns', kinds: ['standard_campaign', 'text_campaign'] },
  { version: 'v1', path: '/v1/banners', kinds: ['image_ad_item', 'flash_ad_item'] },
  { version: 'v2', path: '/v2/zones', kinds: ['standard_zone', 'email_zone'] },
  { version: 'v2', path: '/v2/campaigns', kinds: ['standard_campaign'] },
];
