import type { Knex } from 'knex';
import type { BreakdownRow, Financials, Money, Report, ReportEntity, ReportQuery, Totals } from '../../proto/gen/adserver/reporting/v1/reports';
import type { Tenant } from '../shared/tenant';
import { divide, formatDecimal, parseDecimal } from '../shared/decimal';
import { PERIODS, ParamErrors, REPORT_TYPES, VAST_REPORT_TYPES, checkedIds, parseEnum, parseRange, type TimeRange } from './report-params';
import { formatInZone, periodStarts, type Period } from '../shared/timezones';
import { videoTotals } from '../shared/video-events';

/** Rollup column holding the id a report type groups by; types without one answer no rows yet. */
const ENTITY_COLUMN: Record<string, string | undefined> = {
  overview: 'account_id',
  publisher: 'publisher_id',
  advertiser: 'advertiser_id',
  zone: 'zone_id',
  campaign: 'campaign_id',
  'ad-item': 'ad_item_id',
  // Placements on a channel record it with every event.
  channel: 'channel_id',
  // So do placements with a geo target; read from the raw events (RAW_TYPES).
  'geo-target': 'geo_target_id',
};

/** Report types grouped by a column only the raw events hold. */
const RAW_TYPES = new Set(['geo-target']);

export interface ParsedReport {
  type: string;
  period: Period;
  range: TimeRange;
  summary: boolean;
  details: boolean;
  breakdown: boolean;
  financials: boolean;
  filters: Record<string, number[]>;
  excludePublisherAdItems: boolean;
  excludeCampaignAdItems: boolean;
  excludeChannelStats: boolean;
  requireChannelStats: boolean;
  vast: boolean;
  /** Entities are placements, whatever the type (the VAST 4 report). */
  byPlacement: boolean;
  /** Filtered by text ads or popups, which are never recorded: nothing matches. */
  unrecordedFilter: boolean;
}

/** Reads and checks a report query; a refusal names every bad parameter. */
export function parseReportQuery(q: ReportQuery, opts: { periodRequired?: boolean; now?: number; types?: readonly string[] } = {}): ParsedReport {
  const errors = new ParamErrors();
  const type = parseEnum(q.type, 'type', opts.types ?? (q.vast ? VAST_REPORT_TYPES : REPORT_TYPES), errors, true);
  const period = parseEnum(q.period, 'period', PERIODS, errors, opts.periodRequired ?? true) ?? 'day';
  const range = parseRange(q, errors, opts.now);
  const parsed = {
    summary: q.summary ?? true,
    details: q.details ?? false,
    breakdown: q.breakdown ?? false,
    financials: q.financials ?? true,
    filters: {
      publisher_id: checkedIds(q.publishers, 'publishers', errors),
      zone_id: checkedIds(q.zones, 'zones', errors),
      advertiser_id: checkedIds(q.advertisers, 'advertisers', errors),
      campaign_id: checkedIds(q.campaigns, 'campaigns', errors),
      ad_item_id: checkedIds(q.adItems, 'ad-items', errors),
      placement_id: checkedIds(q.placements, 'placements', errors),
    },
    excludePublisherAdItems: q.excludePublisherAdItems,
    excludeCampaignAdItems: q.excludeCampaignAdItems,
    excludeChannelStats: q.excludeChannelStats,
    requireChannelStats: q.requireChannelStats,
    unrecordedFilter: q.textads.length + q.popups.length > 0,
  };
  errors.throwIfAny();
  return { type: type!, period, range: range!, vast: q.vast, byPlacement: q.byPlacement, ...parsed };
}

interface RollupRow {
  entity: number;
  p: number;
  currency: string;
  responses: number;
  impressions: number;
  clicks: number;
  conversions: number;
  amount: string;
  placement_id?: number;
  assignment_id?: number;
  ad_item_id?: number;
  campaign_id?: number;
  zone_id?: number;
}

/** A video rollup row: one event name's count. */
interface VideoRow {
  entity: number;
  p: number;
  event: string;
  count: number;
  placement_id?: number;
  assignment_id?: number;
  ad_item_id?: number;
  campaign_id?: number;
  zone_id?: number;
}

