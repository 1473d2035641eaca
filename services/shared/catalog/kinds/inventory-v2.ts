import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { kinds as sharedInventoryKinds } from './inventory';

/**
 * v2-only inventory resources: custom HTML, native and rich media ad items, companion products,
 * creatives, media groups, native templates, placements, schedules and VAST ad items. Field names,
 * types and enums follow spec section 2.2 and, where it says "not shown", the reference OpenAPI.
 */

const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
const optionalName: FieldSpec = { type: 'string', nullable: true, maxLength: 255, default: null };
const pixels: FieldSpec = { type: 'integer', required: true, min: 1, max: 10000 };
const url: FieldSpec = { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null };
const html: FieldSpec = { type: 'string', nullable: true, maxLength: 65536, default: null };
const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192, default: null };
const optionalInt: FieldSpec = { type: 'integer', nullable: true, min: 0, default: null };
const money: FieldSpec = { type: 'number', nullable: true, min: 0 };

/** Fields every v2 display ad item of this module carries (reference: *_ad_item_get). */
const adItemBase: Record<string, FieldSpec> = {
  name,
  height: pixels,
  width: pixels,
  location: url,
  tracking_pixel: url,
  // Pixels given with only a url get an id (services/inventory/hooks/); an id keeps the pixel's identity on update.
  tracking_pixels: {
    type: 'array',
    default: [],
    maxLength: 20,
    items: { type: 'object', closed: true, properties: { id: { type: 'integer', min: 1 }, url: { type: 'string', format: 'url', required: true, maxLength: 2048 } } },
  },
  metadata,
  trusted_redirect_domains: { type: 'array', default: [], maxLength: 100, items: { type: 'string', minLength: 1, maxLength: 255 } },
  // Spec 2.2: a boolean-like value given as a string; set by the service ("false" for API-made items).
  is_self_serve: { type: 'string', readOnly: true },
};
const adItemOutput = ['name', 'height', 'width', 'location', 'tracking_pixel', 'tracking_pixels', 'metadata', 'trusted_redirect_domains', 'is_self_serve'];
const adItemTimestamps = { created: 'created_date', modified: 'last_modified' };
const expandHorizontal: FieldSpec = { type: 'string', enum: ['none', 'left', 'right'], default: 'none' };
const expandVertical: FieldSpec = { type: 'string', enum: ['none', 'up', 'down'], default: 'none' };

export const customHtmlAdItem: ResourceKind = {
  kind: 'custom_html_ad_item',
  service: 'inventory',
  title: 'custom HTML ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    custom_html: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
    html_content_below: html,
    expand_horizontal_direction: expandHorizontal,
    expand_vertical_direction: expandVertical,
  },
  views: {
    v2: {
      object: 'custom_html_ad_item',
      path: '/v2/ad-items/custom-html',
      fields: [...adItemOutput, 'custom_html', 'html_content_below', 'expand_horizontal_direction', 'expand_vertical_direction', 'created_date', 'last_modified'],
    },
  },
};

export const nativeAdItem: ResourceKind = {
  kind: 'native_ad_item',
  service: 'inventory',
  title: 'native ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    template: { type: 'ref', ref: 'native_template', required: true, onRefDelete: 'nullify' },
    // Template variable id -> the value shown for it (text, number, or an image id for image variables).
    variables: { type: 'object', default: {}, maxBytes: 16384 },
  },
  views: {
    v2: {
      object: 'native_ad_item',
      path: '/v2/ad-items/native',
      fields: [...adItemOutput, 'template', 'variables', 'created_date', 'last_modified'],
    },
  },
};

