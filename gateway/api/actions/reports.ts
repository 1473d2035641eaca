import type { Request, Response, Router } from 'express';
import {
  type AuctionBid, type AuctionReport, type AuctionRow, type AuctionTotals, type BreakdownRow, type DemandRow, type DemandSourceReport, type DemandTotals, type EventDetail, type Money, type Report, type ReportQuery, type Totals, VideoTotals,
} from '../../../proto/gen/adserver/reporting/v1/reports';
import type { RequestContext } from '../../context';
import type { ParameterError } from '../../../services/shared/catalog';
import { QueryValues } from '../../../services/shared/query-values';
import { formatTimestamp } from '../../../services/shared/db';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller, backend } from '../backend';
import { reports } from '../../../services/shared/grpc/clients';
import { parseListParams, queryFlag } from '../params';
import { documentedRoute, namedQuery, type JsonSchema, type RouteDoc } from '../route-docs';

/**
 * The reports of the reference API (display and VAST reports, geo summaries, click and conversion
 * details, event logs), answered by reporting's typed Reports API. The gateway only collects the
 * query (refusing names it does not know, so a typo is never silently ignored); reporting checks the
 * values and names the parameter it refuses.
 */

const REPORT_PARAMS = [
  'type', 'period', 'preset', 'from', 'to', 'timezone', 'summary', 'details', 'breakdown', 'financials', 'advanced_conversion_data',
  'publishers', 'zones', 'advertisers', 'campaigns', 'ad-items', 'textads', 'popups',
  'exclude_publisher_ad_items', 'exclude_campaign_ad_items', 'exclude_channel_stats', 'require_channel_stats',
];
const VAST_REPORT_PARAMS = REPORT_PARAMS.filter((p) => !['advanced_conversion_data', 'textads', 'popups', 'exclude_publisher_ad_items', 'exclude_campaign_ad_items', 'exclude_channel_stats', 'require_channel_stats'].includes(p));
const GEO_PARAMS = ['type', 'preset', 'from', 'to', 'timezone', 'publishers', 'zones', 'advertisers', 'campaigns', 'ad-items', 'textads', 'popups'];
const DETAIL_PARAMS = ['filter_type', 'filter_ids', 'vast', 'preset', 'from', 'to', 'timezone', 'limit', 'offset'];
const EVENT_LOG_PARAMS = ['log_type', 'from', 'to'];
const AUCTION_PARAMS = ['type', 'period', 'preset', 'from', 'to', 'timezone', 'summary', 'details', 'breakdown', 'publishers', 'zones', 'advertisers', 'campaigns', 'placements', 'ad-items'];
const DEMAND_PARAMS = ['type', 'period', 'preset', 'from', 'to', 'timezone', 'summary', 'details', 'breakdown', 'publishers', 'zones', 'vastZones', 'endpoints'];

/** The query as single strings ('' when absent), refusing unknown names and repeated values. */
const REPORT_FLAGS = new Set(['summary', 'details', 'breakdown', 'financials', 'vast', 'exclude_publisher_ad_items', 'exclude_campaign_ad_items', 'exclude_channel_stats', 'require_channel_stats', 'advanced_conversion_data', 'textads', 'popups']);

export function queryOf(req: Request, allowed: string[]): Record<string, string> {
  const errors: ParameterError[] = [];
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.query)) {
    if (!allowed.includes(name)) errors.push({ field: name, type: 'unknown_field', message: `'${name.slice(0, 64)}' is not a parameter of ${req.path}; known: ${allowed.join(', ')}.` });
    else if (typeof value !== 'string') errors.push({ field: name, type: 'invalid_value', message: `'${name}' must be given once, as a plain value.` });
    // The one flag rule of the API: a bare `?summary` means true (reporting reads '' as "not given").
    else out[name] = value === '' && REPORT_FLAGS.has(name) ? 'true' : value;
  }
  if (errors.length) throw apiErrors.invalid(errors);
  for (const name of allowed) out[name] ??= '';
  return out;
}