type BreakdownKey = Pick<RollupRow, (typeof BREAKDOWN_COLUMNS)[number]>;

/** Counts plus money per currency, summed exactly; a VAST report's also the video events. */
class Tally {
  responses = 0;
  impressions = 0;
  clicks = 0;
  conversions = 0;
  readonly money = new Map<string, bigint>();
  readonly video = new Map<string, number>();

  constructor(readonly vast = false) {}

  addVideo(r: VideoRow): void {
    this.video.set(r.event, (this.video.get(r.event) ?? 0) + Number(r.count));
  }

  add(r: RollupRow): void {
    this.responses += Number(r.responses);
    this.impressions += Number(r.impressions);
    this.clicks += Number(r.clicks);
    this.conversions += Number(r.conversions);
    if (r.currency) this.money.set(r.currency, (this.money.get(r.currency) ?? 0n) + parseDecimal(r.amount));
  }

  totals(): Totals {
    const cost: Money[] = [...this.money.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([currency, v]) => ({ currency, amount: formatDecimal(v, 9) }));
    const t = { responses: this.responses, impressions: this.impressions, clicks: this.clicks, conversions: this.conversions, cost };
    return { ...t, financials: financialsOf(t), video: this.vast ? videoTotals(this.video, this.impressions) : undefined };
  }
}

/** What a cost means to each party, and its effective rates, per currency. */
export function financialsOf(t: Pick<Totals, 'impressions' | 'clicks' | 'conversions' | 'cost'>): Financials {
  const per = (f: (cost: bigint) => bigint): Money[] => t.cost.map((m) => ({ currency: m.currency, amount: formatDecimal(f(parseDecimal(m.amount)), 6) }));
  return {
    cost: per((c) => c),
    // No publisher share is configured yet: the administrator keeps the whole cost.
    payout: per(() => 0n),
    revenue: per((c) => c),
    eCpm: per((c) => divide(c * 1000n, t.impressions)),
    eCpc: per((c) => divide(c, t.clicks)),
    eCpa: per((c) => divide(c, t.conversions)),
  };
}

/** A stored report (generated before totals carried their financials) with every total's financials. */
export function withFinancials(report: Report): Report {
  const fill = (t: Totals | undefined) => (t && !t.financials ? { ...t, financials: financialsOf(t) } : t);
  const rows = (list: BreakdownRow[]) => list.map((b) => ({ ...b, totals: fill(b.totals) }));
  return {
    ...report,
    data: report.data.map((e) => ({
      ...e,
      summary: fill(e.summary),
      breakdown: rows(e.breakdown),
      details: e.details.map((d) => ({ ...d, totals: fill(d.totals), breakdown: rows(d.breakdown) })),
    })),
  };
}

const BREAKDOWN_COLUMNS = ['placement_id', 'assignment_id', 'ad_item_id', 'campaign_id', 'zone_id'] as const;

/** Rollup filters shared by reports and geo summaries: account, range, ids, and the include/exclude flags. */
export function applyFilters(qb: Knex.QueryBuilder, tenant: Tenant, r: ParsedReport, time = 'bucket'): Knex.QueryBuilder {
  qb.where('account_id', tenant.accountId).where(time, '>=', new Date(r.range.from)).where(time, '<', new Date(r.range.to));
  for (const [col, ids] of Object.entries(r.filters)) if (ids.length) qb.whereIn(col, ids);
  if (r.excludePublisherAdItems) qb.whereNot('campaign_id', 0);
  if (r.excludeCampaignAdItems) qb.where('campaign_id', 0);
  if (r.excludeChannelStats) qb.where('channel_id', 0);
  if (r.requireChannelStats) qb.whereNot('channel_id', 0);
  return qb;
}

/**
 * A report from the 15-minute rollups: rows are grouped by the report type's id and by the period
 * the bucket falls in (period starts computed in the report's zone, so DST days have 23 or 25 hours),
 * then summed into summary, details and breakdown. Rollup buckets are UTC-aligned quarter hours, and
 * the bounds of every preset but last-24-hours fall on them in every zone; otherwise a quarter hour
 * belongs to the range when it starts inside it.
 * Test mode records nothing, so a test key's report holds the shape with zero counts.
 */
