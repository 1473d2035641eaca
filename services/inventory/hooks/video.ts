import type { Json, ParameterError } from '../../shared/catalog';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { given, invalid, merged, nextIds, throwIf } from './common';
import { placement, prepareSchedule, scheduleStatus } from './placements';
import { prepareRtbOptions } from './programmatic';

/** Rules of the video (VAST) kinds that their field descriptions cannot state. */

const HMS = /^(\d{2}):([0-5]\d):([0-5]\d)$/;
const PERCENT = /^(100|[1-9]?\d)%?$/;
/** Video and streaming manifest types a player can be handed as a MediaFile. */
const VIDEO_MIME = /^(video\/[a-z0-9.+-]+|application\/(x-mpegurl|vnd\.apple\.mpegurl|dash\+xml|javascript|x-javascript|x-shockwave-flash))$/i;
const IMAGE_MIME = /^image\/[a-z0-9.+-]+$/i;

/** Fields the reference has for features this platform lacks: a value would be stored and do nothing, so only null is taken. */
function refuseUnavailable(values: Attributes, fields: Record<string, string>): void {
  const errors: ParameterError[] = [];
  for (const [field, why] of Object.entries(fields)) {
    if (given(values[field])) errors.push({ field, type: 'invalid_value', message: `'${field}' must be null: ${why}.` });
  }
  throwIf(errors);
}

const vastAdItem: KindHooks = {
  prepare(values, ctx) {
    const errors: ParameterError[] = [];
    if (typeof values.duration === 'string' && !HMS.test(values.duration)) {
      errors.push({ field: 'duration', type: 'invalid_value', message: "'duration' must be a length of time in the form hh:mm:ss." });
    }
    if (typeof values.skip_duration === 'string' && !HMS.test(values.skip_duration) && !PERCENT.test(values.skip_duration)) {
      errors.push({ field: 'skip_duration', type: 'invalid_value', message: "'skip_duration' must be a time in the form hh:mm:ss or a whole percentage from 0 to 100." });
    }
    if (typeof values.wrapper_url === 'string' && values.wrapper_url !== '') {
      try {
        const u = new URL(values.wrapper_url);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        errors.push({ field: 'wrapper_url', type: 'invalid_value', message: "'wrapper_url' must be an absolute http(s) URL or empty." });
      }
    }
    const useWrapper = values.use_wrapper ?? ctx.existing?.use_wrapper;
    const wrapperUrl = values.wrapper_url !== undefined ? values.wrapper_url : ctx.existing?.wrapper_url;
    if (useWrapper === true && !wrapperUrl) {
      errors.push({ field: 'wrapper_url', type: 'missing_field', message: "'wrapper_url' is required when 'use_wrapper' is true." });
    }
    throwIf(errors);
  },
};

/** rtb_options' members are checked against each other and the caller's PMP deals (hooks/programmatic.ts). */
const vastZone: KindHooks = { prepare: prepareRtbOptions };

const vastCampaign: KindHooks = {
  prepare(values) {
    refuseUnavailable(values, { contract: 'contracts are not managed on this platform' });
  },
};

const AD_ITEM_TARGETING = 'ad-item-level targeting is not available; target the placement or its schedule instead';

const vastCampaignAssignment: KindHooks = {
  prepare(values) {
    refuseUnavailable(values, {
      geo_target: AD_ITEM_TARGETING,
      platform_target: AD_ITEM_TARGETING,
      data_key_target: AD_ITEM_TARGETING,
      keywords: AD_ITEM_TARGETING,
      audience_target: 'User DB audiences are not available on this platform',
    });
  },
};

const vastSchedule: KindHooks = {
  prepare(values, ctx) {
    prepareSchedule(values, ctx);
    const all = merged(values, ctx);
    const type = all.day_cap_type;
    const views = Number(all.day_cap_views_limit) || 0;
    const clicks = Number(all.day_cap_clicks_limit) || 0;
    const errors: ParameterError[] = [];
    if ((views || clicks) && !type) {
      errors.push({ field: 'day_cap_type', type: 'missing_field', message: "'day_cap_type' (views or clicks) is required with a day cap limit." });
    } else if (type === 'views' && clicks) {
      errors.push({ field: 'day_cap_clicks_limit', type: 'invalid_value', message: "'day_cap_clicks_limit' must be 0 when 'day_cap_type' is views: a schedule has one day cap." });
    } else if (type === 'clicks' && views) {
      errors.push({ field: 'day_cap_views_limit', type: 'invalid_value', message: "'day_cap_views_limit' must be 0 when 'day_cap_type' is clicks: a schedule has one day cap." });
    }
    if (given(all.per_user_view_limit) !== given(all.per_user_view_period)) {
      errors.push({ field: given(all.per_user_view_limit) ? 'per_user_view_period' : 'per_user_view_limit', type: 'missing_field', message: "'per_user_view_limit' and 'per_user_view_period' go together." });
    }
    throwIf(errors);
  },
  decorate: scheduleStatus('vast_placement'),
};

