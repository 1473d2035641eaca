import type { FieldSpec, ResourceKind } from '../types';
import { name, placementCost, placementPayout, priority, url } from './fields';

/**
 * The VAST 4.2 inventory model under /v2/vast/ (issue 23): an ad (inline or wrapper) holds creatives;
 * a creative holds its linear, non-linear and companion parts and its Universal Ad IDs; a linear holds
 * its media files, mezzanines, closed caption and interactive creative files. Icons and resources
 * (the static, iframe or HTML sources of non-linears, companions and icons) stand alone and are named
 * by id lists. Placements and campaign assignments put a 4.2 ad into the VAST 2/3 delivery model.
 *
 * Field names, types, enums and required fields follow the reference OpenAPI (vast4_* schemas); where
 * a type there contradicts the field's own meaning, the comment at the field says what we chose. A
 * child names its parent with a `parent` reference, so deleting an ad deletes everything under it.
 * Cross-field rules (one file source, offsets matching their type, id lists naming existing
 * resources, zone or channel) are in services/inventory/hooks/vast-4.ts.
 */

/** `HH:MM:SS` with optional milliseconds, the VAST time format. */
const TIME = '\\d{2}:[0-5]\\d:[0-5]\\d(\\.\\d{3})?';
const duration: FieldSpec = { type: 'string', nullable: true, maxLength: 12, pattern: `^${TIME}$`, patternHint: 'a time HH:MM:SS or HH:MM:SS.mmm', default: null };
/** A time, or a whole percentage given as a string ("10"); which one is the `*_type` field's business (hooks). */
const offset: FieldSpec = { type: 'string', nullable: true, maxLength: 12, pattern: `^(${TIME}|100|[1-9]?\\d)$`, patternHint: 'a time HH:MM:SS(.mmm) or a whole percentage from 0 to 100', default: null };
const offsetType: FieldSpec = { type: 'string', nullable: true, enum: ['time', 'percentage'], default: null };
const text = (maxLength: number): FieldSpec => ({ type: 'string', nullable: true, maxLength, default: null });
const apiFramework = text(255);
const adParameters = text(65536);
/** "0": the ad parameters are given as they are; "1": they are XML-encoded. */
const parameterEncoding: FieldSpec = { type: 'string', enum: ['0', '1'], default: '0' };
const px: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 10000, default: null };
const position: FieldSpec = { type: 'integer', nullable: true, min: 0, max: 10000, default: null };
const flag: FieldSpec = { type: 'boolean', default: false };
const pixelRatio: FieldSpec = { type: 'number', min: 0.1, max: 10, decimals: 2, default: 1 };
const links: FieldSpec = { type: 'array', default: [], maxLength: 20, items: { type: 'string', format: 'url', maxLength: 2048 } };
const bitrate: FieldSpec = { type: 'integer', nullable: true, min: 1, max: 1_000_000_000, default: null };
const bytes: FieldSpec = { type: 'integer', nullable: true, min: 0, max: 1_000_000_000_000, default: null };
const videoMime: FieldSpec = { type: 'string', nullable: true, enum: ['video/mp4', 'video/ogv', 'video/webm', 'video/mkv', 'video/wmv', 'video/avi', 'video/mpg'], default: null };
const delivery: FieldSpec = { type: 'string', enum: ['progressive', 'streaming'], default: 'progressive' };
const mediaType: FieldSpec = { type: 'string', enum: ['2D', '3D', '360'], default: '2D' };
/**
 * A file's address when it is not in the media library. The reference types it as an integer for
 * media files and mezzanines (a string URL for caption and interactive files); it is a URL everywhere here.
 */
const fileUri: FieldSpec = url;
/** A video of the media library (kinds/creatives.ts); deleting it leaves the entry without one. */
const videoCreative: FieldSpec = { type: 'ref', ref: 'video_creative', nullable: true, default: null, onRefDelete: 'nullify' };
/** Ids of vast4_resource sources; each must exist when given (hooks). */
const resources: FieldSpec = { type: 'array', required: true, minLength: 1, maxLength: 20, items: { type: 'integer', min: 1 } };

const parentRef = (kind: string): FieldSpec => ({ type: 'ref', ref: kind, required: true, parent: true });

/** VAST 4.2 tracking events: those of linear and non-linear ads, of companions, of interactive ads. */
export const VAST4_TRACKING_EVENTS = [
  'mute', 'unmute', 'pause', 'resume', 'rewind', 'skip', 'playerExpand', 'playerCollapse', 'notUsed', 'otherAdInteraction',
  'loaded', 'start', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete', 'progress', 'acceptInvitationLinear', 'closeLinear',
  'nlCreativeView', 'acceptInvitation', 'adExpand', 'adCollapse', 'minimize', 'close', 'overlayViewDuration',
  'creativeView',
  'interactiveStart',
] as const;