export async function buildReport(knex: Knex, tenant: Tenant, r: ParsedReport): Promise<Report> {
  const starts = periodStarts(r.range.zone, r.period, r.range.from, r.range.to);
  const column = r.byPlacement ? 'placement_id' : ENTITY_COLUMN[r.type];
  let rows: RollupRow[] = [];
  let videoRows: VideoRow[] = [];
  const tally = () => new Tally(r.vast);
  // Test mode records nothing.
  if (column && !r.unrecordedFilter && tenant.mode === 'live') {
    // Hourly rows when every boundary falls on a whole hour (UTC and whole-hour zones), quarter hours otherwise.
    const hourly = [...starts, r.range.to].every((t) => t % 3600_000 === 0);
    const raw = RAW_TYPES.has(r.type);
    const time = raw ? 'occurred_at' : 'bucket';
    const qb = knex(raw ? 'serving_events' : hourly ? 'event_rollups_hourly' : 'event_rollups')
      .select(knex.raw(`${column} as entity`), knex.raw(`width_bucket(${time}, ?::timestamptz[]) as p`, [starts.map((s) => new Date(s).toISOString())]), 'currency')
      .select(
        knex.raw(
          raw
            ? `count(*) filter (where kind = 1) as responses, count(*) filter (where kind = 2) as impressions,
               count(*) filter (where kind = 3) as clicks, count(*) filter (where kind = 4) as conversions, sum(amount)::text as amount`
            : 'sum(responses) as responses, sum(impressions) as impressions, sum(clicks) as clicks, sum(conversions) as conversions, sum(amount)::text as amount',
        ),
      );
    applyFilters(qb, tenant, r, time);
    // Display reports leave VAST decisions' events out; VAST reports read only those.
    qb.where('vast', r.vast);
    // Video events are counted apart; auction events are programmatic demand's (the demand-source report).
    if (raw) qb.whereNotIn('kind', [5, 6]);
    const entityOnly = r.type !== 'overview' || r.byPlacement;
    if (entityOnly) qb.whereNot(column, 0);
    qb.groupByRaw('1, 2, 3');
    if (r.breakdown) {
      qb.select(...BREAKDOWN_COLUMNS);
      qb.groupBy(...BREAKDOWN_COLUMNS);
    }
    // VAST types all have a rollup column (RAW_TYPES are display-only).
    const vq = r.vast && !raw
      ? knex(hourly ? 'video_rollups_hourly' : 'video_rollups')
        .select(knex.raw(`${column} as entity`), knex.raw('width_bucket(bucket, ?::timestamptz[]) as p', [starts.map((s) => new Date(s).toISOString())]), 'event', knex.raw('sum(count) as count'))
      : undefined;
    if (vq) {
      applyFilters(vq, tenant, r);
      if (entityOnly) vq.whereNot(column, 0);
      vq.groupByRaw('1, 2, 3');
      if (r.breakdown) {
        vq.select(...BREAKDOWN_COLUMNS);
        vq.groupBy(...BREAKDOWN_COLUMNS);
      }
    }
    [rows, videoRows] = await Promise.all([qb, vq ?? Promise.resolve([])]);
  }

  const entities = new Map<number, { summary: Tally; periods: Tally[]; pairs: Map<string, { key: BreakdownKey; summary: Tally; periods: Map<number, Tally> }> }>();
  const entity = (id: number) => {
    let e = entities.get(id);
    if (!e) entities.set(id, (e = { summary: tally(), periods: starts.map(() => tally()), pairs: new Map() }));
    return e;
  };
  // The overview always has its one row (the account), zero when nothing happened.
  if (r.type === 'overview' && !r.byPlacement) entity(tenant.accountId);
  // Every tally a row adds to: its entity's summary and period, and its pair's when broken down.
  const tallies = (row: RollupRow | VideoRow): Tally[] => {
    const e = entity(Number(row.entity));
    const p = Number(row.p) - 1;
    const out = [e.summary];
    if (e.periods[p]) out.push(e.periods[p]);
    if (r.breakdown) {
      const key = BREAKDOWN_COLUMNS.map((c) => row[c]).join(':');
      let pair = e.pairs.get(key);
      if (!pair) e.pairs.set(key, (pair = { key: row, summary: tally(), periods: new Map() }));
      if (!pair.periods.has(p)) pair.periods.set(p, tally());
      out.push(pair.summary, pair.periods.get(p)!);
    }
    return out;
  };
  for (const row of rows) for (const t of tallies(row)) t.add(row);
  for (const row of videoRows) for (const t of tallies(row)) t.addVideo(row);

  const breakdownRow = (k: BreakdownKey, t: Tally): BreakdownRow => ({
    placement: Number(k.placement_id), assignment: Number(k.assignment_id), adItem: Number(k.ad_item_id), campaign: Number(k.campaign_id), zone: Number(k.zone_id), totals: t.totals(),
  });
  const data: ReportEntity[] = [...entities.entries()]
    .sort(([a], [b]) => a - b)
    .map(([id, e]) => {
      const pairs = [...e.pairs.values()].sort((a, b) => Number(a.key.placement_id) - Number(b.key.placement_id) || Number(a.key.ad_item_id) - Number(b.key.ad_item_id));
      return {
        id,
        summary: e.summary.totals(),
        breakdown: pairs.map((pair) => breakdownRow(pair.key, pair.summary)),
        details: starts.map((s, i) => ({
          startDate: formatInZone(r.range.zone, s),
          totals: e.periods[i].totals(),
          breakdown: pairs.filter((pair) => pair.periods.has(i)).map((pair) => breakdownRow(pair.key, pair.periods.get(i)!)),
          country: '',
        })),
      };
    });
  return {
    type: r.type, period: r.period, from: formatInZone(r.range.zone, r.range.from), to: formatInZone(r.range.zone, r.range.to), timezone: r.range.zone,
    summary: r.summary, details: r.details, breakdown: r.breakdown, financials: r.financials, data,
  };
}