/** The report query as reporting's typed message: flags and id lists read here, once. */
export function reportQueryOf(q: Record<string, string>, vast: boolean, byPlacement = false): ReportQuery {
  const v = new QueryValues();
  const query: ReportQuery = {
    type: q.type, period: q.period ?? '', preset: q.preset, from: q.from, to: q.to, timezone: q.timezone,
    summary: v.flag(q.summary ?? '', 'summary'), details: v.flag(q.details ?? '', 'details'),
    breakdown: v.flag(q.breakdown ?? '', 'breakdown'), financials: v.flag(q.financials ?? '', 'financials'),
    publishers: v.ids(q.publishers, 'publishers'), zones: v.ids(q.zones, 'zones'), advertisers: v.ids(q.advertisers, 'advertisers'),
    campaigns: v.ids(q.campaigns, 'campaigns'), adItems: v.ids(q['ad-items'], 'ad-items'),
    excludePublisherAdItems: v.flag(q.exclude_publisher_ad_items ?? '', 'exclude_publisher_ad_items') ?? false,
    excludeCampaignAdItems: v.flag(q.exclude_campaign_ad_items ?? '', 'exclude_campaign_ad_items') ?? false,
    excludeChannelStats: v.flag(q.exclude_channel_stats ?? '', 'exclude_channel_stats') ?? false,
    requireChannelStats: v.flag(q.require_channel_stats ?? '', 'require_channel_stats') ?? false,
    vast, byPlacement, placements: v.ids(q.placements ?? '', 'placements'),
    textads: v.ids(q.textads ?? '', 'textads'), popups: v.ids(q.popups ?? '', 'popups'),
  };
  if (v.errors.length) throw apiErrors.invalid(v.errors);
  return query;
}

/** The reference's financials, as reporting computed them: money crosses gRPC as decimal text, the API shows numbers. */
function financialsOut(t: Totals) {
  const f = t.financials ?? { cost: [], payout: [], revenue: [], eCpm: [], eCpc: [], eCpa: [] };
  const out = (list: Money[]) => list.map((m) => ({ cur: m.currency, amount: Number(m.amount) }));
  return { cost: out(f.cost), payout: out(f.payout), revenue: out(f.revenue), e_cpm: out(f.eCpm), e_cpc: out(f.eCpc), e_cpa: out(f.eCpa) };
}

const NO_TOTALS: Totals = { responses: 0, impressions: 0, clicks: 0, conversions: 0, cost: [], financials: undefined, video: undefined };

function countsOut(t: Totals | undefined, financials: boolean) {
  const x = t ?? NO_TOTALS;
  return { responses: x.responses, impressions: x.impressions, clicks: x.clicks, conversions: x.conversions, ...(financials ? { financials: financialsOut(x) } : {}) };
}

/** The reference's vast_report_dataset: requests are the responses, and the players' tracking events. */
function vastCountsOut(t: Totals | undefined, financials: boolean) {
  const x = t ?? NO_TOTALS;
  const v = x.video ?? VideoTotals.fromPartial({});
  return {
    requests: x.responses, impressions: x.impressions, clicks: x.clicks,
    start: v.start, first_quartile: v.firstQuartile, midpoint: v.midpoint, third_quartile: v.thirdQuartile, complete: v.complete,
    mute: v.mute, unmute: v.unmute, pause: v.pause, rewind: v.rewind, resume: v.resume, fullscreen: v.fullscreen, exit_fullscreen: v.exitFullscreen,
    expand: v.expand, collapse: v.collapse, accept_invitation_linear: v.acceptInvitationLinear, close_linear: v.closeLinear, skip: v.skip,
    companion_views_1: v.companionView1, companion_views_2: v.companionView2, companion_views_3: v.companionView3, companion_views_4: v.companionView4, companion_views_5: v.companionView5,
    companion_clicks_1: v.companionClick1, companion_clicks_2: v.companionClick2, companion_clicks_3: v.companionClick3, companion_clicks_4: v.companionClick4, companion_clicks_5: v.companionClick5,
    // A linear ad's creativeView; a non-linear's is tracked apart.
    linear_creative_view: v.creativeView, non_linear_creative_view: v.nonLinearCreativeView,
    conversions: x.conversions,
    // Extension (not in the reference): complete / impressions, 0..1 to four places, 0 without impressions.
    completion_rate: v.completionRate,
    ...(financials ? { financials: financialsOut(x) } : {}),
  };
}

type CountsOut = (t: Totals | undefined, financials: boolean) => object;

