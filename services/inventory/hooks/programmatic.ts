import type { Json, ParameterError } from '../../shared/catalog';
import { isHttpUrl, isPlainObject } from '../../shared/catalog/validate';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { given, merged, throwIf } from './common';

/**
 * Programmatic demand (catalog kinds/programmatic.ts): rules its field descriptions cannot state. A
 * spend limit has a period and a window in order; an endpoint has a bid request URL and names zones of
 * the caller's; a deal's audience is refused (no User DB here) and its zones are shown; zones name
 * deals of the caller's, and a VAST zone's rtb_options keep their minimums under their maximums.
 */

/** The ids of `ids` that name no live (unarchived) resource of `kind` in the caller's account and mode. */
async function missingIds(ctx: HookContext, kind: string, ids: number[]): Promise<number[]> {
  const wanted = [...new Set(ids)];
  if (!wanted.length) return [];
  const rows = (await ctx
    .db('resources')
    .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind })
    .whereNull('archived_at')
    .whereIn('id', wanted)
    .select('id')) as { id: string | number }[];
  const found = new Set(rows.map((r) => Number(r.id)));
  return wanted.filter((id) => !found.has(id));
}

/** Every id of the list `value` (reported as `field`, said as `said`) names a `title` of the caller's. */
export async function checkIdList(
  value: Json | undefined, field: string, kind: string, title: string, ctx: HookContext, errors: ParameterError[], said = `'${field}'`,
): Promise<void> {
  if (!Array.isArray(value)) return;
  const missing = await missingIds(ctx, kind, value as number[]);
  if (missing.length) {
    const shown = missing.slice(0, 5).join(', ');
    errors.push({ field, type: 'invalid_reference', message: `${said} names ${missing.length === 1 ? `${title} ${shown}, which does` : `${title}s ${shown}, which do`} not exist.` });
  }
}

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/;

/** The instant an ISO 8601 date-time names, or NaN when it names none (a 30th of February, hour 24...). */
function instantOf(v: Json | undefined): number {
  const m = typeof v === 'string' ? ISO_INSTANT.exec(v) : null;
  if (!m) return NaN;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((x) => Number(x ?? 0));
  const date = new Date(Date.UTC(year, month - 1, day));
  const real = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!real || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return NaN;
  return Date.parse(v as string);
}

const demandSource: KindHooks = {
  prepare(values, ctx) {
    const errors: ParameterError[] = [];
    for (const field of ['spend_limit_start', 'spend_limit_end']) {
      if (typeof values[field] === 'string' && Number.isNaN(instantOf(values[field]))) {
        errors.push({ field, type: 'invalid_value', message: `'${field}' must be a real date and time (ISO 8601 with its offset).` });
      }
    }
    throwIf(errors);
    const all = merged(values, ctx);
    if (given(all.spend_limit) && !given(all.spend_limit_period)) {
      errors.push({ field: 'spend_limit_period', type: 'missing_field', message: "'spend_limit_period' (once, weekly, biweekly, monthly or quarterly) is required with a 'spend_limit'." });
    }
    const start = instantOf(all.spend_limit_start);
    const end = instantOf(all.spend_limit_end);
    if (!Number.isNaN(start) && !Number.isNaN(end) && start >= end) {
      const field = values.spend_limit_end !== undefined ? 'spend_limit_end' : 'spend_limit_start';
      errors.push({ field, type: 'invalid_value', message: "'spend_limit_start' must be before 'spend_limit_end'." });
    }
    throwIf(errors);
  },
};

