import type { Knex } from 'knex';
import type { AuctionEntity, AuctionPlacementsQuery, AuctionReport, AuctionRow, AuctionTotals, Money } from '../../proto/gen/adserver/reporting/v1/reports';
import { formatDecimal, parseDecimal } from '../shared/decimal';
import { fail } from '../shared/errors';
import type { Tenant } from '../shared/tenant';
import { formatInZone, periodStarts } from '../shared/timezones';
import { applyFilters, financialsOf, parseReportQuery } from './report-query';

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

  type Pair = { row: Row; summary: AuctionTally; periods: Map<number, AuctionTally> };
  const entities = new Map<number, { summary: AuctionTally; periods: AuctionTally[]; pairs: Map<string, Pair> }>();
  const entity = (id: number) => {
    let e = entities.get(id);
    if (!e) entities.set(id, (e = { summary: new AuctionTally(), periods: starts.map(() => new AuctionTally()), pairs: new Map() }));
    return e;
  };
  // The overview always has its one row (the account), zero when nothing was won.
  if (type === 'overview') entity(tenant.accountId);
  for (const row of rows) {
    const e = entity(Number(row.entity));
    const p = Number(row.p) - 1;
    const cpm = bids.get(Number(row.placement_id));
    e.summary.add(row, cpm);
    e.periods[p]?.add(row, cpm);
    // Breakdown: one row per placement in each zone it served in.
    const key = `${row.placement_id}:${row.zone_id}:${row.publisher_id}`;
    let pair = e.pairs.get(key);
    if (!pair) e.pairs.set(key, (pair = { row, summary: new AuctionTally(), periods: new Map() }));
    if (!pair.periods.has(p)) pair.periods.set(p, new AuctionTally());
    pair.summary.add(row, cpm);
    pair.periods.get(p)!.add(row, cpm);
  }

  const rowOf = (pair: Pair, t: AuctionTally): AuctionRow => ({
    placement: Number(pair.row.placement_id), zone: Number(pair.row.zone_id), publisher: Number(pair.row.publisher_id), totals: t.totals(),
  });
  const data: AuctionEntity[] = [...entities.entries()]
    .sort(([a], [b]) => a - b)
    .map(([id, e]) => {
      const pairs = [...e.pairs.values()].sort((a, b) => Number(a.row.placement_id) - Number(b.row.placement_id) || Number(a.row.zone_id) - Number(b.row.zone_id));
      return {
        id,
        summary: e.summary.totals(),
        breakdown: r.breakdown ? pairs.map((pair) => rowOf(pair, pair.summary)) : [],
        details: r.details
          ? starts.map((s, i) => ({
            startDate: formatInZone(r.range.zone, s),
            totals: e.periods[i].totals(),
            breakdown: r.breakdown ? pairs.filter((pair) => pair.periods.has(i)).map((pair) => rowOf(pair, pair.periods.get(i)!)) : [],
          }))
          : [],
      };
    });
  return {
    type, period: r.period, from: formatInZone(r.range.zone, r.range.from), to: formatInZone(r.range.zone, r.range.to), timezone: r.range.zone,
    summary: r.summary, details: r.details, breakdown: r.breakdown, data,
  };
}