/** Totals per country over the range (geo summary); empty until events carry countries. */
export async function buildGeoSummary(knex: Knex, tenant: Tenant, r: ParsedReport): Promise<Report> {
  const column = ENTITY_COLUMN[r.type];
  let rows: (RollupRow & { country: string })[] = [];
  if (column && !r.unrecordedFilter && tenant.mode === 'live') {
    const qb = knex('serving_events')
      .select(knex.raw(`${column} as entity`), 'country', 'currency')
      .select(knex.raw(`count(*) filter (where kind = 1) as responses, count(*) filter (where kind = 2) as impressions,
        count(*) filter (where kind = 3) as clicks, count(*) filter (where kind = 4) as conversions, sum(amount)::text as amount`))
      .where('account_id', tenant.accountId).where('occurred_at', '>=', new Date(r.range.from)).where('occurred_at', '<', new Date(r.range.to))
      .whereNot('country', '')
      .where('vast', r.vast)
      .whereNotIn('kind', [5, 6]);
    for (const [col, ids] of Object.entries(r.filters)) if (ids.length) qb.whereIn(col, ids);
    if (r.type !== 'overview') qb.whereNot(column, 0);
    qb.groupByRaw('1, 2, 3');
    rows = await qb;
  }
  const byEntity = new Map<number, Map<string, Tally>>();
  if (r.type === 'overview') byEntity.set(tenant.accountId, new Map());
  for (const row of rows) {
    const id = Number(row.entity);
    if (!byEntity.has(id)) byEntity.set(id, new Map());
    const countries = byEntity.get(id)!;
    if (!countries.has(row.country)) countries.set(row.country, new Tally(r.vast));
    countries.get(row.country)!.add(row);
  }
  const data: ReportEntity[] = [...byEntity.entries()].sort(([a], [b]) => a - b).map(([id, countries]) => {
    const total = new Tally(r.vast);
    for (const row of rows) if (Number(row.entity) === id) total.add(row);
    return {
      id, summary: total.totals(), breakdown: [],
      details: [...countries.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([country, t]) => ({ startDate: '', country, totals: t.totals(), breakdown: [] })),
    };
  });
  return {
    type: r.type, period: '', from: formatInZone(r.range.zone, r.range.from), to: formatInZone(r.range.zone, r.range.to), timezone: r.range.zone,
    summary: true, details: true, breakdown: false, financials: r.financials, data,
  };
}