function breakdownOut(b: BreakdownRow, financials: boolean, counts: CountsOut = countsOut) {
  return {
    placement: b.placement || null,
    ad_item: { type: 'ad_item', id: b.adItem },
    campaign: b.campaign ? { type: 'campaign', id: b.campaign } : null,
    zone: b.zone ? { type: 'standard_zone', id: b.zone } : null,
    ...(b.assignment ? { campaign_assignment: b.assignment } : {}),
    ...counts(b.totals, financials),
  };
}

/** A display report, or with `vast` the reference's vast_report_example_get (same entities, VAST datasets). */
export function reportOut(r: Report, url: string, vast = false) {
  const counts: CountsOut = vast ? vastCountsOut : countsOut;
  const breakdown = (rows: BreakdownRow[]) => (r.breakdown ? { breakdown: rows.map((b) => breakdownOut(b, r.financials, counts)) } : {});
  return {
    object: vast ? 'vast-report' : 'report',
    url,
    data: r.data.map((e) => ({
      type: r.type,
      id: e.id,
      ...(r.summary ? { summary: { ...counts(e.summary, r.financials), ...breakdown(e.breakdown) } } : {}),
      ...(r.details ? { details: e.details.map((d) => ({ start_date: d.startDate, ...counts(d.totals, r.financials), ...breakdown(d.breakdown) })) } : {}),
    })),
    meta: { type: r.type, period: r.period, from: r.from, to: r.to, timezone: r.timezone },
  };
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/**
 * The reference's VAST 4 report (vast4_report_example_get): one dataset per period and placement with
 * any event. The reference gives money as single numbers: they are the row's one currency (named in
 * the extension `currency`), null when a row mixes currencies (its `financials` extension, as in the
 * VAST report, keeps every currency). Rollups hold cost, not the placement's rate, so cpm/cpc/cpa are
 * the effective rates. What serving cannot tell apart (linear or non-linear clicks, VAST 4's `loaded`)
 * is counted on the linear ad or left 0.
 */
export function vast4ReportOut(r: Report, url: string) {
  const data = r.data.flatMap((e) => e.details.map((d) => ({ placement: e.id, date: d.startDate, t: d.totals ?? NO_TOTALS })))
    .filter(({ t }) => t.responses + t.impressions + t.clicks + t.conversions > 0 || Object.entries(t.video ?? {}).some(([k, n]) => k !== 'completionRate' && n > 0))
    .sort((a, b) => a.date.localeCompare(b.date) || a.placement - b.placement)
    .map(({ placement, date, t }) => {
      const v = t.video ?? VideoTotals.fromPartial({});
      const companionViews = v.companionView1 + v.companionView2 + v.companionView3 + v.companionView4 + v.companionView5;
      const companionClicks = v.companionClick1 + v.companionClick2 + v.companionClick3 + v.companionClick4 + v.companionClick5;
      const f = t.financials;
      const one = (list: Money[] | undefined) => (list?.length === 1 ? Number(list[0].amount) : list?.length ? null : 0);
      return {
        date, placement_id: placement,
        clicks: t.clicks + companionClicks, impressions: t.impressions, conversions: t.conversions, requests: t.responses,
        // Percent of impressions clicked, to two places.
        ctr: t.impressions ? round((100 * (t.clicks + companionClicks)) / t.impressions, 2) : 0,
        linear: {
          loaded: 0, start: v.start, first_quartile: v.firstQuartile, midpoint: v.midpoint, third_quartile: v.thirdQuartile, complete: v.complete, progress: v.progress,
          clicks: Math.max(0, t.clicks - v.nonLinearClick), conversions: t.conversions, mute: v.mute, unmute: v.unmute, pause: v.pause, resume: v.resume, skip: v.skip,
          player_expand: v.expand + v.fullscreen, player_collapse: v.collapse + v.exitFullscreen, not_used: 0, close_linear: v.closeLinear,
        },
        non_linear: {
          creative_view: v.nonLinearCreativeView, clicks: v.nonLinearClick, conversions: 0, ad_expand: 0, ad_collapse: 0, minimize: 0, close: v.close,
          mute: 0, unmute: 0, pause: 0, resume: 0, skip: 0, player_expand: 0, player_collapse: 0, not_used: 0,
        },
        companion: { creative_view: companionViews, clicks: companionClicks, conversions: 0 },
        revenue: one(f?.revenue), payout: one(f?.payout), cost: one(f?.cost),
        cpm: one(f?.eCpm), cpc: one(f?.eCpc), cpa: one(f?.eCpa), e_cpm: one(f?.eCpm), e_cpc: one(f?.eCpc), e_cpa: one(f?.eCpa),
        // Extensions: the money's currency (null: none or several), the completion rate, and money per currency.
        currency: t.cost.length === 1 ? t.cost[0].currency : null,
        completion_rate: v.completionRate,
        ...(r.financials ? { financials: financialsOut(t) } : {}),
      };
    });
  return { object: 'vast-report', url, data, meta: { type: r.type, period: r.period, from: r.from, to: r.to, timezone: r.timezone } };
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
const countryName = (code: string) => {
  if (!code) return null;
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
};

function detailOut(kind: 'click' | 'conversion', d: EventDetail) {
  const common = { zone: d.zone || null, campaign: d.campaign || null, advertisement: d.adItem ? { type: 'ad_item', id: d.adItem } : null };
  const place = { ip: d.ip, country: countryName(d.country), region: d.region || null, city: d.city || null };
  if (kind === 'click') {
    return {
      ...common, click_date: formatTimestamp(new Date(Date.parse(d.occurredAt))), clicked_at: d.occurredAt, ...place, country_code: d.country || null,
      custom_param_1: null, custom_param_2: null, custom_param_3: null, custom_param_4: null, custom_param_5: null,
    };
  }
  return {
    ...common, conversion_date: d.occurredAt, impression_date: null, attribution: null, referrer: d.referrer || null, ...place,
    value: d.conversionValue ? Number(d.conversionValue) : null, transaction_id: d.conversionReference || null, product_id: null,
  };
}

/**
 * The account's auction placements (display or VAST) with their CPM bids, and the zone type each one's
 * own zone has, read from inventory page by page.
 */
async function auctionPlacements(ctx: RequestContext, vast: boolean): Promise<{ bids: AuctionBid[]; zoneTypes: Map<number, string> }> {
  const bids: AuctionBid[] = [];
  const zoneTypes = new Map<number, string>();
  const filters = [{ field: 'serve_method', equals: 'auction', anyOf: [] }];
  for (let offset = 0; ; offset += 1000) {
    const page = await backend.list(ctx, { kinds: [vast ? 'vast_placement' : 'placement'], limit: 1000, offset, filters });
    for (const p of page.items) {
      const a = p.attributes ?? {};
      const cpm = (a.cost as { cpm?: number | null } | null)?.cpm;
      bids.push({ placement: p.id, cpm: typeof cpm === 'number' ? cpm.toFixed(6) : '' });
      const zone = a.zone as { id: number; type: string } | null;
      if (zone && typeof zone === 'object') zoneTypes.set(zone.id, zone.type);
    }
    if (!page.hasMore) return { bids, zoneTypes };
  }
}

/** The reference's base_auction_data: counts, the deprecated single-currency numbers, and financials per currency. */
function auctionCountsOut(t: AuctionTotals | undefined) {
  const list = (m: Money[] = []) => m.map((v) => ({ cur: v.currency, amount: Number(v.amount) }));
  // The deprecated numbers hold the one currency's amount: 0 with none, null when several are mixed.
  const one = (m: Money[] = []) => (m.length === 1 ? Number(m[0].amount) : m.length ? null : 0);
  return {
    // Serving records only the placement an auction chose, not the others that bid: how many auctions a
    // placement took part in has no source here, so it is null rather than a count that could read as 0.
    requests: null,
    wins: t?.wins ?? 0,
    views: t?.views ?? 0,
    revenue: one(t?.revenue), publisherRevenue: one(t?.publisherRevenue), minCPM: one(t?.minCpm), maxCPM: one(t?.maxCpm), totalCPM: one(t?.totalCpm),
    financials: { revenue: list(t?.revenue), publisherRevenue: list(t?.publisherRevenue), minCPM: list(t?.minCpm), maxCPM: list(t?.maxCpm), totalCPM: list(t?.totalCpm) },
  };
}

function auctionReportOut(r: AuctionReport, url: string, vast: boolean, zoneTypes: Map<number, string>) {
  // A channel placement's zone is not its own: its type is the reference's default, a standard zone.
  const zoneType = (id: number) => (vast ? 'vast_zone' : zoneTypes.get(id) ?? 'standard_zone');
  const row = (b: AuctionRow) => ({ zone: b.zone ? { type: zoneType(b.zone), id: b.zone } : null, placement: b.placement, publisher: b.publisher || null, ...auctionCountsOut(b.totals) });
  const breakdown = (rows: AuctionRow[]) => (r.breakdown ? { breakdown: rows.map(row) } : {});
  return {
    object: vast ? 'vast_auction_placement_report' : 'auction_placement_report',
    url,
    data: r.data.map((e) => ({
      type: r.type,
      id: e.id,
      ...(r.summary ? { summary: { ...auctionCountsOut(e.summary), ...breakdown(e.breakdown) } } : {}),
      ...(r.details ? { details: e.details.map((d) => ({ start_date: d.startDate, ...auctionCountsOut(d.totals), ...breakdown(d.breakdown) })) } : {}),
    })),
    meta: { type: r.type, period: r.period, from: r.from, to: r.to, timezone: r.timezone },
  };
}

/** The reference's demand_source_summary (base_auction_data with the responses), and this API's extensions. */
function demandCountsOut(t: DemandTotals | undefined) {
  const list = (m: Money[] = []) => m.map((v) => ({ cur: v.currency, amount: Number(v.amount) }));
  // As in the auction placements report: the one currency's amount, 0 with none, null when several are mixed.
  const one = (m: Money[] = []) => (m.length === 1 ? Number(m[0].amount) : m.length ? null : 0);
  return {
    requests: t?.requests ?? 0,
    wins: t?.wins ?? 0,
    views: t?.views ?? 0,
    revenue: one(t?.revenue), publisherRevenue: one(t?.publisherRevenue), minCPM: one(t?.minCpm), maxCPM: one(t?.maxCpm), totalCPM: one(t?.totalCpm),
    financials: {
      revenue: list(t?.revenue), publisherRevenue: list(t?.publisherRevenue), minCPM: list(t?.minCpm), maxCPM: list(t?.maxCpm), totalCPM: list(t?.totalCpm),
      // Extensions: the averages per currency.
      averageBid: list(t?.averageBid), averageClearingPrice: list(t?.averageClearingPrice),
    },
    emptyResponses: t?.emptyResponses ?? 0,
    filledResponses: t?.filledResponses ?? 0,
    // Extensions (not in the reference): how the endpoints answered, the win rate and the averages.
    bids: t?.bids ?? 0,
    timeouts: t?.timeouts ?? 0,
    errors: t?.errors ?? 0,
    belowFloor: t?.belowFloor ?? 0,
    rejected: t?.rejected ?? 0,
    winRate: t?.winRate ?? 0,
    averageBid: one(t?.averageBid),
    averageClearingPrice: one(t?.averageClearingPrice),
  };
}

function demandReportOut(r: DemandSourceReport, url: string) {
  const row = (b: DemandRow) => ({
    zone: b.zone ? { type: b.vast ? 'vast_zone' : 'standard_zone', id: b.zone } : null,
    publisher: b.publisher || null,
    // Extensions: the demand source and endpoint of the row.
    demandSource: b.demandSource || null,
    endpoint: b.endpoint,
    ...demandCountsOut(b.totals),
  });
  const breakdown = (rows: DemandRow[]) => (r.breakdown ? { breakdown: rows.map(row) } : {});
  return {
    object: 'demand_source_report',
    url,
    data: r.data.map((e) => ({
      type: r.type,
      id: e.id,
      ...(r.summary ? { summary: { ...demandCountsOut(e.summary), ...breakdown(e.breakdown) } } : {}),
      ...(r.details ? { details: e.details.map((d) => ({ start_date: d.startDate, ...demandCountsOut(d.totals), ...breakdown(d.breakdown) })) } : {}),
    })),
    meta: { type: r.type, period: r.period, from: r.from, to: r.to, timezone: r.timezone },
  };
}

const MONEY_LIST: JsonSchema = {
  type: 'array',
  items: { type: 'object', properties: { cur: { type: 'string', description: 'ISO 4217 currency.' }, amount: { type: 'number' } }, required: ['cur', 'amount'] },
};
const ONE_AMOUNT = (what: string): JsonSchema => ({ type: ['number', 'null'], description: `${what} in the one currency of the row (0 with none, null when several are mixed); see financials.` });
const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const DEMAND_COUNTS: Record<string, JsonSchema> = {
  requests: count('Requests to demand endpoints (each endpoint asked in an auction).'),
  wins: count('Auctions won by a bid.'),
  views: count('Impressions of the decisions won.'),
  revenue: ONE_AMOUNT('Revenue: the clearing CPM / 1000 of every impression won'),
  publisherRevenue: ONE_AMOUNT("The publishers' share of the revenue"),
  minCPM: ONE_AMOUNT('The smallest valid bid (CPM)'),
  maxCPM: ONE_AMOUNT('The largest valid bid (CPM)'),
  totalCPM: ONE_AMOUNT("The sum of the winning bids' CPMs"),
  financials: {
    type: 'object',
    description: 'Money per currency.',
    properties: Object.fromEntries(['revenue', 'publisherRevenue', 'minCPM', 'maxCPM', 'totalCPM', 'averageBid', 'averageClearingPrice'].map((k) => [k, MONEY_LIST])),
  },
  emptyResponses: count('Answers without a bid.'),
  filledResponses: count('Answers with a bid: valid, under a floor, or refused by the auction.'),
  bids: count('Valid bids (they took part in the auction).'),
  timeouts: count('Endpoints that did not answer within the zone\'s budget.'),
  errors: count('Transport errors, HTTP errors and answers that are not OpenRTB.'),
  belowFloor: count('Bids under a floor.'),
  rejected: count("Bids the auction's rules refused (deal, seat, currency, no markup)."),
  winRate: { type: 'number', minimum: 0, maximum: 1, description: 'wins / requests, to four places (0 without requests).' },
  averageBid: ONE_AMOUNT('The average valid bid (CPM)'),
  averageClearingPrice: ONE_AMOUNT('totalCPM / wins'),
};
const DEMAND_BREAKDOWN: JsonSchema = {
  type: 'object',
  properties: {
    zone: { type: ['object', 'null'], properties: { type: { type: 'string', enum: ['standard_zone', 'vast_zone'] }, id: { type: 'integer' } } },
    publisher: { type: ['integer', 'null'] },
    demandSource: { type: ['integer', 'null'] },
    endpoint: { type: 'integer' },
    ...DEMAND_COUNTS,
  },
};
const DEMAND_SUMMARY: JsonSchema = { type: 'object', properties: { ...DEMAND_COUNTS, breakdown: { type: 'array', items: DEMAND_BREAKDOWN } } };
const DEMAND_REPORT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    object: { const: 'demand_source_report' },
    url: { type: 'string' },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          id: { type: 'integer', description: 'The account (overview), publisher, zone, demand source or endpoint.' },
          summary: DEMAND_SUMMARY,
          details: { type: 'array', items: { ...DEMAND_SUMMARY, properties: { start_date: { type: 'string', format: 'date-time' }, ...(DEMAND_SUMMARY.properties as object) } } },
        },
      },
    },
    meta: { type: 'object', properties: { type: { type: 'string' }, period: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, timezone: { type: 'string' } } },
  },
};
const IDS = (what: string) => ({ type: 'string' as const, description: `Only ${what}: a comma-separated list of ids.` });
const DEMAND_QUERY: NonNullable<RouteDoc['query']> = {
  type: { type: 'string', enum: ['overview', 'publisher', 'zone', 'demand_source', 'endpoint'], description: 'What the rows are: the account, publishers, zones, demand sources or demand endpoints. Required.' },
  period: { type: 'string', enum: ['day', 'week', 'month', 'year'], description: 'The length of the details\' periods. Required.' },
  preset: { type: 'string', description: 'A named range (today, yesterday, last-7-days...); or give from and to.' },
  from: { type: 'string', description: 'ISO 8601 start, with an offset.' },
  to: { type: 'string', description: 'ISO 8601 end (exclusive), with the same offset.' },
  timezone: { type: 'string', description: 'IANA time zone of the presets and periods (default UTC).' },
  summary: { type: 'boolean', description: 'Show the summary (default true).' },
  details: { type: 'boolean', description: 'Show one row per period (default false).' },
  breakdown: { type: 'boolean', description: 'Break rows down by zone, publisher, demand source and endpoint (default false).' },
  publishers: IDS('these publishers'),
  zones: IDS('these standard zones'),
  vastZones: IDS('these VAST zones'),
  endpoints: IDS('these demand endpoints'),
};

