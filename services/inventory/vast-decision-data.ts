import type { DecisionEntity } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Json } from '../shared/catalog';
import { int, refId, refKind, str } from '../targeting/rule';
import { pricing, rates } from './decision-data';

/**
 * The decision data of video inventory. VAST zones, campaigns, assignments, placements, schedules and
 * channels take the same typed shapes as display's, so the serving path decides video with the same
 * engine (tiers, goals, pacing, targeting, frequency); the ad items and their parts get shapes of their own.
 */

export const VAST_DECISION_KINDS = [
  'vast_zone', 'vast_campaign', 'vast_ad_item', 'vast_campaign_assignment', 'vast_placement', 'vast_schedule', 'vast_channel',
  'vast_channel_zone_assignment', 'vast_media_linear', 'vast_media_non_linear', 'vast_companion', 'vast_tracking', 'video_creative',
  'vast4_ad', 'vast4_creative', 'vast4_linear', 'vast4_non_linear', 'vast4_media_file', 'vast4_mezzanine', 'vast4_closed_caption_file',
  'vast4_interactive_creative_file', 'vast4_icon', 'vast4_icon_click_fallback_image', 'vast4_resource', 'vast4_universal_ad_id', 'vast4_companion',
  'vast4_placement', 'vast4_campaign_assignment',
] as const;

type Body = Omit<DecisionEntity, 'kind' | 'id' | 'account'>;
const obj = (v: Json | undefined): Record<string, Json> => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

const strings = (v: Json | undefined): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const ids = (v: Json | undefined): number[] => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : []);
/** A 4.2 offset: its time, or its percentage written `25%`. */
const offsetOf = (amount: Json | undefined, type: Json | undefined) => (typeof amount === 'string' && amount ? (type === 'percentage' ? `${amount}%` : amount) : '');
const tracking = (v: Json | undefined) =>
  (Array.isArray(v) ? v : []).map((t) => obj(t)).map((t) => ({ uri: str(t.uri), event: str(t.event_type), offset: offsetOf(t.offset_amount, t.offset_type) }));

/** A placement of either VAST model: the same delivery fields under the same names. */
function vastPlacement(a: Record<string, Json>): Body {
  const days = int(a.max_frequency_period);
  const limit = int(a.max_frequency);
  return {
    placement: {
      zoneKind: a.zone ? 'vast_zone' : '', zone: int(a.zone), advertisementKind: refKind(a.advertisement), advertisement: refId(a.advertisement),
      schedule: int(a.schedule), weight: 0, active: a.active !== false, channel: int(a.channel), ...pricing(a.cost),
      geoTarget: 0, platformTarget: int(a.platform_target), listTarget: 0, dataKeyTarget: int(a.data_key_target_id), postalCodeTarget: 0,
      keywords: str(a.keywords), keywordsMatchMethod: str(a.keywords_match_method) || 'preferred',
      frequencyLimit: limit && days ? limit : 0, frequencyWindowSeconds: limit && days ? days * 86_400 : 0,
      priority: str(a.priority) || 'standard', serveMethod: str(a.serve_method) || 'weight', shareOfVoice: -1, ...rates(a.cost),
      dayCapLimit: 0, dayCapType: '', fallback: a.is_fallback === true, ownPriority: a.use_channel_priority === false,
      frequencyEvent: str(a.max_frequency_type) || 'view',
    },
  };
}

/** A file of a 4.2 linear in one shape, whatever its role. */
function vast4File(role: string, a: Record<string, Json>): Body {
  return {
    vast4File: {
      linear: int(a.linear_id), role, url: str(a.file_uri), videoCreative: int(a.video_creative_id), delivery: str(a.delivery) || 'progressive',
      type: str(a.mime_type), width: int(a.width), height: int(a.height), codec: str(a.codec), bitrate: int(a.bitrate), minBitrate: int(a.min_bitrate),
      maxBitrate: int(a.max_bitrate), scalable: a.scalable === true, maintainAspectRatio: a.maintain_aspect_ratio === true, mediaType: str(a.media_type),
      bytes: int(a.bytes), language: str(a.language), apiFramework: str(a.api_framework), variableDuration: a.variable_duration === 'true',
    },
  };
}