const trackingEvents: FieldSpec = {
  type: 'array',
  default: [],
  maxLength: 50,
  items: {
    type: 'object',
    closed: true,
    properties: {
      uri: { type: 'string', format: 'url', required: true, maxLength: 2048 },
      event_type: { type: 'string', required: true, enum: VAST4_TRACKING_EVENTS },
      offset_type: offsetType,
      offset_amount: offset,
    },
  },
};

export const vast4Ad: ResourceKind = {
  kind: 'vast4_ad',
  service: 'inventory',
  title: 'VAST 4.2 ad',
  fields: {
    name,
    type: { type: 'string', required: true, enum: ['inline', 'wrapper'] },
    // The wrapped VAST document's address; a wrapper needs one (hooks).
    ad_url: url,
    follow_additional_wrappers: { type: 'boolean', default: true },
    allow_multiple_ads: flag,
    fallback_on_no_ad: flag,
  },
  views: { v2: { object: 'vast4_ad_item', path: '/v2/vast/ads' } },
};

export const vast4Creative: ResourceKind = {
  kind: 'vast4_creative',
  service: 'inventory',
  title: 'VAST 4.2 creative',
  fields: {
    ad_id: parentRef('vast4_ad'),
    // The creative's order in its ad, from "0"; a string in the reference.
    sequence: { type: 'string', nullable: true, maxLength: 4, pattern: '^(0|[1-9]\\d{0,3})$', patternHint: 'a whole number from 0, as a string', default: null },
    api_framework: apiFramework,
    companion_required: { type: 'string', nullable: true, enum: ['Any', 'All', 'None'], default: null },
  },
  // The reference gives ad_id as a string; numeric strings are accepted too.
  views: { v2: { object: 'vast4_creative', path: '/v2/vast/creatives', asString: ['ad_id'] } },
};

export const vast4Linear: ResourceKind = {
  kind: 'vast4_linear',
  service: 'inventory',
  title: 'VAST 4.2 linear',
  fields: {
    creative_id: parentRef('vast4_creative'),
    skip_offset: offset,
    skip_offset_type: offsetType,
    duration,
    ad_parameters: adParameters,
    parameter_encoding: parameterEncoding,
    destination_url: url,
    // Ids of vast4_icon resources shown with the ad; each must exist when given (hooks).
    icons: { type: 'array', default: [], maxLength: 20, items: { type: 'integer', min: 1 } },
    click_tracking_links: links,
    custom_click_links: {
      type: 'array',
      default: [],
      maxLength: 20,
      items: { type: 'object', closed: true, properties: { custom_id: text(255), uri: { type: 'string', format: 'url', required: true, maxLength: 2048 } } },
    },
    tracking_events: trackingEvents,
  },
  views: { v2: { object: 'vast4_linear', path: '/v2/vast/linears' } },
};

export const vast4NonLinear: ResourceKind = {
  kind: 'vast4_non_linear',
  service: 'inventory',
  title: 'VAST 4.2 non-linear',
  fields: {
    creative_id: parentRef('vast4_creative'),
    destination_url: url,
    width: px,
    height: px,
    expanded_width: px,
    expanded_height: px,
    scalable: flag,
    maintain_aspect_ratio: flag,
    // The reference types it as a boolean, but it is a time (HH:MM:SS.mmm); a time here.
    min_suggested_duration: duration,
    api_framework: apiFramework,
    ad_parameters: adParameters,
    parameter_encoding: parameterEncoding,
    click_tracking_links: links,
    tracking_events: trackingEvents,
    resources,
  },
  views: { v2: { object: 'vast4_non_linear', path: '/v2/vast/non-linears' } },
};

export const vast4MediaFile: ResourceKind = {
  kind: 'vast4_media_file',
  service: 'inventory',
  title: 'VAST 4.2 media file',
  fields: {
    linear_id: parentRef('vast4_linear'),
    // At most one of video_creative_id and file_uri (hooks).
    video_creative_id: videoCreative,
    file_uri: fileUri,
    delivery,
    mime_type: videoMime,
    width: px,
    height: px,
    codec: text(255),
    bitrate,
    min_bitrate: bitrate,
    max_bitrate: bitrate,
    scalable: flag,
    bytes,
    media_type: mediaType,
    maintain_aspect_ratio: flag,
  },
  views: { v2: { object: 'vast4_media_file', path: '/v2/vast/media-files' } },
};

