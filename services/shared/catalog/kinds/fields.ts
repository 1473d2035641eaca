import type { FieldSpec } from '../types';

/** Field specs that many inventory kinds share. */

/** The display ad item kinds, the one list every module names them by (v1 banners are the first two). */
export const DISPLAY_AD_ITEM_KINDS = ['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item'] as const;

export const name: FieldSpec = { type: 'string', required: true, minLength: 1, maxLength: 255 };
export const optionalName: FieldSpec = { type: 'string', nullable: true, maxLength: 255, default: null };
export const pixels: FieldSpec = { type: 'integer', required: true, min: 1, max: 10000 };
export const url: FieldSpec = { type: 'string', format: 'url', nullable: true, maxLength: 2048, default: null };
export const html: FieldSpec = { type: 'string', nullable: true, maxLength: 65536, default: null };
export const metadata: FieldSpec = { type: 'object', nullable: true, maxBytes: 8192, default: null };
export const optionalInt: FieldSpec = { type: 'integer', nullable: true, min: 0, default: null };
export const money: FieldSpec = { type: 'number', nullable: true, min: 0 };

/** The priority tiers of placements and channels, highest first. */
export const PRIORITY_TIERS = ['sponsorship', 'standard', 'network', 'bulk', 'house'] as const;
export const priority: FieldSpec = { type: 'string', enum: PRIORITY_TIERS, default: 'standard' };

/** A placement's price (what the advertiser pays) and payout (what the publisher gets), display and VAST alike. */
export const placementCost: FieldSpec = { type: 'object', nullable: true, default: null, closed: true, properties: { fixed_cost: money, cpm: money, cpc: money, cpa: money } };
export const placementPayout: FieldSpec = {
  type: 'object',
  nullable: true,
  default: null,
  closed: true,
  properties: { type: { type: 'string', required: true, enum: ['percent', 'rate'] }, fixed: money, cpm: money, cpc: money, cpa: money },
};

/**
 * A schedule's window: `YYYY-MM-DD HH:MM:SS` UTC (start defaults to midnight today, end null runs
 * forever), and the same instants as ISO 8601 in the fields' time zones (IANA names; UTC when unset),
 * kept in step by services/inventory/hooks/placements.ts. Day caps count the days of
 * start_at_timezone (else end_at_timezone, else UTC).
 */
export const scheduleWindow: Record<string, FieldSpec> = {
  start_date: { type: 'string', nullable: true, maxLength: 19 },
  end_date: { type: 'string', nullable: true, maxLength: 19, default: null },
  start_at: { type: 'string', nullable: true, maxLength: 40 },
  start_at_timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
  end_at: { type: 'string', nullable: true, maxLength: 40 },
  end_at_timezone: { type: 'string', nullable: true, maxLength: 64, default: null },
};

/** A schedule's lifetime goal and what happens at its end date while the goal is unmet. */
export const scheduleQuota: Record<string, FieldSpec> = {
  quota_lifetime: optionalInt,
  quota_type: { type: 'string', nullable: true, enum: ['views', 'clicks'], default: null },
  under_delivery_behaviour: { type: 'string', nullable: true, enum: ['endOnQuota', 'endOnDate'] },
};

/** A frequency cap per viewer. The unit is an extension: the reference counts the period in days. */
export const perUserCap: Record<string, FieldSpec> = {
  per_user_view_limit: optionalInt,
  per_user_view_period: optionalInt,
  per_user_view_period_unit: { type: 'string', enum: ['days', 'hours'], default: 'days' },
};

/** Set by the service from the window and the delivered count (reporting's). */
export const scheduleProgress: Record<string, FieldSpec> = {
  status: { type: 'string', readOnly: true, enum: ['active', 'queued', 'expired', 'quota_reached'] },
  // Smooth delivery with a quota: views (or clicks) expected by now on an even pace, and delivered.
  pacing: {
    type: 'object',
    readOnly: true,
    nullable: true,
    properties: { expected: { type: 'integer' }, delivered: { type: 'integer' }, behind: { type: 'boolean' } },
  },
};