export const richMediaAdItem: ResourceKind = {
  kind: 'rich_media_ad_item',
  service: 'inventory',
  title: 'rich media ad item',
  timestamps: adItemTimestamps,
  fields: {
    ...adItemBase,
    creative: { type: 'ref', ref: 'rich_media_creative', required: true, onRefDelete: 'nullify' },
    html_content_below: html,
    expand_horizontal_direction: expandHorizontal,
    expand_vertical_direction: expandVertical,
  },
  views: {
    v2: {
      object: 'rich_media_ad_item',
      path: '/v2/ad-items/rich-media',
      fields: [...adItemOutput, 'creative', 'html_content_below', 'expand_horizontal_direction', 'expand_vertical_direction', 'created_date', 'last_modified'],
    },
  },
};

/** Companion products: one kind per parent ad item type, same shape (reference ad_item_companion_product). */
function companionProduct(parentKind: 'image_ad_item' | 'native_ad_item', segment: string): ResourceKind {
  return {
    kind: `${segment}_companion_product`,
    service: 'inventory',
    title: 'companion product',
    fields: {
      ad_item: { type: 'ref', ref: parentKind, required: true, parent: true, createOnly: true },
      catalog: { type: 'integer', required: true, min: 1 },
      product_identifier: { type: 'string', required: true, minLength: 1, maxLength: 255 },
    },
    views: {
      v2: {
        object: 'ad_item_companion_product',
        path: `/v2/ad-items/${segment}/:ad_item_id/companions/products`,
        scope: { ad_item_id: 'ad_item' },
        fields: ['catalog', 'product_identifier'],
      },
    },
  };
}
export const imageCompanionProduct = companionProduct('image_ad_item', 'image');
export const nativeCompanionProduct = companionProduct('native_ad_item', 'native');

export const mediaGroup: ResourceKind = {
  kind: 'media_group',
  service: 'inventory',
  title: 'media group',
  fields: {
    name,
    is_default: { type: 'boolean', default: false },
  },
  views: { v2: { object: 'media_group', path: '/v2/media-groups' } },
};

/**
 * Creative metadata. The file itself lives at `file_url` (given by the caller, or a file the platform
 * wrote under DATA_DIR, such as a rendered native ad).
 */
function creative(type: 'image' | 'video' | 'audio' | 'rich_media', extra: Record<string, FieldSpec>): ResourceKind {
  const segment = type.replace('_', '-');
  const fields: Record<string, FieldSpec> = {
    // Deleting a media group deletes the creatives filed in it.
    group: { type: 'ref', ref: 'media_group', required: true, parent: true },
    name: optionalName,
    description: { type: 'string', nullable: true, maxLength: 1024, default: null },
    file_url: { type: 'string', format: 'url', required: true, maxLength: 2048 },
    file_name: { type: 'string', nullable: true, maxLength: 255, default: null },
    mime_type: { type: 'string', nullable: true, maxLength: 127, default: null },
    file_size: { type: 'integer', nullable: true, min: 0, default: null },
    ...extra,
  };
  return {
    kind: `${type}_creative`,
    service: 'inventory',
    title: `${type.replace('_', ' ')} creative`,
    timestamps: { created: 'uploaded_time' },
    fields,
    views: { v2: { object: `${type}_creative`, path: `/v2/creatives/${segment}` } },
  };
}
const dimension: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 10000, default: null };
export const imageCreative = creative('image', { width: dimension, height: dimension });
export const videoCreative = creative('video', { width: dimension, height: dimension, duration: optionalInt, video_data_rate: optionalInt });
export const audioCreative = creative('audio', { duration: optionalInt, audio_data_rate: optionalInt });
export const richMediaCreative = creative('rich_media', { has_click_macro: { type: 'boolean', default: false } });

export const NATIVE_VARIABLE_TYPES = ['url', 'url_raw', 'text', 'file', 'number', 'image_url', 'dropdown', 'third_party_script'] as const;

