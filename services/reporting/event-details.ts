import type { Knex } from 'knex';
import type { EventDetail, EventDetailsPage, EventDetailsQuery, EventLogExport, EventLogQuery } from '../../proto/gen/adserver/reporting/v1/reports';
import { formatTimestamp } from '../shared/db';
import type { Tenant } from '../shared/tenant';
import { ParamErrors, checkedIds, parseEnum, parseRange } from './report-params';
import { formatInZone } from '../shared/timezones';

const FILTERS: Record<string, Record<string, string>> = {
  click: { zone: 'zone_id', campaign: 'campaign_id' },
  conversion: { zone: 'zone_id', campaign: 'campaign_id', 'ad-item': 'ad_item_id', placement: 'placement_id' },
};
const KIND_CODE: Record<string, number> = { response: 1, impression: 2, click: 3, conversion: 4 };

/** The client address with its last part hidden: 203.0.113.xxx, 2001:db8:1:2:xxxx. */
export function maskAddress(ip: string): string {
  if (!ip) return '';
  const v4 = /^(?:::ffff:)?(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}$/i.exec(ip);
  if (v4) return `${v4[1]}.xxx`;
  if (ip.includes(':')) {
    const groups = ip.split(':');
    return [...groups.slice(0, Math.max(1, Math.min(4, groups.length - 1))), 'xxxx'].join(':');
  }
  return 'xxx';
}

interface EventRow {
  id: string;
  occurred_at: Date;
  publisher_id: number;
  zone_id: number;
  advertiser_id: number;
  campaign_id: number;
  ad_item_id: number;
  placement_id: number;
  ip: string;
  user_agent: string;
  referrer: string;
  country: string;
  conversion_value: string | null;
  conversion_reference: string;
  decision: string;
  region: string;
  city: string;
}

