import type { Knex } from 'knex';
import type {
  DemandEntity, DemandRow, DemandSourceQuery, DemandSourceReport, DemandTotals, Money,
} from '../../proto/gen/adserver/reporting/v1/reports';
import { divide, formatDecimal, parseDecimal } from '../shared/decimal';
import { fail } from '../shared/errors';
import type { Tenant } from '../shared/tenant';
import { formatInZone, periodStarts } from '../shared/timezones';
import { ParamErrors, checkedIds } from './report-params';
import { parseReportQuery, type ParsedReport } from './report-query';
import { EntityBreakdown } from './entity-breakdown';

/**
 * The demand source report: programmatic demand over a period, from the demand rollups (display and
 * VAST auctions alike). Per demand endpoint asked: the requests and how they were answered (valid
 * bids, no bid, timeouts, errors, bids under a floor, bids the auction refused), the wins, and the
 * impressions won with their revenue and the publishers' share of it; grouped by account, publisher,
 * zone, demand source or endpoint.
 */

export const DEMAND_REPORT_TYPES = ['overview', 'publisher', 'zone', 'demand_source', 'endpoint'] as const;
type DemandType = (typeof DEMAND_REPORT_TYPES)[number];

const ENTITY_COLUMN: Record<DemandType, string> = {
  overview: 'account_id',
  publisher: 'publisher_id',
  zone: 'zone_id',
  demand_source: 'demand_source_id',
  endpoint: 'demand_endpoint_id',
};

const COUNTS = ['requests', 'bids', 'empty_responses', 'timeouts', 'errors', 'below_floor', 'rejected', 'wins', 'views'] as const;
const SUMS = ['bid_total', 'clearing_total', 'revenue', 'publisher_revenue'] as const;

type Row = { entity: number; p: number; currency: string; zone_id: number; vast: boolean; publisher_id: number; demand_source_id: number; demand_endpoint_id: number; bid_min: string | null; bid_max: string | null }
  & Record<(typeof COUNTS)[number], number> & Record<(typeof SUMS)[number], string>;

/** Money of one currency: sums exactly, and the smallest and largest valid bid. */
interface Purse {
  bidTotal: bigint;
  clearingTotal: bigint;
  revenue: bigint;
  publisherRevenue: bigint;
  min?: bigint;
  max?: bigint;
}

/** A report row's counts, and its money per currency. */
class DemandTally {
  readonly counts: Record<(typeof COUNTS)[number], number> = {
    requests: 0, bids: 0, empty_responses: 0, timeouts: 0, errors: 0, below_floor: 0, rejected: 0, wins: 0, views: 0,
  };
  readonly money = new Map<string, Purse>();

  add(r: Row): void {
    for (const c of COUNTS) this.counts[c] += Number(r[c]);
    let m = this.money.get(r.currency);
    if (!m) this.money.set(r.currency, (m = { bidTotal: 0n, clearingTotal: 0n, revenue: 0n, publisherRevenue: 0n }));
    m.bidTotal += parseDecimal(r.bid_total);
    m.clearingTotal += parseDecimal(r.clearing_total);
    m.revenue += parseDecimal(r.revenue);
    m.publisherRevenue += parseDecimal(r.publisher_revenue);
    if (r.bid_min !== null) {
      const min = parseDecimal(r.bid_min);
      if (m.min === undefined || min < m.min) m.min = min;
    }
    if (r.bid_max !== null) {
      const max = parseDecimal(r.bid_max);
      if (m.max === undefined || max > m.max) m.max = max;
    }
  }

  totals(): DemandTotals {
    const c = this.counts;
    const purses = [...this.money.entries()].sort(([a], [b]) => a.localeCompare(b));
    // One entry per currency of the money; min and max only where a valid bid was made, averages only over what they divide by.
    const each = (pick: (m: Purse) => bigint | undefined): Money[] =>
      purses.flatMap(([currency, m]) => {
        const v = pick(m);
        return v === undefined ? [] : [{ currency, amount: formatDecimal(v, 6) }];
      });
    return {
      requests: c.requests,
      filledResponses: c.bids + c.below_floor + c.rejected,
      emptyResponses: c.empty_responses,
      timeouts: c.timeouts,
      errors: c.errors,
      bids: c.bids,
      belowFloor: c.below_floor,
      rejected: c.rejected,
      wins: c.wins,
      views: c.views,
      revenue: each((m) => m.revenue),
      publisherRevenue: each((m) => m.publisherRevenue),
      minCpm: each((m) => m.min),
      maxCpm: each((m) => m.max),
      totalCpm: each((m) => m.clearingTotal),
      winRate: c.requests ? Math.round((c.wins / c.requests) * 10_000) / 10_000 : 0,
      averageBid: c.bids ? each((m) => divide(m.bidTotal, c.bids)) : [],
      averageClearingPrice: c.wins ? each((m) => divide(m.clearingTotal, c.wins)) : [],
    };
  }
}