export const nativeTemplate: ResourceKind = {
  kind: 'native_template',
  service: 'inventory',
  title: 'native template',
  fields: {
    name,
    raw_html: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
    // Each variable gets an id (services/inventory/hooks/); native ad items key their values by it.
    variables: {
      type: 'array',
      required: true,
      maxLength: 100,
      items: {
        type: 'object',
        closed: true,
        properties: {
          id: { type: 'integer', min: 1 },
          name: { type: 'string', required: true, minLength: 1, maxLength: 255 },
          placeholder: { type: 'string', required: true, minLength: 1, maxLength: 255 },
          type: { type: 'string', required: true, enum: NATIVE_VARIABLE_TYPES },
          max_length: { type: 'integer', min: 1, max: 65536, nullable: true },
          dropdown_values: { type: 'string', maxLength: 4096, nullable: true },
          optional: { type: 'boolean' },
        },
      },
    },
  },
  views: { v2: { object: 'native_template', path: '/v2/templates/native' } },
};

export const schedule: ResourceKind = {
  kind: 'schedule',
  service: 'inventory',
  title: 'schedule',
  timestamps: { created: 'created_date' },
  fields: {
    // `YYYY-MM-DD HH:MM:SS`, checked in services/inventory/hooks/; start defaults to midnight today, end null runs forever.
    start_date: { type: 'string', nullable: true, maxLength: 19 },
    end_date: { type: 'string', nullable: true, maxLength: 19, default: null },
    day_cap_limit: optionalInt,
    day_cap_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
    delivery_method: { type: 'string', enum: ['default', 'smooth'], default: 'default' },
    per_user_view_limit: optionalInt,
    per_user_view_period: optionalInt,
    // An extension: the reference counts the period in days; hours allow caps such as 2 per hour.
    per_user_view_period_unit: { type: 'string', enum: ['days', 'hours'], default: 'days' },
    quota_lifetime: optionalInt,
    quota_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
    under_delivery_behaviour: { type: 'string', nullable: true, enum: ['endOnQuota', 'endOnDate'] },
    day_parting_id: optionalInt,
  },
  views: { v2: { object: 'schedule', path: '/v2/schedules' } },
};

/** What a placement may put in a zone: any ad item type or a standard campaign (reference placement_advertisement). */
export const PLACEMENT_ADVERTISEMENT_KINDS = ['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item', 'standard_campaign'] as const;

export const placement: ResourceKind = {
  kind: 'placement',
  service: 'inventory',
  title: 'placement',
  timestamps: { created: 'created_date' },
  // Archived along with the zone, ad item or campaign it references; restored only with include_placements.
  archiveGroup: 'placements',
  fields: {
    active: { type: 'boolean', default: true },
    // A placement goes with whatever it places or where: deleting either deletes it.
    advertisement: { type: 'typed_ref', refKinds: PLACEMENT_ADVERTISEMENT_KINDS, required: true, onRefDelete: 'delete' },
    // Exactly one of zone and channel (a channel serves in every zone assigned to it): services/inventory/hooks/placements.ts.
    zone: { type: 'typed_ref', refKinds: ['standard_zone', 'email_zone'], nullable: true, default: null, onRefDelete: 'delete' },
    channel: { type: 'ref', ref: 'channel', nullable: true, default: null, onRefDelete: 'delete' },
    schedule: { type: 'ref', ref: 'schedule', required: true, onRefDelete: 'delete' },
    cost: {
      type: 'object',
      nullable: true,
      default: null,
      closed: true,
      properties: { fixed_cost: money, cpm: money, cpc: money, cpa: money },
    },
    payout: {
      type: 'object',
      nullable: true,
      default: null,
      closed: true,
      properties: { type: { type: 'string', required: true, enum: ['percent', 'rate'] }, fixed: money, cpm: money, cpc: money, cpa: money },
    },
    payout_percent: { type: 'number', nullable: true, min: 0, max: 100, default: null },
    day_cap_limit: optionalInt,
    day_cap_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
    // Targets (kinds/targeting.ts); deleting a target lifts it from the placements that named it.
    geo_target: { type: 'ref', ref: 'geo_target', nullable: true, default: null, onRefDelete: 'nullify' },
    platform_target: { type: 'ref', ref: 'platform_target', nullable: true, default: null, onRefDelete: 'nullify' },
    list_target: { type: 'ref', ref: 'list_target', nullable: true, default: null, onRefDelete: 'nullify' },
    data_key_target_id: { type: 'ref', ref: 'data_key_target', nullable: true, default: null, onRefDelete: 'nullify' },
    // An extension: the reference has postal-code targets but names no placement field for them.
    postal_code_target: { type: 'ref', ref: 'postal_code_target', nullable: true, default: null, onRefDelete: 'nullify' },
    custom_segment_definition: optionalInt,
    keywords: { type: 'string', nullable: true, maxLength: 4096, default: null },
    keywords_match_method: { type: 'string', enum: ['required', 'preferred', 'filtered'], default: 'preferred' },
    per_user_view_limit: optionalInt,
    per_user_view_period: optionalInt,
    per_user_view_period_unit: { type: 'string', enum: ['days', 'hours'], default: 'days' },
    priority: { type: 'string', enum: ['sponsorship', 'standard', 'network', 'bulk', 'house'], default: 'standard' },
    serve_method: { type: 'string', enum: ['weight', 'auction'], default: 'weight' },
    weight: { type: 'integer', min: 1, max: 1000000, default: 1 },
    share_of_voice: { type: 'integer', nullable: true, min: 0, max: 100, default: null },
    contextual_segments: { type: 'array', default: [], maxLength: 100, items: { type: 'integer', min: 1 } },
    audience_segments: { type: 'array', default: [], maxLength: 100, items: { type: 'integer', min: 1 } },
  },
  views: { v2: { object: 'placement', path: '/v2/placements' } },
};