/** Raw clicks or conversions of the caller's account in a range, newest first, paged. */
export async function listEventDetails(knex: Knex, tenant: Tenant, q: EventDetailsQuery, now = Date.now()): Promise<EventDetailsPage> {
  const errors = new ParamErrors();
  const filters = FILTERS[q.kind] ?? {};
  const filterType = parseEnum(q.filterType, 'filter_type', Object.keys(filters), errors, false);
  const ids = checkedIds(q.filterIds, 'filter_ids', errors);
  if (ids.length && !filterType && q.filterType === '') errors.add('filter_type', "'filter_ids' needs 'filter_type' to say what the ids are.", 'missing_field');
  if (filterType && !ids.length && !q.filterIds.length) errors.add('filter_ids', `'filter_type' ${filterType} needs 'filter_ids' (comma-separated ids).`, 'missing_field');
  const range = parseRange(q, errors, now);
  errors.throwIfAny();
  const page: EventDetailsPage = { data: [], hasMore: false, from: formatInZone(range!.zone, range!.from), to: formatInZone(range!.zone, range!.to), timezone: range!.zone };
  if (tenant.mode !== 'live') return page;
  const qb = knex('serving_events')
    .select('id', 'occurred_at', 'publisher_id', 'zone_id', 'advertiser_id', 'campaign_id', 'ad_item_id', 'placement_id', 'ip', 'user_agent', 'referrer', 'country', knex.raw('conversion_value::text as conversion_value'), 'conversion_reference', 'decision', 'region', 'city')
    // `vast` picks VAST decisions' events, or (false) display ones only.
    .where({ account_id: tenant.accountId, kind: KIND_CODE[q.kind], vast: q.vast })
    .where('occurred_at', '>=', new Date(range!.from))
    .where('occurred_at', '<', new Date(range!.to))
    .orderBy([{ column: 'occurred_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(q.limit + 1)
    .offset(q.offset);
  if (filterType) qb.whereIn(filters[filterType], ids);
  const rows: EventRow[] = await qb;
  page.hasMore = rows.length > q.limit;
  page.data = rows.slice(0, q.limit).map(
    (r): EventDetail => ({
      id: r.id,
      occurredAt: formatInZone(range!.zone, new Date(r.occurred_at).getTime()),
      publisher: Number(r.publisher_id), zone: Number(r.zone_id), advertiser: Number(r.advertiser_id), campaign: Number(r.campaign_id),
      adItem: Number(r.ad_item_id), placement: Number(r.placement_id),
      ip: maskAddress(r.ip), userAgent: r.user_agent, referrer: r.referrer, country: r.country,
      conversionValue: r.conversion_value ?? '', conversionReference: r.conversion_reference, decision: r.decision, region: r.region, city: r.city,
    }),
  );
  return page;
}

/** Each log type's events: kind and whether of VAST decisions; undefined for logs nothing records. */
export const LOG_TYPES: Record<string, { kind: number; vast: boolean } | undefined> = {
  display_impressions: { kind: 2, vast: false }, display_clicks: { kind: 3, vast: false }, display_conversions: { kind: 4, vast: false }, display_blanks: undefined,
  vast_impressions: { kind: 2, vast: true }, vast_clicks: { kind: 3, vast: true }, vast_actions: undefined, vast_interactions: undefined, vast_blanks: undefined,
};
const MAX_LOG_DAYS = 31;
const MAX_LOG_ROWS = 1_000_000;

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  // Quote everything that could break a row, and defuse spreadsheet formulas.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) || safe !== s ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** Parses the event-log day range (UTC dates, `to` inclusive); `from` alone is one day. */
export function parseLogRange(q: EventLogQuery, now = Date.now()): { logType: string; from: number; to: number } {
  const errors = new ParamErrors();
  const logType = parseEnum(q.logType, 'log_type', Object.keys(LOG_TYPES), errors, true);
  const day = (raw: string, name: string) => {
    if (raw === '') return undefined;
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
    const t = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
    if (!m || Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== raw) {
      errors.add(name, `'${name}' must be a date as YYYY-MM-DD.`);
      return undefined;
    }
    return t;
  };
  const today = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate());
  const from = day(q.from, 'from') ?? (q.to === '' ? today : undefined);
  const to = day(q.to, 'to') ?? from;
  if (from === undefined && q.from === '' && q.to !== '') errors.add('from', "'from' is required with 'to'.", 'missing_field');
  if (from !== undefined && to !== undefined) {
    if (to < from) errors.add('to', "'to' must not be before 'from'.");
    else if ((to - from) / 86_400_000 + 1 > MAX_LOG_DAYS) errors.add('to', `An event log export covers at most ${MAX_LOG_DAYS} days.`);
  }
  errors.throwIfAny();
  return { logType: logType!, from: from!, to: to! + 86_400_000 };
}

/**
 * Raw events of one log type as CSV, one row per event with its UTC hour, oldest first. Blanks, VAST
 * actions and interactions hold no rows: nothing records them yet.
 */
export async function exportEventLog(knex: Knex, tenant: Tenant, q: EventLogQuery, now = Date.now()): Promise<EventLogExport> {
  const { logType, from, to } = parseLogRange(q, now);
  const days: string[] = [];
  for (let t = from; t < to; t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  if (q.listOnly) return { csv: '', rows: 0, days };
  const header = ['event_id', 'hour', 'occurred_at', 'publisher', 'zone', 'advertiser', 'campaign', 'ad_item', 'placement', 'ip', 'country', 'referrer', 'user_agent', 'pricing_model', 'price', 'currency', 'cost', 'conversion_value', 'conversion_reference'];
  const lines = [header.join(',')];
  const selected = LOG_TYPES[logType];
  if (selected !== undefined && tenant.mode === 'live') {
    const rows = await knex('serving_events')
      .select('id', 'occurred_at', 'publisher_id', 'zone_id', 'advertiser_id', 'campaign_id', 'ad_item_id', 'placement_id', 'ip', 'country', 'referrer', 'user_agent', 'pricing_model',
        knex.raw('price::text as price'), 'currency', knex.raw('amount::text as amount'), knex.raw('conversion_value::text as conversion_value'), 'conversion_reference')
      .where({ account_id: tenant.accountId, kind: selected.kind, vast: selected.vast })
      .where('occurred_at', '>=', new Date(from))
      .where('occurred_at', '<', new Date(to))
      .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
      .limit(MAX_LOG_ROWS);
    for (const r of rows) {
      const at = formatTimestamp(r.occurred_at);
      lines.push([r.id, `${at.slice(0, 13)}:00`, at, r.publisher_id, r.zone_id, r.advertiser_id, r.campaign_id, r.ad_item_id, r.placement_id, maskAddress(r.ip), r.country, r.referrer,
        r.user_agent, r.pricing_model, r.price, r.currency, r.amount, r.conversion_value, r.conversion_reference].map(csvCell).join(','));
    }
  }
  return { csv: `${lines.join('\r\n')}\r\n`, rows: lines.length - 1, days };
}