function vast4Overlay(companion: boolean, a: Record<string, Json>): Body {
  return {
    vast4Overlay: {
      creative: int(a.creative_id), companion, destinationUrl: str(a.destination_url), width: int(a.width), height: int(a.height),
      expandedWidth: int(a.expanded_width), expandedHeight: int(a.expanded_height), apiFramework: str(a.api_framework), adParameters: str(a.ad_parameters),
      minSuggestedDuration: str(a.min_suggested_duration), resources: ids(a.resources), clickTracking: strings(a.click_tracking_links),
      tracking: tracking(a.tracking_events), viewTracking: strings(a.view_tracking_links), adSlotId: str(a.ad_slot_id), renderMode: str(a.render_mode),
      altText: str(a.alt_text), pixelRatio: typeof a.pixel_ratio === 'number' ? a.pixel_ratio : 1, scalable: a.scalable === true,
      maintainAspectRatio: a.maintain_aspect_ratio === true,
    },
  };
}

/** The typed form of a VAST 4.2 model resource, or undefined for other kinds. */
function toVast4Entity(kind: string, a: Record<string, Json>): Body | undefined {
  switch (kind) {
    case 'vast4_ad':
      return {
        vast4Ad: {
          name: str(a.name), type: str(a.type) || 'inline', adUrl: str(a.ad_url), followAdditionalWrappers: a.follow_additional_wrappers !== false,
          allowMultipleAds: a.allow_multiple_ads === true, fallbackOnNoAd: a.fallback_on_no_ad === true,
        },
      };
    case 'vast4_creative':
      return {
        vast4Creative: {
          ad: int(Number(a.ad_id)), sequence: typeof a.sequence === 'string' && a.sequence ? Number(a.sequence) : -1, apiFramework: str(a.api_framework),
          companionRequired: str(a.companion_required).toLowerCase(),
        },
      };
    case 'vast4_linear':
      return {
        vast4Linear: {
          creative: int(a.creative_id), skipOffset: offsetOf(a.skip_offset, a.skip_offset_type), duration: str(a.duration), adParameters: str(a.ad_parameters),
          adParametersXmlEncoded: a.parameter_encoding === '1', destinationUrl: str(a.destination_url), icons: ids(a.icons),
          clickTracking: strings(a.click_tracking_links), customClicks: (Array.isArray(a.custom_click_links) ? a.custom_click_links : []).map((c) => str(obj(c).uri)).filter(Boolean),
          tracking: tracking(a.tracking_events),
        },
      };
    case 'vast4_media_file':
      return vast4File('media', a);
    case 'vast4_mezzanine':
      return vast4File('mezzanine', a);
    case 'vast4_closed_caption_file':
      return vast4File('captions', a);
    case 'vast4_interactive_creative_file':
      return vast4File('interactive', a);
    case 'vast4_universal_ad_id':
      return { vast4UniversalAdId: { creative: int(a.creative_id), value: str(a.universal_ad_id), registry: str(a.universal_id_registry) } };
    case 'vast4_non_linear':
      return vast4Overlay(false, a);
    case 'vast4_companion':
      return vast4Overlay(true, a);
    case 'vast4_resource':
      return {
        vast4Resource: {
          type: str(a.type) || 'static', staticUri: str(a.static_uri), staticFile: int(a.static_file_id), staticType: str(a.static_type),
          iframeUri: str(a.iframe_uri), html: str(a.html_content),
        },
      };
    case 'vast4_icon':
      return {
        vast4Icon: {
          program: str(a.program), width: int(a.width), height: int(a.height), xPosition: int(a.x_position), yPosition: int(a.y_position),
          duration: str(a.duration), offset: str(a.offset), apiFramework: str(a.api_framework), pixelRatio: typeof a.pixel_ratio === 'number' ? a.pixel_ratio : 1,
          altText: str(a.alt_text), hoverText: str(a.hover_text), resources: ids(a.resources), destinationUrl: str(a.destination_url),
          clickTracking: strings(a.click_tracking_links), viewTracking: strings(a.view_tracking_links),
        },
      };
    case 'vast4_icon_click_fallback_image':
      return { vast4IconFallback: { icon: int(a.icon_id), resource: int(a.resource_id), width: int(a.width), height: int(a.height), altText: str(a.alt_text) } };
    case 'vast4_placement':
      return vastPlacement(a);
    case 'vast4_campaign_assignment':
      return { assignment: { campaign: int(a.campaign), adItemKind: 'vast4_ad', adItem: int(a.ad_item), weight: 1, active: a.active !== false } };
    default:
      return undefined;
  }
}

