import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { metadata, name, optionalInt, perUserCap, placementCost, placementPayout, priority, scheduleProgress, scheduleQuota, scheduleWindow, url } from './fields';
import { vastRtbOptions } from './programmatic';

/**
 * Video inventory (the reference's VAST 2/3 groups): VAST zones, campaigns and their assignments, ad
 * items with their media files, companions and third-party tracking, and the placements, schedules and
 * channels that decide which of them a player gets. Names, types and enums follow the reference
 * OpenAPI; extensions and refusals are commented where they are declared. Served by
 * services/serving/ (`/vast.spark`), which reads them through the same decision engine as display.
 */

const timestamps = { created: 'created_at', modified: 'updated_at' };
/** Who made or last changed a resource: the platform has API keys, not interface users, so always null. */
const userId: FieldSpec = { type: 'integer', readOnly: true, nullable: true };
const pixelsOrZero: FieldSpec = { type: 'integer', nullable: true, min: 0, max: 10000, default: null };
const encodeParameters: FieldSpec = { type: 'string', enum: ['none', 'xml', 'xml_reencode'], default: 'none' };
const adParameters: FieldSpec = { type: 'string', nullable: true, maxLength: 65536, default: null };
const bitrate: FieldSpec = { type: 'integer', nullable: true, min: 0, max: 1_000_000, default: null };
/** The ad item a media file, companion or tracking URL belongs to: it goes wherever its ad item goes. */
const ofAdItem: FieldSpec = { type: 'ref', ref: 'vast_ad_item', required: true, parent: true, createOnly: true };
/**
 * Fields of features this platform does not have (User DB audiences, contracts, ad-item-level
 * targeting): present for the reference's clients, and only null is taken (services/inventory/hooks/video.ts
 * says why), so that nothing stored is silently ignored.
 */
const unavailable: FieldSpec = { type: 'integer', nullable: true, min: 1, default: null };

