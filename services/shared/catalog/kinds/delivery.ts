import type { ResourceKind } from '../types';
import { DISPLAY_AD_ITEM_KINDS, optionalInt, perUserCap, placementCost, placementPayout, priority, scheduleProgress, scheduleQuota, scheduleWindow } from './fields';

/**
 * Delivery: schedules (when, how often, quotas) and placements (which ad serves in which zone, with
 * its targets and price).
 */
export const schedule: ResourceKind = {
  kind: 'schedule',
  service: 'inventory',
  title: 'schedule',
  timestamps: { created: 'created_date' },
  fields: {
    ...scheduleWindow,
    day_cap_limit: optionalInt,
    day_cap_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
    delivery_method: { type: 'string', enum: ['default', 'smooth'], default: 'default' },
    ...perUserCap,
    ...scheduleQuota,
    day_parting_id: optionalInt,
    ...scheduleProgress,
  },
  views: { v2: { object: 'schedule', path: '/v2/schedules' } },
};

/** What a placement may put in a zone: any ad item type or a standard campaign (reference placement_advertisement). */
export const PLACEMENT_ADVERTISEMENT_KINDS = [...DISPLAY_AD_ITEM_KINDS, 'standard_campaign'] as const;

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
    cost: placementCost,
    payout: placementPayout,
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
    ...perUserCap,
    priority,
    serve_method: { type: 'string', enum: ['weight', 'auction'], default: 'weight' },
    weight: { type: 'integer', min: 1, max: 1000000, default: 1 },
    share_of_voice: { type: 'integer', nullable: true, min: 0, max: 100, default: null },
    contextual_segments: { type: 'array', default: [], maxLength: 100, items: { type: 'integer', min: 1 } },
    audience_segments: { type: 'array', default: [], maxLength: 100, items: { type: 'integer', min: 1 } },
  },
  views: { v2: { object: 'placement', path: '/v2/placements' } },
};

export const kinds: ResourceKind[] = [schedule, placement];