export const vastAdItem: ResourceKind = {
  kind: 'vast_ad_item',
  service: 'inventory',
  title: 'VAST ad item',
  timestamps: { created: 'created_at', modified: 'updated_at' },
  fields: {
    name,
    location: url,
    ad_parameters: { type: 'string', maxLength: 65536, default: '' },
    encode_parameters: { type: 'string', enum: ['none', 'xml', 'xml_reencode'], default: 'none' },
    companion_display: { type: 'string', enum: ['any', 'all', 'none'], default: 'none' },
    skippable: { type: 'boolean', default: false },
    // "hh:mm:ss" or a whole percentage; both checked in services/inventory/hooks/.
    skip_duration: { type: 'string', nullable: true, maxLength: 8, default: null },
    duration: { type: 'string', required: true, maxLength: 8 },
    use_wrapper: { type: 'boolean', default: false },
    wrapper_url: { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null },
    metadata,
    companions: { type: 'array', default: [], maxLength: 50, items: { type: 'integer', min: 1 } },
  },
  views: { v2: { object: 'vast_ad_item', path: '/v2/vast-ad-items' } },
};

export const kinds: ResourceKind[] = [
  customHtmlAdItem,
  nativeAdItem,
  richMediaAdItem,
  imageCompanionProduct,
  nativeCompanionProduct,
  mediaGroup,
  imageCreative,
  videoCreative,
  audioCreative,
  richMediaCreative,
  nativeTemplate,
  schedule,
  placement,
  vastAdItem,
];

// The "all types" lists span kinds of the area shared with v1 too; a kind joins once it is declared.
const declared = new Set([...kinds, ...sharedInventoryKinds].map((k) => k.kind));
const present = (names: string[]) => names.filter((k) => declared.has(k));

export const groups: KindGroup[] = [
  { version: 'v2', path: '/v2/ad-items', kinds: present(['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item']) },
  { version: 'v2', path: '/v2/zones', kinds: present(['standard_zone', 'email_zone']) },
  { version: 'v2', path: '/v2/campaigns', kinds: present(['standard_campaign']) },
  { version: 'v2', path: '/v2/creatives', kinds: ['image_creative', 'video_creative', 'audio_creative', 'rich_media_creative'] },
].filter((g) => g.kinds.length > 0) as KindGroup[];