/** The typed form of a video resource, or undefined for other kinds. */
export function toVastEntity(kind: string, a: Record<string, Json>): Body | undefined {
  if (kind.startsWith('vast4_')) return toVast4Entity(kind, a);
  switch (kind) {
    case 'vast_zone':
      return {
        zone: {
          width: 0, height: 0, dimensions: 'dynamic', publisher: refId(a.publisher), flexibleType: 0, refreshFrequency: 0, uniqueDelivery: false,
          vastVersion: str(a.vast_version) || '3.0', defaultAdItem: int(a.default_vast_ad_item), defaultCampaign: int(a.default_vast_campaign),
          servePriorityOrder: str(a.serve_priority_order) || 'weight',
          allowDemand: false, bidFloor: '', minPayout: '', pmpDeals: [], rtbPlacementId: '', iabCategories: [], auctionTieBreak: '', privateAuction: false, bidTimeoutMs: 0, player: undefined,
        },
      };
    case 'vast_campaign':
      return { campaign: { advertiser: refId(a.advertiser), width: 0, height: 0, flexibleType: 0 } };
    case 'vast_ad_item': {
      const wrapper = a.use_wrapper === true ? str(a.wrapper_url) : '';
      return {
        vastAd: {
          name: str(a.name), description: str(a.description), location: str(a.location), adParameters: str(a.ad_parameters),
          encodeParameters: str(a.encode_parameters) || 'none', companionDisplay: str(a.companion_display) || 'none', skippable: a.skippable === true,
          skipDuration: str(a.skip_duration), duration: str(a.duration), wrapperUrl: wrapper,
        },
      };
    }
    case 'vast_campaign_assignment':
      return { assignment: { campaign: int(a.campaign), adItemKind: 'vast_ad_item', adItem: int(a.ad_item), weight: int(a.weight) || 1, active: a.active !== false } };
    case 'vast_placement':
      return vastPlacement(a);
    case 'vast_schedule': {
      const capType = str(a.day_cap_type);
      const days = int(a.per_user_view_period);
      const limit = int(a.per_user_view_limit);
      return {
        schedule: {
          startDate: str(a.start_date), endDate: str(a.end_date), dayParting: int(a.day_parting_id),
          frequencyLimit: limit && days ? limit : 0, frequencyWindowSeconds: limit && days ? days * (a.per_user_view_period_unit === 'hours' ? 3600 : 86_400) : 0,
          quotaLifetime: int(a.quota_lifetime), quotaType: str(a.quota_type),
          dayCapLimit: capType === 'clicks' ? int(a.day_cap_clicks_limit) : capType === 'views' ? int(a.day_cap_views_limit) : 0, dayCapType: capType,
          deliveryMethod: str(a.delivery_method) || 'default', underDeliveryBehaviour: str(a.under_delivery_behaviour) || 'endOnDate',
          timezone: str(a.start_at_timezone) || str(a.end_at_timezone), geoTarget: int(a.geo_target), weight: int(a.weight) || 1,
        },
      };
    }
    case 'vast_channel':
      return { channel: { priority: str(a.priority) || 'standard', useShareOfVoice: false } };
    case 'vast_channel_zone_assignment':
      return { channelZone: { channel: int(a.vast_channel), zoneKind: 'vast_zone', zone: refId(a.vast_zone) } };
    case 'vast_media_linear':
    case 'vast_media_non_linear': {
      const linear = kind === 'vast_media_linear';
      const creative = obj(a.creative);
      return {
        vastMedia: {
          adItem: int(a.ad_item), linear, type: str(a.type), delivery: str(a.delivery) || 'progressive', width: int(a.width), height: int(a.height),
          scalable: a.scalable !== false, maintainAspectRatio: a.maintain_aspect_ratio !== false, url: str(a.creative_url), creative: linear ? int(a.creative) : 0,
          codec: str(a.codec), minBitrate: int(a.min_bitrate), maxBitrate: int(a.max_bitrate), apiFramework: str(a.api_framework),
          creativeType: linear ? '' : str(creative.type), creativeSource: linear ? '' : str(creative.source),
          expandedWidth: int(a.expanded_width), expandedHeight: int(a.expanded_height), minSuggestedDuration: int(a.min_suggested_duration),
          adParameters: str(a.ad_parameters),
        },
      };
    }
    case 'vast_companion':
      return {
        vastCompanion: {
          adItem: int(a.ad_item), resourceType: str(a.resource_type) || 'static', type: str(a.type), width: int(a.width), height: int(a.height),
          content: str(a.content), creative: int(a.creative), location: str(a.location), altText: str(a.alt_text), sequence: int(a.sequence) || 1,
          adParameters: str(a.ad_parameters), assetWidth: int(a.asset_width), assetHeight: int(a.asset_height), apiFramework: str(a.api_framework),
        },
      };
    case 'vast_tracking':
      return { vastTracking: { adItem: int(a.ad_item_id), event: str(a.type), url: str(a.link) } };
    case 'video_creative':
      return { creative: { fileUrl: str(a.file_url) } };
    default:
      return undefined;
  }
}