export const vastAdItem: ResourceKind = {
  kind: 'vast_ad_item',
  service: 'inventory',
  title: 'VAST ad item',
  timestamps,
  fields: {
    name,
    description: { type: 'string', nullable: true, maxLength: 4096, default: null },
    location: url,
    ad_parameters: { type: 'string', maxLength: 65536, default: '' },
    encode_parameters: encodeParameters,
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

export const vastZone: ResourceKind = {
  kind: 'vast_zone',
  service: 'inventory',
  title: 'VAST zone',
  archivable: true,
  fields: {
    name,
    publisher: { type: 'ref', ref: 'publisher', required: true, parent: true },
    // Served when no placement of the zone is eligible (the item, else the campaign's pick).
    default_vast_ad_item: { type: 'ref', ref: 'vast_ad_item', nullable: true, default: null, onRefDelete: 'nullify' },
    default_vast_campaign: { type: 'ref', ref: 'vast_campaign', nullable: true, default: null, onRefDelete: 'nullify' },
    // Options for programmatic demand (the reference's vast_rtb_options, with the extension
    // bid_timeout_ms): a zone with a non-empty object asks demand endpoints for bids. Rules between
    // members are in services/inventory/hooks/programmatic.ts.
    rtb_options: vastRtbOptions,
    // Within a priority tier: smooth delivery, then weight, then auction ("weight"), or auction before weight.
    serve_priority_order: { type: 'string', enum: ['weight', 'auction'], default: 'weight' },
    // An extension: the VAST version the zone's tag answers in (a request's `vast=` overrides it).
    // 3.0 is the oldest that can say an ad is skippable.
    vast_version: { type: 'string', enum: ['2.0', '3.0', '4.2'], default: '3.0' },
    metadata,
  },
  views: { v2: { object: 'vast_zone', path: '/v2/vast-zones', archive: true } },
};

export const vastCampaign: ResourceKind = {
  kind: 'vast_campaign',
  service: 'inventory',
  title: 'VAST campaign',
  archivable: true,
  timestamps,
  fields: {
    name,
    advertiser: { type: 'ref', ref: 'advertiser', required: true, parent: true },
    contract: unavailable,
    booking_number: { type: 'string', nullable: true, maxLength: 255, default: null },
    // Where targeting comes from. Ad-item-level targeting is refused on assignments (below), so the
    // campaign's placement is the only source; AD_ITEM and BOTH are refused rather than ignored.
    targeting_source: { type: 'string', enum: ['CAMPAIGN'], default: 'CAMPAIGN' },
    created_by: userId,
    updated_by: userId,
  },
  views: { v2: { object: 'vast_campaign', path: '/v2/vast-campaigns', archive: true, archivedDelete: true } },
};


export const vastCampaignAssignment: ResourceKind = {
  kind: 'vast_campaign_assignment',
  service: 'inventory',
  title: 'VAST campaign assignment',
  archiveGroup: 'campaign_assignments',
  timestamps,
  fields: {
    active: { type: 'boolean', default: true },
    ad_item: { type: 'ref', ref: 'vast_ad_item', required: true, createOnly: true, onRefDelete: 'delete' },
    campaign: { type: 'ref', ref: 'vast_campaign', required: true, createOnly: true, onRefDelete: 'delete' },
    weight: { type: 'integer', min: 1, max: 1000000, default: 1 },
    geo_target: unavailable,
    platform_target: unavailable,
    keywords: { type: 'string', nullable: true, maxLength: 4096, default: null },
    keywords_match_method: { type: 'string', enum: ['required', 'preferred', 'filtered'], default: 'preferred' },
    audience_target: unavailable,
    data_key_target: unavailable,
    created_by: userId,
    updated_by: userId,
  },
  views: { v2: { object: 'vast_campaign_assignment', path: '/v2/vast-campaign-assignments' } },
};

export const vastSchedule: ResourceKind = {
  kind: 'vast_schedule',
  service: 'inventory',
  title: 'VAST schedule',
  timestamps: { created: 'created_at' },
  fields: {
    delivery_method: { type: 'string', enum: ['default', 'smooth'], default: 'default' },
    ...scheduleWindow,
    ...scheduleQuota,
    // VAST placements carry no geo target of their own: their schedule's applies. The reference
    // documents 0 as "no geo target".
    geo_target: { type: 'ref', ref: 'geo_target', nullable: true, default: null, onRefDelete: 'nullify', zeroAsNull: true },
    day_parting_id: optionalInt,
    // The weight of the schedule's placements (VAST placements have none of their own).
    weight: { type: 'integer', min: 1, max: 1000000, default: 1 },
    // One day cap, of the kind day_cap_type names; the other limit stays 0 (checked in hooks).
    day_cap_views_limit: { type: 'integer', min: 0, default: 0 },
    day_cap_clicks_limit: { type: 'integer', min: 0, default: 0 },
    day_cap_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
    ...perUserCap,
    // Counted by reporting: the requests answered and the conversions of the schedule's placements.
    requests: { type: 'integer', readOnly: true },
    leads: { type: 'integer', readOnly: true },
    ...scheduleProgress,
    created_by: userId,
  },
  views: { v2: { object: 'vast_schedule', path: '/v2/vast-schedules' } },
};

export const vastChannel: ResourceKind = {
  kind: 'vast_channel',
  service: 'inventory',
  title: 'VAST channel',
  archivable: true,
  fields: {
    name,
    priority,
    // The zones assigned to the channel ({id, name, type}), from its zone assignments.
    vast_zones: { type: 'array', readOnly: true },
  },
  views: { v2: { object: 'vast_channel', path: '/v2/vast-channels', archive: true, archivedDelete: true } },
};

export const vastChannelZoneAssignment: ResourceKind = {
  kind: 'vast_channel_zone_assignment',
  service: 'inventory',
  title: 'VAST channel zone assignment',
  fields: {
    vast_channel: { type: 'ref', ref: 'vast_channel', required: true, parent: true, createOnly: true },
    // Given as {"id": …} (the reference's shape); the type may be left out.
    vast_zone: { type: 'typed_ref', refKinds: ['vast_zone'], required: true, onRefDelete: 'delete', createOnly: true },
  },
  views: { v2: { object: 'vast_channel_zone_assignment', path: '/v2/vast-channel-zone-assignments', operations: ['list', 'create', 'get', 'delete'] } },
};

export const vastPlacement: ResourceKind = {
  kind: 'vast_placement',
  service: 'inventory',
  title: 'VAST placement',
  archiveGroup: 'placements',
  timestamps,
  fields: {
    advertisement: { type: 'typed_ref', refKinds: ['vast_ad_item', 'vast_campaign'], required: true, onRefDelete: 'delete' },
    // Exactly one of zone and channel (services/inventory/hooks/placements.ts).
    zone: { type: 'ref', ref: 'vast_zone', nullable: true, default: null, onRefDelete: 'delete' },
    channel: { type: 'ref', ref: 'vast_channel', nullable: true, default: null, onRefDelete: 'delete' },
    schedule: { type: 'ref', ref: 'vast_schedule', required: true, onRefDelete: 'delete' },
    active: { type: 'boolean', default: true },
    cost: placementCost,
    payout: placementPayout,
    payout_percent: { type: 'number', nullable: true, min: 0, max: 100, default: null },
    // A channel's placements take the channel's tier unless this is false (then `priority` applies).
    use_channel_priority: { type: 'boolean', default: true },
    // The reference types it as an integer while naming the tiers; the tier names are taken, as for display placements.
    priority,
    // At most max_frequency of max_frequency_type events per viewer in max_frequency_period days.
    max_frequency: optionalInt,
    max_frequency_period: optionalInt,
    max_frequency_type: { type: 'string', enum: ['start', 'view', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'], default: 'view' },
    serve_method: { type: 'string', enum: ['weight', 'auction'], default: 'weight' },
    data_key_target_id: { type: 'ref', ref: 'data_key_target', nullable: true, default: null, onRefDelete: 'nullify' },
    platform_target: { type: 'ref', ref: 'platform_target', nullable: true, default: null, onRefDelete: 'nullify' },
    keywords: { type: 'string', nullable: true, maxLength: 4096, default: null },
    keywords_match_method: { type: 'string', enum: ['required', 'preferred', 'filtered'], default: 'preferred' },
    user_db_user_target: unavailable,
    // Serves only when no other placement of the zone is eligible.
    is_fallback: { type: 'boolean', default: false },
    created_by: userId,
    updated_by: userId,
  },
  views: { v2: { object: 'vast_placement', path: '/v2/vast-placements' } },
};

const linearMedia: ResourceKind = {
  kind: 'vast_media_linear',
  service: 'inventory',
  title: 'VAST linear media file',
  fields: {
    ad_item: ofAdItem,
    // A video MIME type: checked in hooks (video/mp4, video/webm, application/x-mpegURL...).
    type: { type: 'string', required: true, minLength: 3, maxLength: 100 },
    delivery: { type: 'string', enum: ['progressive', 'streaming'], default: 'progressive' },
    width: { type: 'integer', required: true, min: 1, max: 10000 },
    height: { type: 'integer', required: true, min: 1, max: 10000 },
    scalable: { type: 'boolean', default: true },
    maintain_aspect_ratio: { type: 'boolean', default: true },
    // The file: an uploaded video creative's, or a URL (exactly one; checked in hooks).
    creative: { type: 'ref', ref: 'video_creative', nullable: true, default: null, onRefDelete: 'nullify' },
    creative_url: url,
    codec: { type: 'string', nullable: true, maxLength: 255, default: null },
    min_bitrate: bitrate,
    max_bitrate: bitrate,
    api_framework: { type: 'string', nullable: true, maxLength: 32, default: null },
    // Tells the two apart in GET /v2/vast-media (set on create).
    is_linear: { type: 'boolean', readOnly: true },
  },
  views: { v2: { object: 'vast_media_linear', path: '/v2/vast-media/linear' } },
};

const nonLinearMedia: ResourceKind = {
  kind: 'vast_media_non_linear',
  service: 'inventory',
  title: 'VAST non-linear media',
  fields: {
    ad_item: ofAdItem,
    // What is shown over the video: an image or script by URL, or an iframe or HTML document.
    creative: {
      type: 'object',
      required: true,
      closed: true,
      properties: {
        type: { type: 'string', required: true, enum: ['image_url', 'javascript_url', 'iframe_url', 'html'] },
        source: { type: 'string', required: true, minLength: 1, maxLength: 65536 },
      },
    },
    width: { type: 'integer', required: true, min: 1, max: 10000 },
    height: { type: 'integer', required: true, min: 1, max: 10000 },
    expanded_width: pixelsOrZero,
    expanded_height: pixelsOrZero,
    scalable: { type: 'boolean', default: true },
    maintain_aspect_ratio: { type: 'boolean', default: true },
    min_suggested_duration: { type: 'integer', nullable: true, min: 0, max: 86400, default: null },
    ad_parameters: adParameters,
    encode_parameters: encodeParameters,
    is_linear: { type: 'boolean', readOnly: true },
  },
  views: { v2: { object: 'vast_media_non_linear', path: '/v2/vast-media/non-linear' } },
};

export const vastCompanion: ResourceKind = {
  kind: 'vast_companion',
  service: 'inventory',
  title: 'VAST companion',
  fields: {
    ad_item: ofAdItem,
    resource_type: { type: 'string', enum: ['static', 'iframe', 'html'], default: 'static' },
    // MIME type of a static resource (image/png...); checked in hooks.
    type: { type: 'string', nullable: true, maxLength: 100, default: null },
    width: { type: 'integer', required: true, min: 1, max: 10000 },
    height: { type: 'integer', required: true, min: 1, max: 10000 },
    asset_width: pixelsOrZero,
    asset_height: pixelsOrZero,
    scalable: { type: 'boolean', default: false },
    expanded_width: pixelsOrZero,
    expanded_height: pixelsOrZero,
    api_framework: { type: 'string', nullable: true, maxLength: 32, default: null },
    // static: the resource's URL (or `creative`); iframe: the page's URL; html: the markup.
    content: { type: 'string', nullable: true, maxLength: 65536, default: null },
    alt_text: { type: 'string', nullable: true, maxLength: 1024, default: null },
    dom_element_id: { type: 'string', nullable: true, maxLength: 255, default: null },
    sequence: { type: 'integer', min: 1, max: 5, default: 1 },
    creative: { type: 'ref', ref: 'image_creative', nullable: true, default: null, onRefDelete: 'nullify' },
    location: url,
    ad_parameters: adParameters,
    encode_parameters: encodeParameters,
  },
  views: { v2: { object: 'vast_companion', path: '/v2/vast-companions' } },
};

/** The player events a third-party URL may be attached to (the reference's list). */
export const VAST_TRACKING_TYPES = [
  'creativeView', 'clicks', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'mute', 'unmute', 'pause', 'rewind', 'resume',
  'fullscreen', 'exitFullScreen', 'companionClicks1', 'companionClicks2', 'companionClicks3', 'companionClicks4', 'companionClicks5',
  'companionViews1', 'companionViews2', 'companionViews3', 'companionViews4', 'companionViews5', 'nlCreativeView', 'expand', 'collapse',
] as const;

export const vastTracking: ResourceKind = {
  kind: 'vast_tracking',
  service: 'inventory',
  title: 'VAST tracking URL',
  fields: {
    ad_item_id: { ...ofAdItem },
    type: { type: 'string', required: true, enum: VAST_TRACKING_TYPES },
    link: { type: 'string', required: true, format: 'url', maxLength: 2048 },
  },
  views: { v2: { object: 'vast_tracking', path: '/v2/vast-tracking' } },
};

export const kinds: ResourceKind[] = [
  vastAdItem, vastZone, vastCampaign, vastCampaignAssignment, vastSchedule, vastChannel, vastChannelZoneAssignment, vastPlacement,
  linearMedia, nonLinearMedia, vastCompanion, vastTracking,
];

/** GET /v2/vast-media lists linear and non-linear media together. */
export const groups: KindGroup[] = [{ version: 'v2', path: '/v2/vast-media', kinds: ['vast_media_linear', 'vast_media_non_linear'] }];
