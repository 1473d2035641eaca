import type { Knex } from 'knex';
import { BidOutcome, EventKind, type ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
import type { ParameterError } from '../shared/catalog/types';
import { log } from '../shared/log';
import { isVideoEvent } from '../shared/video-events';

/** An exact decimal as the contract sends it: "2.50", "0.001". */
const DECIMAL = /^\d{1,14}(\.\d{1,6})?$/;
const CURRENCY = /^[A-Z]{3}$/;
const PRICING_MODELS = new Set(['', 'cpm', 'cpc', 'cpa', 'flat']);
const MAX_ID_LENGTH = 200;

/** Why an event cannot be stored, or undefined when it can. */
export function eventProblem(e: ServingEvent): string | undefined {
  if (!e.id || e.id.length > MAX_ID_LENGTH) return `id must be 1-${MAX_ID_LENGTH} characters`;
  if (![EventKind.RESPONSE, EventKind.IMPRESSION, EventKind.CLICK, EventKind.CONVERSION, EventKind.VIDEO, EventKind.AUCTION].includes(e.kind)) {
    return 'kind must be RESPONSE, IMPRESSION, CLICK, CONVERSION, VIDEO or AUCTION';
  }
  if (e.kind === EventKind.VIDEO) {
    if (!e.videoEvent) return 'video_event is required for a VIDEO event (start, firstQuartile, midpoint, complete...)';
    if (!isVideoEvent(e.videoEvent)) return `video_event '${e.videoEvent.slice(0, 40)}' is not a VAST tracking event reporting counts (start, firstQuartile, midpoint, thirdQuartile, complete, mute, companionView1...)`;
    if (!e.vast) return 'a VIDEO event belongs to a VAST decision: vast must be true';
  } else if (e.videoEvent) {
    return 'video_event is only for VIDEO events';
  }
  if (!Number.isSafeInteger(e.account) || e.account < 1) return 'account must be a positive id';
  for (const f of ['publisher', 'zone', 'advertiser', 'campaign', 'adItem', 'placement', 'assignment', 'channel', 'geoTarget'] as const) {
    if (!Number.isSafeInteger(e[f]) || e[f] < 0) return `${f} must be an id or 0`;
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/.test(e.occurredAt) || Number.isNaN(Date.parse(e.occurredAt))) {
    return 'occurred_at must be an RFC 3339 timestamp';
  }
  if (!PRICING_MODELS.has(e.pricingModel)) return 'pricing_model must be cpm, cpc, cpa, flat or empty';
  if (e.price !== '' && !DECIMAL.test(e.price)) return 'price must be a decimal string such as "2.50"';
  if (e.currency !== '' && !CURRENCY.test(e.currency)) return 'currency must be an ISO 4217 code such as "USD"';
  if (e.conversionValue !== '' && !DECIMAL.test(e.conversionValue)) return 'conversion_value must be a decimal string';
  return demandProblem(e);
}

const OUTCOMES = new Set([BidOutcome.BID, BidOutcome.NO_BID, BidOutcome.TIMEOUT, BidOutcome.ERROR, BidOutcome.BELOW_FLOOR, BidOutcome.REJECTED]);
const MAX_BIDS = 200;

/** The programmatic demand members: the winner's endpoint and share on any event, the bids on an AUCTION event. */
function demandProblem(e: ServingEvent): string | undefined {
  for (const f of ['demandEndpoint', 'demandSource'] as const) {
    if (!Number.isSafeInteger(e[f]) || e[f] < 0) return `${f === 'demandEndpoint' ? 'demand_endpoint' : 'demand_source'} must be an id or 0`;
  }
  if (e.revenueShare !== '' && (!DECIMAL.test(e.revenueShare) || Number(e.revenueShare) > 100)) return 'revenue_share must be a decimal percent from 0 to 100';
  if (e.kind !== EventKind.AUCTION) return e.bids.length ? 'bids are only for AUCTION events' : undefined;
  if (e.bids.length > MAX_BIDS) return `an AUCTION event holds at most ${MAX_BIDS} bids`;
  let winners = 0;
  for (const [i, b] of e.bids.entries()) {
    if (!Number.isSafeInteger(b.demandEndpoint) || b.demandEndpoint < 1) return `bids[${i}].demand_endpoint must be a positive id`;
    if (!Number.isSafeInteger(b.demandSource) || b.demandSource < 0) return `bids[${i}].demand_source must be an id or 0`;
    if (!OUTCOMES.has(b.outcome)) return `bids[${i}].outcome must be BID, NO_BID, TIMEOUT, ERROR, BELOW_FLOOR or REJECTED`;
    if (b.cpm !== '' && !DECIMAL.test(b.cpm)) return `bids[${i}].cpm must be a decimal string such as "2.50"`;
    if (b.outcome === BidOutcome.BID && b.cpm === '') return `bids[${i}].cpm is required with outcome BID`;
    if (b.won && b.outcome !== BidOutcome.BID) return `bids[${i}] won without a valid bid (outcome BID)`;
    if (b.won) winners++;
    if (!Number.isSafeInteger(b.latencyMs) || b.latencyMs < 0) return `bids[${i}].latency_ms must be 0 or more`;
    if (b.deal.length > MAX_ID_LENGTH) return `bids[${i}].deal must be at most ${MAX_ID_LENGTH} characters`;
  }
  if (winners > 1) return 'an auction has at most one winning bid';
  return undefined;
}

/** The parameter errors of a batch (each names the event's index), empty when every event is valid. */
export function batchProblems(events: ServingEvent[]): ParameterError[] {
  const problems: ParameterError[] = [];
  events.forEach((e, i) => {
    const p = eventProblem(e);
    if (p) problems.push({ field: `events[${i}]`, type: 'invalid_value', message: `events[${i}]: ${p}.` } as ParameterError);
  });
  return problems;
}

/** The rollup tables and the width of their buckets. */
export const ROLLUP_TABLES = { event_rollups: "date_bin('15 minutes', occurred_at, timestamptz '2000-01-01 00:00:00+00')", event_rollups_hourly: "date_trunc('hour', occurred_at)" } as const;
export type RollupTable = keyof typeof ROLLUP_TABLES;
/** The video event rollups, at the same widths. */
export const VIDEO_ROLLUP_TABLES = { video_rollups: ROLLUP_TABLES.event_rollups, video_rollups_hourly: ROLLUP_TABLES.event_rollups_hourly } as const;
export type VideoRollupTable = keyof typeof VIDEO_ROLLUP_TABLES;
/** The programmatic demand rollups, at the same widths. */
export const DEMAND_ROLLUP_TABLES = { demand_rollups: ROLLUP_TABLES.event_rollups, demand_rollups_hourly: ROLLUP_TABLES.event_rollups_hourly } as const;
export type DemandRollupTable = keyof typeof DEMAND_ROLLUP_TABLES;
/** Kind VIDEO: counted in the video rollups only. Kind AUCTION: in the demand rollups only. */
const VIDEO_KIND = EventKind.VIDEO;
const AUCTION_KIND = EventKind.AUCTION;

// The raw insert keeps only events not yet stored, and the bids of the new AUCTION events among them.
// It inserts in id order, so two batches holding the same events in different orders cannot each wait
// for an id the other inserted first (deadlocks, retried five times at most: the likely cause of an
// INTERNAL answer to six such batches at once seen in one CI run).
// the rollup upserts add exactly those rows, in one statement (one transaction). Rollup rows are
// upserted in key order so concurrent batches (two replicas) lock them in the same order and never
// deadlock on each other; every batch is this one statement, so it locks the tables (named in this
// order) and runs the upserts in one fixed order too.
// Money per event: cpm costs price/1000 per impression, cpc price per click, cpa price per conversion;
// flat pricing is paid per period rather than per event, so its events carry no amount.
const INGEST_SQL = `
with input as (
  select * from unnest(
    ?::text[], ?::smallint[], ?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
    ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
    ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::boolean[], ?::text[],
    ?::bigint[], ?::bigint[], ?::text[]
  ) as u(id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
         ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
         country, region, city, pricing_model, price, currency, conversion_value, conversion_reference, geo_target_id, vast, video_event,
         demand_endpoint_id, demand_source_id, revenue_share)
), bid_input as (
  select * from unnest(?::text[], ?::int[], ?::bigint[], ?::bigint[], ?::smallint[], ?::text[], ?::boolean[], ?::int[], ?::text[], ?::int[])
    as b(event_id, position, demand_endpoint_id, demand_source_id, outcome, cpm, won, latency_ms, deal, loss_reason)
), ins as (
  insert into serving_events (id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
    ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
    country, region, city, pricing_model, price, currency, amount, conversion_value, conversion_reference, geo_target_id, vast, video_event,
    demand_endpoint_id, demand_source_id, revenue_share)
  select id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
    ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
    country, region, city, pricing_model, nullif(price, '')::numeric, currency,
    case
      when pricing_model = 'cpm' and kind = 2 then coalesce(nullif(price, '')::numeric, 0) / 1000
      when pricing_model = 'cpc' and kind = 3 then coalesce(nullif(price, '')::numeric, 0)
      when pricing_model = 'cpa' and kind = 4 then coalesce(nullif(price, '')::numeric, 0)
      else 0
    end,
    nullif(conversion_value, '')::numeric, conversion_reference, geo_target_id, vast, video_event,
    demand_endpoint_id, demand_source_id, nullif(revenue_share, '')::numeric
  from input
  order by id
  on conflict (id) do nothing
  returning id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id,
    placement_id, assignment_id, channel_id, currency, amount, vast, video_event, price, demand_endpoint_id, demand_source_id, revenue_share
), new_bids as (
  insert into auction_bids (event_id, position, demand_endpoint_id, demand_source_id, outcome, cpm, won, latency_ms, deal, loss_reason)
  select b.event_id, b.position, b.demand_endpoint_id, b.demand_source_id, b.outcome, nullif(b.cpm, '')::numeric, b.won, b.latency_ms, b.deal, b.loss_reason
  from bid_input b join ins on ins.id = b.event_id
  order by b.event_id, b.position
  returning *
), up as (
  ${rollupUpsert('ins', 'event_rollups')}
  returning 1
), up_hourly as (
  ${rollupUpsert('ins', 'event_rollups_hourly')}
  returning 1
), up_video as (
  ${videoRollupUpsert('ins', 'video_rollups')}
  returning 1
), up_video_hourly as (
  ${videoRollupUpsert('ins', 'video_rollups_hourly')}
  returning 1
), up_demand as (
  ${demandRollupUpsert('ins', 'new_bids', 'demand_rollups')}
  returning 1
), up_demand_hourly as (
  ${demandRollupUpsert('ins', 'new_bids', 'demand_rollups_hourly')}
  returning 1
)
select (select count(*) from ins)::int as stored`;

/**
 * The rollup upsert of the event rows in `source` (a CTE or table expression with the serving_events
 * columns) into one rollup table. Shared by ingestion and the rebuild, so both count the same way.
 * Video and auction events add nothing here (no rows of zeros): their own rollups count them.
 */
export function rollupUpsert(source: string, table: RollupTable): string {
  return `insert into ${table} as r (bucket, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id,
    placement_id, assignment_id, channel_id, currency, vast, responses, impressions, clicks, conversions, amount)
  select ${ROLLUP_TABLES[table]} as bucket, account_id, publisher_id,
    zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency, vast,
    count(*) filter (where kind = 1), count(*) filter (where kind = 2), count(*) filter (where kind = 3),
    count(*) filter (where kind = 4), coalesce(sum(amount), 0)
  from ${source}
  where kind not in (${VIDEO_KIND}, ${AUCTION_KIND})
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
  order by 2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
  on conflict (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency, vast)
  do update set responses = r.responses + excluded.responses, impressions = r.impressions + excluded.impressions,
    clicks = r.clicks + excluded.clicks, conversions = r.conversions + excluded.conversions, amount = r.amount + excluded.amount`;
}

/** The same for video events: one count per bucket, ids and event name, upserted in key order. */
export function videoRollupUpsert(source: string, table: VideoRollupTable): string {
  return `insert into ${table} as r (bucket, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id,
    placement_id, assignment_id, channel_id, event, count)
  select ${VIDEO_ROLLUP_TABLES[table]} as bucket, account_id, publisher_id,
    zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, video_event, count(*)
  from ${source}
  where kind = ${VIDEO_KIND}
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
  order by 2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11
  on conflict (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, event)
  do update set count = r.count + excluded.count`;
}

/**
 * The demand rollup upsert: every bid of the AUCTION events in `events` (their rows in `bids`, with
 * auction_bids' columns) under its endpoint and source, and every IMPRESSION a demand endpoint won under
 * the winner (a view, its clearing CPM / 1000 as revenue, and the publisher's share of that). Bids carry
 * the auction event's currency, USD when it names none (programmatic demand bids in USD).
 */
export function demandRollupUpsert(events: string, bids: string, table: DemandRollupTable): string {
  return `insert into ${table} as r (bucket, account_id, publisher_id, zone_id, vast, demand_source_id, demand_endpoint_id, currency,
    requests, bids, empty_responses, timeouts, errors, below_floor, rejected, wins, bid_total, bid_min, bid_max, clearing_total,
    views, revenue, publisher_revenue)
  select ${DEMAND_ROLLUP_TABLES[table]} as bucket, account_id, publisher_id, zone_id, vast, demand_source_id, demand_endpoint_id, currency,
    count(outcome), count(*) filter (where outcome = ${BidOutcome.BID}), count(*) filter (where outcome = ${BidOutcome.NO_BID}),
    count(*) filter (where outcome = ${BidOutcome.TIMEOUT}), count(*) filter (where outcome = ${BidOutcome.ERROR}),
    count(*) filter (where outcome = ${BidOutcome.BELOW_FLOOR}), count(*) filter (where outcome = ${BidOutcome.REJECTED}),
    count(*) filter (where won), coalesce(sum(cpm) filter (where outcome = ${BidOutcome.BID}), 0),
    min(cpm) filter (where outcome = ${BidOutcome.BID}), max(cpm) filter (where outcome = ${BidOutcome.BID}),
    coalesce(sum(cpm) filter (where won), 0), sum(view), coalesce(sum(revenue), 0), coalesce(sum(publisher_revenue), 0)
  from (
    select e.occurred_at, e.account_id, e.publisher_id, e.zone_id, e.vast, b.demand_source_id, b.demand_endpoint_id,
      coalesce(nullif(e.currency, ''), 'USD') as currency, b.outcome, b.cpm, b.won, 0 as view, null::numeric as revenue, null::numeric as publisher_revenue
    from ${events} e join ${bids} b on b.event_id = e.id
    where e.kind = ${AUCTION_KIND}
    union all
    select e.occurred_at, e.account_id, e.publisher_id, e.zone_id, e.vast, e.demand_source_id, e.demand_endpoint_id,
      coalesce(nullif(e.currency, ''), 'USD'), null, null, false, 1, coalesce(e.price, 0) / 1000,
      coalesce(e.price, 0) / 1000 * coalesce(e.revenue_share, 0) / 100
    from ${events} e
    where e.kind = ${EventKind.IMPRESSION} and e.demand_endpoint_id <> 0
  ) d
  group by 1, 2, 3, 4, 5, 6, 7, 8
  order by 2, 1, 3, 4, 5, 6, 7, 8
  on conflict (account_id, bucket, publisher_id, zone_id, vast, demand_source_id, demand_endpoint_id, currency)
  do update set requests = r.requests + excluded.requests, bids = r.bids + excluded.bids,
    empty_responses = r.empty_responses + excluded.empty_responses, timeouts = r.timeouts + excluded.timeouts,
    errors = r.errors + excluded.errors, below_floor = r.below_floor + excluded.below_floor, rejected = r.rejected + excluded.rejected,
    wins = r.wins + excluded.wins, bid_total = r.bid_total + excluded.bid_total,
    bid_min = least(r.bid_min, excluded.bid_min), bid_max = greatest(r.bid_max, excluded.bid_max),
    clearing_total = r.clearing_total + excluded.clearing_total, views = r.views + excluded.views,
    revenue = r.revenue + excluded.revenue, publisher_revenue = r.publisher_revenue + excluded.publisher_revenue`;
}

const DEADLOCK = '40P01';
const SERIALIZATION = '40001';

/**
 * Stores a batch of valid events: new ones go into the raw table and the rollups in one statement,
 * events already stored are ignored. Answers how many were new. Duplicates within the batch collapse.
 */
export async function recordEvents(knex: Knex, events: ServingEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const seen = new Set<string>();
  const unique = events.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
  const col = <T>(f: (e: ServingEvent) => T) => unique.map(f);
  const bindings = [
    col((e) => e.id), col((e) => e.kind), col((e) => new Date(e.occurredAt).toISOString()), col((e) => e.account),
    col((e) => e.publisher), col((e) => e.zone), col((e) => e.advertiser), col((e) => e.campaign), col((e) => e.adItem),
    col((e) => e.placement), col((e) => e.assignment), col((e) => e.channel), col((e) => e.decision), col((e) => e.visitor),
    col((e) => e.ip), col((e) => e.userAgent), col((e) => e.referrer), col((e) => e.country), col((e) => e.region),
    col((e) => e.city), col((e) => e.pricingModel), col((e) => e.price), col((e) => e.currency),
    col((e) => e.conversionValue), col((e) => e.conversionReference), col((e) => e.geoTarget), col((e) => e.vast),
    col((e) => (e.kind === EventKind.VIDEO ? e.videoEvent : '')),
    col((e) => e.demandEndpoint), col((e) => e.demandSource), col((e) => e.revenueShare),
  ];
  const bids = unique.flatMap((e) => (e.kind === EventKind.AUCTION ? e.bids.map((b, position) => ({ id: e.id, position, ...b })) : []));
  const bid = <T>(f: (b: (typeof bids)[number]) => T) => bids.map(f);
  bindings.push(
    bid((b) => b.id), bid((b) => b.position), bid((b) => b.demandEndpoint), bid((b) => b.demandSource), bid((b) => b.outcome),
    bid((b) => b.cpm), bid((b) => b.won), bid((b) => b.latencyMs), bid((b) => b.deal), bid((b) => b.lossReason),
  );
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await knex.raw(INGEST_SQL, bindings);
      return Number((res as { rows: { stored: number }[] }).rows[0].stored);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code === DEADLOCK || code === SERIALIZATION) && attempt < 5) {
        log.warn('event batch retried', { code, attempt });
        await new Promise((r) => setTimeout(r, 20 * (attempt + 1) + Math.random() * 30));
        continue;
      }
      throw err;
    }
  }
}
