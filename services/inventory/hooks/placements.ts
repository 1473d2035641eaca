import type { ParameterError } from '../../shared/catalog';
import type { Knex } from 'knex';
import { fail } from '../../shared/errors';
import { reports } from '../../shared/grpc/clients';
import { errorFields, log } from '../../shared/log';
import type { Attributes, HookContext } from '../../shared/resource-store';
import { formatInZone, isTimeZone, parseTimestamp } from '../../shared/timezones';
import { formatTimestamp } from '../../shared/db';
import { tenantMetadata, type Tenant } from '../../shared/tenant';
import type { KindHooks } from '../../shared/resource-store';
import { throwIf } from './common';

/** Placements and their schedules. */

const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

export function isDateTime(v: string): boolean {
  const m = DATETIME.exec(v);
  if (!m) return false;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 19).replace('T', ' ') === v;
}

function midnightToday(): string {
  return `${new Date().toISOString().slice(0, 10)} 00:00:00`;
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;


/**
 * start_at/end_at (ISO 8601 with an offset, the reference's current fields) and start_date/end_date
 * (UTC, deprecated) name the same instants: whichever is given sets the other, answered in the
 * field's time zone.
 */
function syncWindow(values: Attributes, errors: ParameterError[]): void {
  for (const edge of ['start', 'end'] as const) {
    const atField = `${edge}_at`;
    const zoneField = `${edge}_at_timezone`;
    const dateField = `${edge}_date`;
    if (typeof values[zoneField] === 'string' && !isTimeZone(values[zoneField] as string)) {
      errors.push({ field: zoneField, type: 'invalid_value', message: `'${zoneField}' must be an IANA time zone such as America/New_York.` });
      continue;
    }
    const at = values[atField];
    if (typeof at === 'string') {
      const ms = ISO_WITH_OFFSET.test(at) ? Date.parse(at) : NaN;
      if (Number.isNaN(ms)) {
        errors.push({ field: atField, type: 'invalid_value', message: `'${atField}' must be an ISO 8601 date-time with its offset, such as 2024-11-01T09:00:00-04:00.` });
        continue;
      }
      const given = values[dateField];
      if (typeof given === 'string' && given !== formatTimestamp(new Date(ms))) {
        errors.push({ field: dateField, type: 'invalid_value', message: `'${dateField}' and '${atField}' name different times; give one of them.` });
        continue;
      }
      values[dateField] = formatTimestamp(new Date(ms));
    } else if (at === null && values[dateField] === undefined) {
      values[dateField] = null;
    }
  }
}

/** After start_date/end_date are settled: start_at/end_at in their time zones. */
function renderWindow(values: Attributes, ctx: HookContext): void {
  for (const edge of ['start', 'end'] as const) {
    const date = (values[`${edge}_date`] !== undefined ? values[`${edge}_date`] : ctx.existing?.[`${edge}_date`]) as string | null | undefined;
    const zone = (values[`${edge}_at_timezone`] !== undefined ? values[`${edge}_at_timezone`] : ctx.existing?.[`${edge}_at_timezone`]) as string | null | undefined;
    const ms = parseTimestamp(date);
    values[`${edge}_at`] = Number.isNaN(ms) ? null : formatInZone(zone || 'UTC', ms);
  }
}

/** The window, its time zones and the default under-delivery behaviour: display and VAST schedules alike. */
export function prepareSchedule(values: Attributes, ctx: HookContext): void {
  const errors: ParameterError[] = [];
  syncWindow(values, errors);
  throwIf(errors);
  for (const f of ['start_date', 'end_date']) {
    const v = values[f];
    if (typeof v === 'string' && !isDateTime(v)) errors.push({ field: f, type: 'invalid_value', message: `'${f}' must be a date and time in the form YYYY-MM-DD HH:MM:SS.` });
  }
  throwIf(errors);
  if (ctx.op === 'create' && (values.start_date === undefined || values.start_date === null)) values.start_date = midnightToday();
  if (ctx.op === 'update' && values.start_date === null) values.start_date = midnightToday();
  const start = (values.start_date ?? ctx.existing?.start_date) as string | null;
  const end = (values.end_date !== undefined ? values.end_date : ctx.existing?.end_date) as string | null;
  if (start && end && end < start) errors.push({ field: 'end_date', type: 'invalid_value', message: `'end_date' (${end}) must not be before 'start_date' (${start}).` });
  if (ctx.op === 'create' && values.under_delivery_behaviour === undefined) {
    values.under_delivery_behaviour = values.delivery_method === 'smooth' ? 'endOnDate' : null;
  }
  throwIf(errors);
  renderWindow(values, ctx);
}

type Resource = Parameters<NonNullable<KindHooks['decorate']>>[0][number];

const at = (v: unknown) => parseTimestamp(typeof v === 'string' ? v : '');

/**
 * A schedule's `status`: queued before its start, expired after its end (unless endOnQuota keeps it
 * running for an unmet quota), quota_reached once its placements' views or clicks reach the quota,
 * else active. The count is reporting's, the truth serving seeds its counters from.
 */
export const scheduleStatus = (placementKind: 'placement' | 'vast_placement') => async (items: Resource[], tenant: Tenant, db: Knex): Promise<void> => {
  const now = Date.now();
  const withQuota = items.filter((i) => Number((i.attributes as Attributes)?.quota_lifetime) > 0 && ['views', 'clicks'].includes(String((i.attributes as Attributes)?.quota_type)));
  let countsRead = false;
  const counted = new Map<number, number>();
  if (withQuota.length) {
    try {
      const rows = (await db('resources')
        .select('id', db.raw("attributes->>'schedule' as schedule"))
        .where({ account_id: tenant.accountId, mode: tenant.mode, kind: placementKind })
        .whereRaw("attributes->>'schedule' = any(?)", [withQuota.map((i) => String(i.id))])) as { id: number; schedule: string }[];
      const scopes = withQuota.map((i) => ({ key: String(i.id), placements: rows.filter((r) => r.schedule === String(i.id)).map((r) => Number(r.id)), since: '' }));
      const totals = await reports.getDelivery({ account: tenant.accountId, scopes }, { metadata: tenantMetadata(tenant), idempotent: true, timeoutMs: 2000 });
      for (const c of totals.counts) {
        const a = withQuota.find((i) => String(i.id) === c.key)?.attributes as Attributes;
        counted.set(Number(c.key), a?.quota_type === 'clicks' ? c.clicks : c.impressions);
      }
      countsRead = true;
    } catch (err) {
      // Without reporting, the window alone decides; the quota is still kept by serving.
      log.warn('schedule status without delivery counts', errorFields(err));
    }
  }
  for (const item of items) {
    const a = (item.attributes ?? {}) as Attributes;
    const quota = Number(a.quota_lifetime) || 0;
    const reached = quota > 0 && (counted.get(item.id) ?? 0) >= quota;
    const start = at(a.start_date);
    const end = at(a.end_date);
    const runsPastEnd = a.under_delivery_behaviour === 'endOnQuota' && quota > 0;
    a.status = reached ? 'quota_reached' : !Number.isNaN(start) && now < start ? 'queued' : !Number.isNaN(end) && now > end && !runsPastEnd ? 'expired' : 'active';
    // Smooth delivery's pace: what an even spread over the window expects by now, against what came.
    if (a.delivery_method === 'smooth' && quota > 0 && countsRead && !Number.isNaN(start) && !Number.isNaN(end) && end > start) {
      const expected = Math.round(quota * Math.min(1, Math.max(0, (now - start) / (end - start))));
      const delivered = counted.get(item.id) ?? 0;
      a.pacing = { expected, delivered, behind: delivered < expected };
    } else a.pacing = null;
    item.attributes = a;
  }
};

/** A placement goes into exactly one of a zone and a channel (display and VAST alike). */
export const placement: KindHooks = {
  prepare(values, ctx) {
    const zone = values.zone !== undefined ? values.zone : (ctx.existing?.zone ?? null);
    const channel = values.channel !== undefined ? values.channel : (ctx.existing?.channel ?? null);
    if ((zone === null) === (channel === null)) {
      throw fail.invalid([
        { field: zone === null ? 'zone' : 'channel', type: zone === null ? 'missing_field' : 'invalid_value', message: "A placement goes into a zone or onto a channel: give exactly one of 'zone' and 'channel'." },
      ]);
    }
  },
};

const schedule: KindHooks = { prepare: prepareSchedule, decorate: scheduleStatus('placement') };

export const placementHooks: Record<string, KindHooks> = {
  schedule,
  placement,
};