/** The query as the report reads it: the common parameters, plus the VAST zone and endpoint filters. */
export function parseDemandQuery(req: DemandSourceQuery): ParsedReport & { vastZones: number[]; endpoints: number[] } {
  if (!req.query) throw fail.badRequest('query is required.');
  const errors = new ParamErrors();
  const vastZones = checkedIds(req.vastZones, 'vastZones', errors);
  const endpoints = checkedIds(req.endpoints, 'endpoints', errors);
  let r: ParsedReport | undefined;
  try {
    r = parseReportQuery({ ...req.query, vast: false }, { types: DEMAND_REPORT_TYPES });
  } catch (err) {
    // Every refused parameter at once: the common ones' and these.
    const params = (err as { parameters?: typeof errors.list }).parameters;
    if (!params || !errors.list.length) throw err;
    for (const p of params) errors.add(p.field, p.message, p.type);
  }
  errors.throwIfAny();
  return { ...r!, vastZones, endpoints };
}

export async function buildDemandSourceReport(knex: Knex, tenant: Tenant, req: DemandSourceQuery): Promise<DemandSourceReport> {
  const r = parseDemandQuery(req);
  const type = r.type as DemandType;
  const column = ENTITY_COLUMN[type];
  const starts = periodStarts(r.range.zone, r.period, r.range.from, r.range.to);
  let rows: Row[] = [];
  // Test mode records nothing; text ad and popup filters are not parameters here.
  if (tenant.mode === 'live') {
    const hourly = [...starts, r.range.to].every((t) => t % 3600_000 === 0);
    const qb = knex(hourly ? 'demand_rollups_hourly' : 'demand_rollups')
      .select(knex.raw(`${column} as entity`), knex.raw('width_bucket(bucket, ?::timestamptz[]) as p', [starts.map((s) => new Date(s).toISOString())]))
      .select('currency', 'zone_id', 'vast', 'publisher_id', 'demand_source_id', 'demand_endpoint_id')
      .select(knex.raw([...COUNTS.map((c) => `sum(${c}) as ${c}`), ...SUMS.map((c) => `sum(${c})::text as ${c}`), 'min(bid_min)::text as bid_min', 'max(bid_max)::text as bid_max'].join(', ')))
      .where('account_id', tenant.accountId)
      .where('bucket', '>=', new Date(r.range.from))
      .where('bucket', '<', new Date(r.range.to));
    if (r.filters.publisher_id.length) qb.whereIn('publisher_id', r.filters.publisher_id);
    if (r.endpoints.length) qb.whereIn('demand_endpoint_id', r.endpoints);
    // `zones` are standard zones and `vastZones` VAST zones: given either, a row must be one of them.
    const zones = r.filters.zone_id;
    if (zones.length || r.vastZones.length) {
      qb.where((w) => {
        if (zones.length) w.orWhere((z) => z.where('vast', false).whereIn('zone_id', zones));
        if (r.vastZones.length) w.orWhere((z) => z.where('vast', true).whereIn('zone_id', r.vastZones));
      });
    }
    if (type !== 'overview') qb.whereNot(column, 0);
    qb.groupByRaw('1, 2, 3, 4, 5, 6, 7, 8');
    rows = await qb;
  }

  const tallies = new EntityBreakdown<Row, void, DemandTotals, DemandTally>(starts.length, () => new DemandTally());
  // The overview always has its one row (the account), zero when no auction was held.
  if (type === 'overview') tallies.entity(tenant.accountId);
  for (const row of rows) {
    // Breakdown: one row per endpoint (and its source) in each zone and publisher it was asked for.
    const key = `${row.vast}:${row.zone_id}:${row.publisher_id}:${row.demand_source_id}:${row.demand_endpoint_id}`;
    tallies.add(Number(row.entity), Number(row.p) - 1, key, row, undefined);
  }
  const data: DemandEntity[] = tallies.report({
    startDates: starts.map((s) => formatInZone(r.range.zone, s)),
    breakdown: r.breakdown,
    details: r.details,
    order: (a, b) => Number(a.vast) - Number(b.vast) || Number(a.zone_id) - Number(b.zone_id) || Number(a.publisher_id) - Number(b.publisher_id)
      || Number(a.demand_source_id) - Number(b.demand_source_id) || Number(a.demand_endpoint_id) - Number(b.demand_endpoint_id),
    rowOf: (row, totals): DemandRow => ({
      zone: Number(row.zone_id), vast: row.vast, publisher: Number(row.publisher_id),
      demandSource: Number(row.demand_source_id), endpoint: Number(row.demand_endpoint_id), totals,
    }),
  });
  return {
    type, period: r.period, from: formatInZone(r.range.zone, r.range.from), to: formatInZone(r.range.zone, r.range.to), timezone: r.range.zone,
    summary: r.summary, details: r.details, breakdown: r.breakdown, data,
  };
}