export function reportActions(router: Router): void {
  const getReport = (vast: boolean) => async (req: Request, res: Response) => {
    const q = queryOf(req, vast ? VAST_REPORT_PARAMS : REPORT_PARAMS);
    const report = await asCaller(ctxOf(res), (metadata) => reports.getReport(reportQueryOf(q, vast), { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json(reportOut(report, req.path, vast));
  };
  // The VAST 4 report lists periods by placement: reporting groups by placement, with details.
  const getVast4Report = async (req: Request, res: Response) => {
    const query = { ...reportQueryOf(queryOf(req, VAST_REPORT_PARAMS), true, true), details: true, breakdown: false };
    const report = await asCaller(ctxOf(res), (metadata) => reports.getReport(query, { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json(vast4ReportOut(report, req.path));
  };
  documentedRoute(router, { method: 'get', path: '/v2/reports', summary: 'A delivery report (impressions, clicks, conversions, optionally money) over a period', tag: 'reports', query: namedQuery(REPORT_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, getReport(false));
  documentedRoute(router, { method: 'get', path: '/v2/vast-reports', summary: 'A VAST delivery report over a period', tag: 'reports', query: namedQuery(VAST_REPORT_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, getReport(true));
  documentedRoute(router, { method: 'get', path: '/v2/vast/reports', summary: 'A VAST 4 delivery report: per period and placement', tag: 'reports', query: namedQuery(VAST_REPORT_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, getVast4Report);

  const geo = (vast: boolean) => async (req: Request, res: Response) => {
    const q = queryOf(req, GEO_PARAMS);
    const r = await asCaller(ctxOf(res), (metadata) => reports.getGeoSummary(reportQueryOf(q, vast), { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json({
      object: 'geo_summary_report',
      url: req.path,
      data: r.data.map((e) => ({
        type: r.type,
        id: e.id,
        details: Object.fromEntries(e.details.map((d) => [d.country, { impressions: d.totals!.impressions, clicks: d.totals!.clicks, conversions: d.totals!.conversions }])),
      })),
      meta: { type: r.type, from: r.from, to: r.to, timezone: r.timezone },
    });
  };
  const auction = (vast: boolean) => async (req: Request, res: Response) => {
    const ctx = ctxOf(res);
    const query = reportQueryOf(queryOf(req, AUCTION_PARAMS), vast);
    const { bids, zoneTypes } = await auctionPlacements(ctx, vast);
    const r = await asCaller(ctx, (metadata) => reports.getAuctionPlacements({ query, bids }, { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json(auctionReportOut(r, req.path, vast, zoneTypes));
  };
  documentedRoute(router, { method: 'get', path: '/v2/reports/auction-placements', summary: 'Wins, views, revenue and CPM bids of the auction placements over a period', tag: 'reports', query: namedQuery(AUCTION_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, auction(false));
  documentedRoute(router, { method: 'get', path: '/v2/vast-reports/auction-placements', summary: 'Wins, views, revenue and CPM bids of the VAST auction placements over a period', tag: 'reports', query: namedQuery(AUCTION_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, auction(true));

  documentedRoute(router, {
    method: 'get',
    path: '/v2/reports/demand-source',
    summary: 'Programmatic demand over a period: requests to demand endpoints, their answers, wins, views and revenue',
    description: 'Display and VAST auctions alike. `zones` names standard zones and `vastZones` VAST zones: given either, only those zones count.',
    tag: 'reports',
    query: DEMAND_QUERY,
    response: { schema: DEMAND_REPORT_SCHEMA },
  }, async (req, res) => {
    const q = queryOf(req, DEMAND_PARAMS);
    const values = new QueryValues();
    const vastZones = values.ids(q.vastZones, 'vastZones');
    const endpoints = values.ids(q.endpoints, 'endpoints');
    const query = reportQueryOf({ ...q, advertisers: '', campaigns: '', 'ad-items': '' }, false);
    if (values.errors.length) throw apiErrors.invalid(values.errors);
    const r = await asCaller(ctxOf(res), (metadata) => reports.getDemandSourceReport({ query, vastZones, endpoints }, { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json(demandReportOut(r, req.path));
  });

  documentedRoute(router, { method: 'get', path: '/v2/reports/geo-summary-report', summary: 'Delivery by country', tag: 'reports', query: namedQuery(GEO_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, geo(false));
  documentedRoute(router, { method: 'get', path: '/v2/vast-reports/geo-summary-report', summary: 'VAST delivery by country', tag: 'reports', query: namedQuery(GEO_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, geo(true));

  const details = (kind: 'click' | 'conversion') => async (req: Request, res: Response) => {
    const q = queryOf(req, DETAIL_PARAMS);
    const { limit, offset } = parseListParams(req);
    const vast = queryFlag(req, 'vast') ?? false;
    const values = new QueryValues();
    const filterIds = values.ids(q.filter_ids, 'filter_ids');
    if (values.errors.length) throw apiErrors.invalid(values.errors);
    const page = await asCaller(ctxOf(res), (metadata) => reports.listEventDetails({
      kind, filterType: q.filter_type, filterIds, preset: q.preset, from: q.from, to: q.to, timezone: q.timezone, limit, offset,
      vast,
    }, { idempotent: true, timeoutMs: 30_000, metadata }));
    res.json({
      object: `${kind}_detail_report`,
      url: req.path,
      data: page.data.map((d) => detailOut(kind, d)),
      meta: { limit, offset, has_more: page.hasMore, from: page.from, to: page.to, timezone: page.timezone },
    });
  };
  documentedRoute(router, { method: 'get', path: '/v2/reports/click-details', summary: 'Single click events', tag: 'reports', query: namedQuery(DETAIL_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, details('click'));
  documentedRoute(router, { method: 'get', path: '/v2/reports/conversion-details', summary: 'Single conversion events', tag: 'reports', query: namedQuery(DETAIL_PARAMS, REPORT_FLAGS), response: { schema: { type: 'object' } } }, details('conversion'));

  documentedRoute(router, {
    method: 'get',
    path: '/v2/event-logs',
    summary: 'The days for which an event log can be fetched, with their URLs',
    tag: 'event-logs',
    query: namedQuery(EVENT_LOG_PARAMS),
    response: { schema: { type: 'object', properties: { object: { const: 'event_logs' }, url: { type: 'string' }, data: { type: 'object', additionalProperties: { type: 'string' } } } } },
  }, async (req, res) => {
    const q = queryOf(req, EVENT_LOG_PARAMS);
    const out = await asCaller(ctxOf(res), (metadata) => reports.exportEventLog({ logType: q.log_type, from: q.from, to: q.to, listOnly: true }, { idempotent: true, metadata }));
    res.json({
      object: 'event_logs',
      url: req.path,
      data: Object.fromEntries(out.days.map((d) => [d, `/v2/event-logs/${q.log_type}/${d}.csv`])),
      meta: { total: out.days.length },
    });
  });
  /** One UTC day of one log type as CSV (each row carries its hour), fetched with the same key. */
  documentedRoute(router, {
    method: 'get',
    path: '/v2/event-logs/:logType/:file',
    summary: 'One UTC day of one event log as CSV',
    tag: 'event-logs',
    pathParams: { logType: 'The log type.', file: 'The day, as YYYY-MM-DD.csv.' },
    response: { schema: { type: 'string' } },
    contentType: 'text/csv',
  }, async (req, res) => {
    queryOf(req, []);
    const m = /^(\d{4}-\d{2}-\d{2})\.csv$/.exec(req.params.file as string);
    if (!m) throw apiErrors.notFound(`No event log ${String(req.params.file).slice(0, 64)}; event logs are named YYYY-MM-DD.csv.`);
    const out = await asCaller(ctxOf(res), (metadata) => reports.exportEventLog({ logType: String(req.params.logType), from: m[1], to: m[1], listOnly: false }, { idempotent: true, timeoutMs: 60_000, metadata }));
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    res.setHeader('Content-Disposition', `attachment; filename="${req.params.logType}-${m[1]}.csv"`);
    res.send(out.csv);
  });

  for (const p of ['/v2/reports', '/v2/vast-reports', '/v2/vast/reports', '/v2/reports/auction-placements', '/v2/vast-reports/auction-placements', '/v2/reports/demand-source', '/v2/reports/geo-summary-report', '/v2/vast-reports/geo-summary-report',
    '/v2/reports/click-details', '/v2/reports/conversion-details', '/v2/event-logs', '/v2/event-logs/:logType/:file']) router.all(p, methodNotSupported);
}