export const vast4Mezzanine: ResourceKind = {
  kind: 'vast4_mezzanine',
  service: 'inventory',
  title: 'VAST 4.2 mezzanine',
  fields: {
    linear_id: parentRef('vast4_linear'),
    video_creative_id: videoCreative,
    file_uri: fileUri,
    delivery,
    mime_type: videoMime,
    media_type: mediaType,
    width: px,
    height: px,
    codec: text(255),
    bytes,
  },
  views: { v2: { object: 'vast4_mezzanine', path: '/v2/vast/mezzanines' } },
};

export const vast4ClosedCaptionFile: ResourceKind = {
  kind: 'vast4_closed_caption_file',
  service: 'inventory',
  title: 'VAST 4.2 closed caption file',
  fields: {
    linear_id: parentRef('vast4_linear'),
    file_uri: fileUri,
    // A caption file of the media library, which has no kind for caption files yet: a plain id.
    creative_id: { type: 'integer', nullable: true, min: 1, default: null },
    mime_type: { type: 'string', nullable: true, enum: ['text/plain', 'text/vtt', 'application/xml', 'application/octet-stream', 'application/x-subrip'], default: null },
    // An ISO 639-1 code with an optional locale: en, en-US.
    language: { type: 'string', nullable: true, maxLength: 35, pattern: '^[A-Za-z]{2}(-[A-Za-z0-9]{2,8})*$', patternHint: 'a language code such as en or en-US', default: null },
  },
  views: { v2: { object: 'vast4_closed_caption_file', path: '/v2/vast/closed-caption-files' } },
};

export const vast4Icon: ResourceKind = {
  kind: 'vast4_icon',
  service: 'inventory',
  title: 'VAST 4.2 icon',
  fields: {
    destination_url: url,
    program: text(255),
    width: px,
    height: px,
    y_position: position,
    x_position: position,
    duration,
    offset: duration,
    api_framework: apiFramework,
    pixel_ratio: pixelRatio,
    alt_text: text(1024),
    hover_text: text(1024),
    resources,
    click_tracking_links: links,
    view_tracking_links: links,
  },
  views: { v2: { object: 'vast4_icon', path: '/v2/vast/icons' } },
};

export const vast4IconClickFallbackImage: ResourceKind = {
  kind: 'vast4_icon_click_fallback_image',
  service: 'inventory',
  title: 'VAST 4.2 icon click fallback image',
  fields: {
    icon_id: parentRef('vast4_icon'),
    // Its one source: deleting the resource deletes the image too.
    resource_id: parentRef('vast4_resource'),
    width: px,
    height: px,
    alt_text: text(1024),
  },
  views: { v2: { object: 'vast4_icon_click_fallback_image', path: '/v2/vast/icon-click-fallback-images' } },
};

export const vast4InteractiveCreativeFile: ResourceKind = {
  kind: 'vast4_interactive_creative_file',
  service: 'inventory',
  title: 'VAST 4.2 interactive creative file',
  fields: {
    linear_id: parentRef('vast4_linear'),
    file_uri: fileUri,
    // An HTML file of the media library, which has no kind for it yet: a plain id.
    creative_id: { type: 'integer', nullable: true, min: 1, default: null },
    mime_type: { type: 'string', enum: ['text/html'], default: 'text/html' },
    api_framework: apiFramework,
    // A boolean given as a string in the reference.
    variable_duration: { type: 'string', enum: ['true', 'false'], default: 'false' },
  },
  views: { v2: { object: 'vast4_interactive_creative_file', path: '/v2/vast/interactive-creative-files' } },
};

export const vast4Resource: ResourceKind = {
  kind: 'vast4_resource',
  service: 'inventory',
  title: 'VAST 4.2 resource',
  fields: {
    // The reference requires nothing on create; a resource is a static one unless told otherwise.
    type: { type: 'string', enum: ['static', 'iframe', 'html'], default: 'static' },
    // Static resources: an image by address or from the media library, at most one of the two (hooks).
    static_uri: url,
    static_file_id: { type: 'ref', ref: 'image_creative', nullable: true, default: null, onRefDelete: 'nullify' },
    static_type: { type: 'string', nullable: true, enum: ['image/gif', 'image/jpg', 'image/jpeg', 'image/png', 'image/svg', 'image/webp'], default: null },
    iframe_uri: url,
    html_content: text(65536),
  },
  views: { v2: { object: 'vast4_resource', path: '/v2/vast/resources' } },
};