const demandEndpoint: KindHooks = {
  async prepare(values, ctx) {
    const errors: ParameterError[] = [];
    const params = values.default_parameters;
    if (isPlainObject(params)) {
      const url = params.url;
      if (url === undefined || url === null || url === '') {
        errors.push({ field: 'default_parameters.url', type: 'missing_field', message: "'default_parameters.url' is required: the address bid requests are sent to." });
      } else if (typeof url !== 'string' || url.length > 2048 || !isHttpUrl(url)) {
        errors.push({ field: 'default_parameters.url', type: 'invalid_value', message: "'default_parameters.url' must be an absolute http(s) URL of at most 2048 characters." });
      }
    }
    const formats = values.supported_formats;
    if (Array.isArray(formats) && new Set(formats).size !== formats.length) {
      errors.push({ field: 'supported_formats', type: 'invalid_value', message: "'supported_formats' must not name a format twice." });
    }
    await checkIdList(values.filtered_zones, 'filtered_zones', 'standard_zone', 'standard zone', ctx, errors);
    await checkIdList(values.filtered_vast_zones, 'filtered_vast_zones', 'vast_zone', 'VAST zone', ctx, errors);
    throwIf(errors);
  },
};

const pmpDeal: KindHooks = {
  prepare(values) {
    if (given(values.audience_target)) {
      throwIf([{ field: 'audience_target', type: 'invalid_value', message: "'audience_target' must be null: User DB audiences are not available on this platform." }]);
    }
  },
  /** The zones naming the deal: standard zones by pmp_deals, VAST zones by rtb_options.pmp_deals. */
  async decorate(items, tenant, db) {
    if (!items.length) return;
    const rows = (await db('resources')
      .where({ account_id: tenant.accountId, mode: tenant.mode })
      .whereIn('kind', ['standard_zone', 'vast_zone'])
      .whereNull('archived_at')
      // Containment, so the attributes index finds the holders of these deals only.
      .where((w) => {
        for (const item of items) {
          w.orWhereRaw('attributes @> ?::jsonb', [JSON.stringify({ pmp_deals: [item.id] })]);
          w.orWhereRaw('attributes @> ?::jsonb', [JSON.stringify({ rtb_options: { pmp_deals: [item.id] } })]);
        }
      })
      .orderBy('id')
      .select('id', 'kind', db.raw("coalesce(attributes->'pmp_deals', attributes->'rtb_options'->'pmp_deals') as deals"))) as { id: string | number; kind: string; deals: Json }[];
    for (const item of items) {
      const a = (item.attributes ?? {}) as Attributes;
      const naming = (kind: string) => rows.filter((r) => r.kind === kind && Array.isArray(r.deals) && r.deals.includes(item.id)).map((r) => Number(r.id));
      a.standard_zones = naming('standard_zone');
      a.vast_zones = naming('vast_zone');
      item.attributes = a;
    }
  },
};

/** A standard zone's pmp_deals name deals of the caller's. */
export async function preparePmpDeals(values: Attributes, ctx: HookContext): Promise<void> {
  const errors: ParameterError[] = [];
  await checkIdList(values.pmp_deals, 'pmp_deals', 'pmp_deal', 'PMP deal', ctx, errors);
  throwIf(errors);
}

/** A VAST zone's rtb_options (vast_rtb_options): minimums not above maximums, deals of the caller's. */
export async function prepareRtbOptions(values: Attributes, ctx: HookContext): Promise<void> {
  const rtb = values.rtb_options;
  if (!isPlainObject(rtb)) return;
  const errors: ParameterError[] = [];
  for (const [min, max] of [['min_duration', 'max_duration'], ['min_bitrate', 'max_bitrate']]) {
    const lo = rtb[min];
    const hi = rtb[max];
    if (typeof lo === 'number' && typeof hi === 'number' && lo > hi) {
      errors.push({ field: 'rtb_options', type: 'invalid_value', message: `'rtb_options' member '${min}' must not be above '${max}'.` });
    }
  }
  await checkIdList(rtb.pmp_deals, 'rtb_options', 'pmp_deal', 'PMP deal', ctx, errors, "'rtb_options' member 'pmp_deals'");
  throwIf(errors);
}

export const programmaticHooks: Record<string, KindHooks> = {
  demand_source: demandSource,
  demand_endpoint: demandEndpoint,
  pmp_deal: pmpDeal,
};
