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
] as const;

type Body = Omit<DecisionEntity, 'kind' | 'id' | 'account'>;
const obj = (v: Json | undefined): Record<string, Json> => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});

/** The typed form of a video resource, or undefined for other kinds. */
export function toVastEntity(kind: string, a: Record<string, Json>): Body | undefined {
  switch (kind) {
    case 'vast_zone':
      return {
        zone: {
          width: 0, height: 0, dimensions: 'dynamic', publisher: refId(a.publisher), flexibleType: 0, refreshFrequency: 0, uniqueDelivery: false,
          vastVersion: str(a.vast_version) || '3.0', defaultAdItem: int(a.default_vast_ad_item), defaultCampaign: int(a.default_vast_campaign),
          servePriorityOrder: str(a.serve_priority_order) || 'weight',
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
    case 'vast_placement': {
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
