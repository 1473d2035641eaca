import type { Knex } from 'knex';
import { EventKind, type ServingEvent } from '../../proto/gen/adserver/reporting/v1/events';
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
  if (![EventKind.RESPONSE, EventKind.IMPRESSION, EventKind.CLICK, EventKind.CONVERSION, EventKind.VIDEO].includes(e.kind)) return 'kind must be RESPONSE, IMPRESSION, CLICK, CONVERSION or VIDEO';
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
/** Kind VIDEO: counted in the video rollups only. */
const VIDEO_KIND = EventKind.VIDEO;

// The raw insert keeps only events not yet stored; the rollup upsert adds exactly those rows, in one
// statement (one transaction). Rollup rows are upserted in key order so concurrent batches (two
// replicas) lock them in the same order and never deadlock on each other; every batch is this one
// statement, so it locks the tables (named in this order) and runs the upserts in one fixed order too.
// Money per event: cpm costs price/1000 per impression, cpc price per click, cpa price per conversion;
// flat pricing is paid per period rather than per event, so its events carry no amount.
const INGEST_SQL = `
with input as (
  select * from unnest(
    ?::text[], ?::smallint[], ?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[],
    ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
    ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::boolean[], ?::text[]
  ) as u(id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
         ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
         country, region, city, pricing_model, price, currency, conversion_value, conversion_reference, geo_target_id, vast, video_event)
), ins as (
  insert into serving_events (id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
    ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
    country, region, city, pricing_model, price, currency, amount, conversion_value, conversion_reference, geo_target_id, vast, video_event)
  select id, kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id,
    ad_item_id, placement_id, assignment_id, channel_id, decision, visitor, ip, user_agent, referrer,
    country, region, city, pricing_model, nullif(price, '')::numeric, currency,
    case
      when pricing_model = 'cpm' and kind = 2 then coalesce(nullif(price, '')::numeric, 0) / 1000
      when pricing_model = 'cpc' and kind = 3 then coalesce(nullif(price, '')::numeric, 0)
      when pricing_model = 'cpa' and kind = 4 then coalesce(nullif(price, '')::numeric, 0)
      else 0
    end,
    nullif(conversion_value, '')::numeric, conversion_reference, geo_target_id, vast, video_event
  from input
  on conflict (id) do nothing
  returning kind, occurred_at, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id,
    placement_id, assignment_id, channel_id, currency, amount, vast, video_event
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
)
select (select count(*) from ins)::int as stored`;

/**
 * The rollup upsert of the event rows in `source` (a CTE or table expression with the serving_events
 * columns) into one rollup table. Shared by ingestion and the rebuild, so both count the same way.
 * Video events add nothing here (no rows of zeros): the video rollups count them.
 */
export function rollupUpsert(source: string, table: RollupTable): string {
  return `insert into ${table} as r (bucket, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id,
    placement_id, assignment_id, channel_id, currency, vast, responses, impressions, clicks, conversions, amount)
  select ${ROLLUP_TABLES[table]} as bucket, account_id, publisher_id,
    zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency, vast,
    count(*) filter (where kind = 1), count(*) filter (where kind = 2), count(*) filter (where kind = 3),
    count(*) filter (where kind = 4), coalesce(sum(amount), 0)
  from ${source}
  where kind <> ${VIDEO_KIND}
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
  ];
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