const vastPlacement: KindHooks = {
  prepare(values, ctx) {
    placement.prepare!(values, ctx);
    refuseUnavailable(values, { user_db_user_target: 'User DB audiences are not available on this platform' });
    const all = merged(values, ctx);
    if (given(all.max_frequency) !== given(all.max_frequency_period)) {
      invalid(given(all.max_frequency) ? 'max_frequency_period' : 'max_frequency', "'max_frequency' and 'max_frequency_period' (in days) go together.");
    }
  },
};

/** A file comes from an uploaded creative or a URL: exactly one after every write. */
function oneSource(values: Attributes, ctx: HookContext, urlField: string): void {
  const all = merged(values, ctx);
  if (given(all.creative) === given(all[urlField])) {
    invalid(given(all.creative) ? urlField : 'creative', `Give exactly one of 'creative' and '${urlField}'.`);
  }
}

const linearMedia: KindHooks = {
  prepare(values, ctx) {
    if (typeof values.type === 'string' && !VIDEO_MIME.test(values.type)) {
      invalid('type', "'type' must be a video MIME type a player can load, such as video/mp4, video/webm or application/x-mpegURL.");
    }
    const all = merged(values, ctx);
    if (typeof all.min_bitrate === 'number' && typeof all.max_bitrate === 'number' && all.min_bitrate > all.max_bitrate) {
      invalid('min_bitrate', "'min_bitrate' must not be above 'max_bitrate'.");
    }
    oneSource(values, ctx, 'creative_url');
    if (ctx.op === 'create') values.is_linear = true;
  },
};

/** A non-linear's creative gets an id of its own (the reference's shape has one), kept across updates. */
const nonLinearMedia: KindHooks = {
  async prepare(values, ctx) {
    if (ctx.op === 'create') values.is_linear = false;
    const creative = values.creative as Record<string, Json> | undefined;
    if (!creative || typeof creative !== 'object') return;
    const kept = (ctx.existing?.creative as Record<string, Json> | undefined)?.id;
    values.creative = { id: typeof kept === 'number' ? kept : (await nextIds(ctx.db, 1))[0], ...creative };
  },
};

const companion: KindHooks = {
  prepare(values, ctx) {
    const all = merged(values, ctx);
    if (all.resource_type === 'static') {
      if (!given(all.creative) && !given(all.content)) invalid('content', "A static companion needs its image: give 'content' (its URL) or 'creative'.");
      if (given(all.type) && !IMAGE_MIME.test(String(all.type)) && !/^application\/(x-)?javascript$/i.test(String(all.type))) {
        invalid('type', "'type' of a static companion must be an image MIME type (image/png, image/jpeg...) or application/javascript.");
      }
      if (given(all.content) && !given(all.creative)) {
        try {
          const u = new URL(String(all.content));
          if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
        } catch {
          invalid('content', "'content' of a static companion must be the http(s) URL of its image.");
        }
      }
    } else if (!given(all.content)) {
      invalid('content', `An ${all.resource_type} companion needs 'content': ${all.resource_type === 'iframe' ? 'the URL of its page' : 'its HTML'}.`);
    }
  },
};

/** A channel shows its zones ({id, name, type}) from its zone assignments. */
const vastChannel: KindHooks = {
  async decorate(items, tenant, db) {
    if (!items.length) return;
    const rows = (await db('resources as a')
      .join('resources as z', function joinZone() {
        this.on(db.raw("z.id = (a.attributes->'vast_zone'->>'id')::bigint")).andOn('z.account_id', 'a.account_id').andOn('z.mode', 'a.mode');
      })
      .where({ 'a.account_id': tenant.accountId, 'a.mode': tenant.mode, 'a.kind': 'vast_channel_zone_assignment' })
      .whereNull('z.archived_at')
      .whereRaw("(a.attributes->>'vast_channel')::bigint = any(?)", [items.map((i) => i.id)])
      .select(db.raw("(a.attributes->>'vast_channel')::bigint as channel"), 'z.id as zone', db.raw("z.attributes->>'name' as name"))
      .orderBy('z.id')) as { channel: string; zone: string; name: string }[];
    for (const item of items) {
      const a = (item.attributes ?? {}) as Attributes;
      a.vast_zones = rows.filter((r) => Number(r.channel) === item.id).map((r) => ({ id: Number(r.zone), name: r.name, type: 'VAST Zone' }));
      item.attributes = a;
    }
  },
};

export const videoHooks: Record<string, KindHooks> = {
  vast_ad_item: vastAdItem,
  vast_zone: vastZone,
  vast_campaign: vastCampaign,
  vast_campaign_assignment: vastCampaignAssignment,
  vast_schedule: vastSchedule,
  vast_placement: vastPlacement,
  vast_media_linear: linearMedia,
  vast_media_non_linear: nonLinearMedia,
  vast_companion: companion,
  vast_channel: vastChannel,
};
