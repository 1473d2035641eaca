import type { ResourceKind } from '../types';
import { DISPLAY_AD_ITEM_KINDS, optionalInt, money } from './fields';

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
    // `YYYY-MM-DD HH:MM:SS`, checked in services/inventory/hooks/; start defaults to midnight today, end null runs forever.
    start_date: { type: 'string', nullable: true, maxLength: 19 },
    end_date: { type: 'string', nullable: true, maxLength: 19, default: null },
    // ISO 8601 with an offset; kept in step with start_date/end_date (services/inventory/hooks/), and
    // answered in the field's time zone (an IANA name; UTC when unset). Day caps count the days of
    // start_at_timezone (else end_at_timezone, else UTC).
    start_at: { type: 'string', nullable: true, maxLength: 40 },
    start_at_timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
    end_at: { type: 'string', nullable: true, maxLength: 40 },
    end_at_timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
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
    // From the window and the delivered count (reporting's): active, queued, expired or quota_reached.
    status: { type: 'string', readOnly: true, enum: ['active', 'queued', 'expired', 'quota_reached'] },
    // Smooth delivery with a quota: views (or clicks) expected by now on an even pace, and delivered.
    pacing: {
      type: 'object',
      readOnly: true,
      nullable: true,
      properties: { expected: { type: 'integer' }, delivered: { type: 'integer' }, behind: { type: 'boolean' } },
    },
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

export const kinds: ResourceKind[] = [schedule, placement];