export const vast4UniversalAdId: ResourceKind = {
  kind: 'vast4_universal_ad_id',
  service: 'inventory',
  title: 'VAST 4.2 Universal Ad ID',
  fields: {
    creative_id: parentRef('vast4_creative'),
    universal_ad_id: { type: 'string', required: true, minLength: 1, maxLength: 255 },
    // The registry's domain, or "unknown".
    universal_id_registry: { type: 'string', required: true, minLength: 1, maxLength: 255 },
  },
  views: { v2: { object: 'vast4_universal_ad_id', path: '/v2/vast/universal-ad-ids' } },
};

export const vast4Companion: ResourceKind = {
  kind: 'vast4_companion',
  service: 'inventory',
  title: 'VAST 4.2 companion',
  fields: {
    creative_id: parentRef('vast4_creative'),
    destination_url: url,
    width: px,
    height: px,
    expanded_width: px,
    expanded_height: px,
    api_framework: apiFramework,
    ad_slot_id: text(255),
    pixel_ratio: pixelRatio,
    // As the reference spells them (VAST 4.2 itself writes "end-card").
    render_mode: { type: 'string', enum: ['end card', 'concurrent', 'default'], default: 'default' },
    alt_text: text(1024),
    resources,
    click_tracking_links: links,
    view_tracking_links: links,
  },
  views: { v2: { object: 'vast4_companion', path: '/v2/vast/companions' } },
};

/** Zones, channels, schedules and campaigns of the VAST 2/3 model (video.ts), which 4.2 ads are delivered through. */
const vastRef = (ref: string, required: boolean): FieldSpec =>
  required ? { type: 'ref', ref, required, onRefDelete: 'delete' } : { type: 'ref', ref, nullable: true, default: null, onRefDelete: 'delete' };

export const vast4Placement: ResourceKind = {
  kind: 'vast4_placement',
  service: 'inventory',
  title: 'VAST 4.2 placement',
  fields: {
    // The reference's advertisement object: here always a 4.2 ad, which takes its placements along.
    advertisement: { type: 'typed_ref', refKinds: ['vast4_ad'], required: true, parent: true },
    // A VAST zone or a VAST channel, exactly one of the two (hooks).
    zone: vastRef('vast_zone', false),
    channel: vastRef('vast_channel', false),
    schedule: vastRef('vast_schedule', true),
    active: { type: 'boolean', default: true },
    cost: placementCost,
    payout: placementPayout,
    payout_percent: { type: 'number', nullable: true, min: 0, max: 100, decimals: 2, default: null },
    use_channel_priority: flag,
    // The reference lists these names (and "standard" as the default) but types the field as an integer.
    priority,
    // A frequency cap: at most max_frequency events of max_frequency_type per max_frequency_period days (all three or none: hooks).
    max_frequency: { type: 'integer', nullable: true, min: 1, max: 1_000_000, default: null },
    max_frequency_period: { type: 'integer', nullable: true, min: 1, max: 365, default: null },
    max_frequency_type: { type: 'string', nullable: true, enum: ['start', 'view', 'firstQuartile', 'midpoint', 'thirdQuartile', 'complete'], default: null },
    serve_method: { type: 'string', enum: ['weight', 'auction'], default: 'weight', createOnly: true },
    data_key_target_id: { type: 'ref', ref: 'data_key_target', nullable: true, default: null, onRefDelete: 'nullify' },
  },
  views: { v2: { object: 'vast4_placement', path: '/v2/vast/placements' } },
};

export const vast4CampaignAssignment: ResourceKind = {
  kind: 'vast4_campaign_assignment',
  service: 'inventory',
  title: 'VAST 4.2 campaign assignment',
  fields: {
    active: { type: 'boolean', default: true },
    ad_item: parentRef('vast4_ad'),
    campaign: vastRef('vast_campaign', true),
  },
  views: { v2: { object: 'vast4_campaign_assignment', path: '/v2/vast/campaign-assignments' } },
};

export const kinds: ResourceKind[] = [
  vast4Ad,
  vast4Creative,
  vast4Linear,
  vast4NonLinear,
  vast4MediaFile,
  vast4Mezzanine,
  vast4ClosedCaptionFile,
  vast4Icon,
  vast4IconClickFallbackImage,
  vast4InteractiveCreativeFile,
  vast4Resource,
  vast4UniversalAdId,
  vast4Companion,
  vast4Placement,
  vast4CampaignAssignment,
];
