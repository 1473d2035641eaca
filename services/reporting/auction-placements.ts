import type { Knex } from 'knex';
import type { AuctionEntity, AuctionPlacementsQuery, AuctionReport, AuctionRow, AuctionTotals, Money } from '../../proto/gen/adserver/reporting/v1/reports';
import { formatDecimal, parseDecimal } from '../shared/decimal';
import { fail } from '../shared/errors';
import type { Tenant } from '../shared/tenant';
import { formatInZone, periodStarts } from '../shared/timezones';
import { applyFilters, financialsOf, parseReportQuery } from './report-query';
import { EntityBreakdown } from './entity-breakdown';

/**
 * The auction placements report: how the account's auction placements did over a period, by
 * account, publisher, zone or placement, from the same rollups as the other reports (display or VAST
 * rows). Serving records the winner of an auction only, so a win is a decision answered with the
 * placement; the bids (CPMs) are the placements' settings, which the caller reads from inventory.
 */

export const AUCTION_REPORT_TYPES = ['overview', 'publisher', 'zone', 'placement'] as const;

const ENTITY_COLUMN: Record<(typeof AUCTION_REPORT_TYPES)[number], string> = {
  overview: 'account_id',
  publisher: 'publisher_id',
  zone: 'zone_id',
  placement: 'placement_id',
};

interface Row {
  entity: number;
  p: number;
  currency: string;
  placement_id: number;
  zone_id: number;
  publisher_id: number;
  responses: number;
  impressions: number;
  amount: string;
}

/** Wins, views and money per currency, with the bids of the placements that won. */
class AuctionTally {
  wins = 0;
  views = 0;
  readonly cost = new Map<string, bigint>();
  readonly bids = new Map<string, { min: bigint; max: bigint; total: bigint }>();

  add(r: Row, cpm: bigint | undefined): void {
    const wins = Number(r.responses);
    this.wins += wins;
    this.views += Number(r.impressions);
    if (!r.currency) return;
    this.cost.set(r.currency, (this.cost.get(r.currency) ?? 0n) + parseDecimal(r.amount));
    // A placement priced by click or conversion has no CPM to report; one that never won bid nothing here.
    if (cpm === undefined || wins === 0) return;
    const b = this.bids.get(r.currency);
    if (!b) this.bids.set(r.currency, { min: cpm, max: cpm, total: cpm * BigInt(wins) });
    else {
      if (cpm < b.min) b.min = cpm;
      if (cpm > b.max) b.max = cpm;
      b.total += cpm * BigInt(wins);
    }
  }

  totals(): AuctionTotals {
    const byCurrency = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
    const cost: Money[] = byCurrency(this.cost).map(([currency, v]) => ({ currency, amount: formatDecimal(v, 9) }));
    const f = financialsOf({ impressions: this.views, clicks: 0, conversions: 0, cost });
    const bid = (pick: (b: { min: bigint; max: bigint; total: bigint }) => bigint): Money[] =>
      byCurrency(this.bids).map(([currency, b]) => ({ currency, amount: formatDecimal(pick(b), 6) }));
    return {
      wins: this.wins, views: this.views, revenue: f.revenue, publisherRevenue: f.payout,
      minCpm: bid((b) => b.min), maxCpm: bid((b) => b.max), totalCpm: bid((b) => b.total),
    };
  }
}

export async function buildAuctionReport(knex: Knex, tenant: Tenant, req: AuctionPlacementsQuery): Promise<AuctionReport> {
  const r = parseReportQuery(req.query!, { types: AUCTION_REPORT_TYPES });
  const type = r.type as (typeof AUCTION_REPORT_TYPES)[number];
  const column = ENTITY_COLUMN[type];
  if (req.bids.some((b) => b.cpm !== '' && !/^\d{1,12}(\.\d{1,9})?$/.test(b.cpm))) throw fail.badRequest('Every bid CPM must be non-negative decimal text.');
  const bids = new Map(req.bids.map((b) => [Number(b.placement), b.cpm ? parseDecimal(b.cpm) : undefined]));
  const starts = periodStarts(r.range.zone, r.period, r.range.from, r.range.to);
  let rows: Row[] = [];
  // Test mode records nothing; an account without auction placements has nothing to count.
  if (tenant.mode === 'live' && bids.size && !r.unrecordedFilter) {
    const hourly = [...starts, r.range.to].every((t) => t % 3600_000 === 0);
    const qb = knex(hourly ? 'event_rollups_hourly' : 'event_rollups')
      .select(knex.raw(`${column} as entity`), knex.raw('width_bucket(bucket, ?::timestamptz[]) as p', [starts.map((s) => new Date(s).toISOString())]))
      .select('currency', 'placement_id', 'zone_id', 'publisher_id')
      .select(knex.raw('sum(responses) as responses, sum(impressions) as impressions, sum(amount)::text as amount'));
    applyFilters(qb, tenant, r);
    qb.where('vast', r.vast).whereIn('placement_id', [...bids.keys()]);
    if (type !== 'overview') qb.whereNot(column, 0);
    qb.groupByRaw('1, 2, 3, 4, 5, 6');
    rows = await qb;
  }

  const tallies = new EntityBreakdown<Row, bigint | undefined, AuctionTotals, AuctionTally>(starts.length, () => new AuctionTally());
  // The overview always has its one row (the account), zero when nothing was won.
  if (type === 'overview') tallies.entity(tenant.accountId);
  for (const row of rows) {
    // Breakdown: one row per placement in each zone it served in.
    tallies.add(Number(row.entity), Number(row.p) - 1, `${row.placement_id}:${row.zone_id}:${row.publisher_id}`, row, bids.get(Number(row.placement_id)));
  }
  const data: AuctionEntity[] = tallies.report({
    startDates: starts.map((s) => formatInZone(r.range.zone, s)),
    breakdown: r.breakdown,
    details: r.details,
    order: (a, b) => Number(a.placement_id) - Number(b.placement_id) || Number(a.zone_id) - Number(b.zone_id),
    rowOf: (row, totals): AuctionRow => ({ placement: Number(row.placement_id), zone: Number(row.zone_id), publisher: Number(row.publisher_id), totals }),
  });
  return {
    type, period: r.period, from: formatInZone(r.range.zone, r.range.from), to: formatInZone(r.range.zone, r.range.to), timezone: r.range.zone,
    summary: r.summary, details: r.details, breakdown: r.breakdown, data,
  };
}
