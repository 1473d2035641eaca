import type { Knex } from 'knex';
import type { Json, ParameterError } from '../shared/catalog';
import {
  ForecastsService, type CompetingPlacement, type Forecast, type ForecastDay, type ForecastQuery,
} from '../../proto/gen/adserver/inventory/v1/forecasts';
import type { TrafficHour } from '../../proto/gen/adserver/reporting/v1/reports';
import { fail } from '../shared/errors';
import { reports } from '../shared/grpc/clients';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import { tenantFromMetadata, tenantMetadata, type Tenant } from '../shared/tenant';
import { parseTimestamp } from '../shared/timezones';
import { refId, refKind } from '../targeting/rule';

/**
 * Display and VAST forecasts. The traffic of the zones comes from reporting's hourly rollups (decisions
 * of the zones' medium made there): a day-of-week × hour-of-day profile over the last 28 days, each
 * slot the mean of its occurrences since the zones' first traffic. A proposed placement gets, day by day, what that profile
 * projects less what competing placements of higher tiers take (up to their day caps and remaining
 * quotas), then its weight's share among the weighted placements of its own tier, up to its own caps.
 * Every forecast is backtested on the account's own data: last week forecast from the three weeks
 * before it, against what was served.
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const TIERS = ['sponsorship', 'standard', 'network', 'bulk', 'house'];
const MAX_DAYS = 366;

/** The mean traffic of each of the week's 168 hours (Sunday 00:00 UTC first) over [from, to). */
export function weeklyProfile(hours: { at: number; n: number }[], from: number, to: number): number[] {
  const sum = new Array<number>(168).fill(0);
  const seen = new Array<number>(168).fill(0);
  const first = hours.find((h) => h.at >= from && h.at < to && h.n > 0)?.at;
  if (first === undefined) return sum;
  for (let t = first; t < to; t += HOUR) seen[slot(t)]++;
  for (const h of hours) if (h.at >= first && h.at < to) sum[slot(h.at)] += h.n;
  return sum.map((s, i) => (seen[i] ? s / seen[i] : 0));
}

const slot = (t: number) => new Date(t).getUTCDay() * 24 + new Date(t).getUTCHours();

/** The traffic a profile projects for the UTC day starting at `day`. */
export function projectDay(profile: number[], day: number): number {
  const base = new Date(day).getUTCDay() * 24;
  let n = 0;
  for (let h = 0; h < 24; h++) n += profile[base + h];
  return n;
}

/**
 * Forecasts the 7 days before `today` from the 21 before them and compares with what they served:
 * the mean absolute percentage error over days that served anything, or -1 without enough history.
 */
export function backtest(hours: { at: number; n: number }[], today: number): { mape: number; days: number } {
  const testFrom = today - 7 * DAY;
  const profile = weeklyProfile(hours, today - 28 * DAY, testFrom);
  if (profile.every((v) => v === 0)) return { mape: -1, days: 0 };
  let errors = 0;
  let days = 0;
  for (let d = testFrom; d < today; d += DAY) {
    const actual = hours.filter((h) => h.at >= d && h.at < d + DAY).reduce((s, h) => s + h.n, 0);
    if (actual <= 0) continue;
    errors += Math.abs(projectDay(profile, d) - actual) / actual;
    days++;
  }
  return days ? { mape: errors / days, days } : { mape: -1, days: 0 };
}

interface Row {
  id: number;
  kind: string;
  attributes: Record<string, Json>;
}

const num = (v: Json | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const at = (v: Json | undefined) => parseTimestamp(typeof v === 'string' ? v : '');

/** A date parameter (YYYY-MM-DD, or a date-time whose date is read) as the UTC day's start. */
function dayOf(v: string, field: string, errors: ParameterError[]): number {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ].*)?$/.exec(v);
  const t = m ? Date.parse(`${m[1]}T00:00:00Z`) : NaN;
  if (Number.isNaN(t)) errors.push({ field, type: v ? 'invalid_value' : 'missing_field', message: `'${field}' must be a date (YYYY-MM-DD).` });
  return t;
}

/**
 * Where display and VAST inventory differ for a forecast: the kinds read, and where a placement keeps
 * its weight, day cap, tier and geo target (a VAST placement's weight, cap and geo target are its
 * schedule's; its channel's tier applies unless it opts out).
 */
export interface Medium {
  vast: boolean;
  zone: { kind: string; title: string };
  channel: { kind: string; title: string };
  /** The channel-zone assignment kind and its two reference fields. */
  assignment: { kind: string; channel: string; zone: string };
  placement: string;
  schedule: string;
  campaign: string;
  adItems: readonly string[];
  /** The zone a placement names, if it is one of this medium's zones (0 otherwise). */
  zoneOf(placement: Record<string, Json>): number;
  weight(placement: Record<string, Json>, schedule: Record<string, Json>): number;
  /** Views a day the placement may take (0: no cap). */
  dailyCap(placement: Record<string, Json>, schedule: Record<string, Json>): number;
  tier(placement: Record<string, Json>, channelPriority: string | undefined): string;
  geoTarget(placement: Record<string, Json>, schedule: Record<string, Json>): number;
}

const views = (type: Json | undefined, limit: Json | undefined) => (type === 'views' && num(limit) > 0 ? num(limit) : 0);

export const DISPLAY: Medium = {
  vast: false,
  zone: { kind: 'standard_zone', title: 'standard zone' },
  channel: { kind: 'channel', title: 'channel' },
  assignment: { kind: 'channel_zone_assignment', channel: 'channel', zone: 'zone' },
  placement: 'placement',
  schedule: 'schedule',
  campaign: 'standard_campaign',
  adItems: ['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item'],
  zoneOf: (a) => (refKind(a.zone) === 'standard_zone' ? refId(a.zone) : 0),
  weight: (a) => num(a.weight) || 1,
  dailyCap: (a, s) => views(s.day_cap_type, s.day_cap_limit) || views(a.day_cap_type, a.day_cap_limit),
  tier: (a, channel) => channel ?? String(a.priority ?? 'standard'),
  geoTarget: (a) => refId(a.geo_target),
};

export const VAST: Medium = {
  vast: true,
  zone: { kind: 'vast_zone', title: 'VAST zone' },
  channel: { kind: 'vast_channel', title: 'VAST channel' },
  assignment: { kind: 'vast_channel_zone_assignment', channel: 'vast_channel', zone: 'vast_zone' },
  placement: 'vast_placement',
  schedule: 'vast_schedule',
  campaign: 'vast_campaign',
  adItems: ['vast_ad_item'],
  zoneOf: (a) => refId(a.zone),
  weight: (_a, s) => num(s.weight) || 1,
  dailyCap: (_a, s) => views(s.day_cap_type, s.day_cap_views_limit),
  tier: (a, channel) => (channel !== undefined && a.use_channel_priority !== false ? channel : String(a.priority ?? 'standard')),
  geoTarget: (_a, s) => refId(s.geo_target),
};

/** A competitor's draw on the zones: its tier and what limits its take per day. */
interface Competitor {
  out: CompetingPlacement;
  tier: number;
  smooth: boolean;
  auction: boolean;
  dailyCap: number;
  budget: number;
  windowFrom: number;
  windowTo: number;
}

export async function forecast(knex: Knex, tenant: Tenant, q: ForecastQuery, medium: Medium, now = Date.now()): Promise<Forecast> {
  const errors: ParameterError[] = [];
  if ((q.zone > 0) === (q.channel > 0)) errors.push({ field: q.channel ? 'channel_id' : 'zone_id', type: 'missing_field', message: 'Name the zone (zone_id) or the channel (channel_id) to forecast.' });
  const tier = TIERS.indexOf(q.priority);
  if (tier < 0) errors.push({ field: 'priority', type: q.priority ? 'invalid_value' : 'missing_field', message: `'priority' must be one of ${TIERS.join(', ')}.` });
  if (!['default', 'smooth'].includes(q.deliveryPacing)) errors.push({ field: 'delivery_pacing', type: q.deliveryPacing ? 'invalid_value' : 'missing_field', message: "'delivery_pacing' must be default or smooth." });
  if (q.serveMethod && !['weight', 'auction'].includes(q.serveMethod)) errors.push({ field: 'serve_method', type: 'invalid_value', message: "'serve_method' must be weight or auction." });
  if (q.weight < 0 || q.quotaLifetime < 0 || q.quotaDaily < 0 || q.cpm < 0) errors.push({ field: 'weight', type: 'invalid_value', message: "'weight', 'cpm', 'quota_lifetime' and 'quota_daily' must not be negative." });
  const start = dayOf(q.startDate, 'start_date', errors);
  const end = dayOf(q.endDate, 'end_date', errors);
  if (!Number.isNaN(start) && !Number.isNaN(end) && (end < start || (end - start) / DAY >= MAX_DAYS)) {
    errors.push({ field: 'end_date', type: 'invalid_value', message: `'end_date' must be on or after 'start_date', at most ${MAX_DAYS} days later.` });
  }
  if (errors.length) throw fail.invalid(errors);

  const rows = (await knex('resources')
    .where({ account_id: tenant.accountId, mode: tenant.mode })
    .whereNull('archived_at')
    .whereIn('kind', [medium.zone.kind, medium.channel.kind, medium.assignment.kind, medium.placement, medium.schedule, medium.campaign, ...medium.adItems])
    .select('id', 'kind', 'attributes')) as Row[];
  const byKind = (kind: string) => rows.filter((r) => r.kind === kind);
  const find = (kind: string, id: number) => rows.find((r) => r.kind === kind && Number(r.id) === id);
  const links = byKind(medium.assignment.kind).map((l) => ({ channel: refId(l.attributes[medium.assignment.channel]), zone: refId(l.attributes[medium.assignment.zone]) }));
  let zones: number[];
  if (q.zone) {
    if (!find(medium.zone.kind, q.zone)) throw fail.notFound(medium.zone.title, q.zone);
    zones = [q.zone];
  } else {
    if (!find(medium.channel.kind, q.channel)) throw fail.notFound(medium.channel.title, q.channel);
    zones = links.filter((l) => l.channel === q.channel).map((l) => l.zone);
  }
  // Channels that serve in these zones: their placements compete too.
  const channels = new Set(links.filter((l) => zones.includes(l.zone)).map((l) => l.channel));

  const today = Math.floor(now / DAY) * DAY;
  const reasons: string[] = [];
  const history = zones.length
    ? await reports.getTraffic({ zones, from: new Date(today - 28 * DAY).toISOString(), to: new Date(Math.floor(now / HOUR) * HOUR).toISOString(), vast: medium.vast }, { metadata: tenantMetadata(tenant), idempotent: true, timeoutMs: 10_000 })
    : { hours: [] as TrafficHour[] };
  const hours = history.hours.map((h) => ({ at: Date.parse(h.hour), n: h.responses }));
  const historyDays = new Set(hours.filter((h) => h.n > 0).map((h) => Math.floor(h.at / DAY))).size;
  const none: Forecast = { confidence: 'low', confidenceReasons: [], hasHistory: false, total: 0, days: [], competing: [], historyDays: 0, backtestMape: -1, backtestDays: 0 };
  if (!zones.length) return { ...none, confidenceReasons: ['The channel is assigned to no zone: it has no traffic to forecast.'] };
  if (!historyDays) return { ...none, confidenceReasons: ['These zones have served nothing in the last 28 days: there is no history to forecast from.'] };

  const profile = weeklyProfile(hours, today - 28 * DAY, Math.floor(now / HOUR) * HOUR);
  const test = backtest(hours, today);
  if (historyDays < 28) reasons.push(`Only ${historyDays} of the last 28 days have traffic.`);
  if (test.mape < 0) reasons.push('Too little history to backtest the forecast (it needs traffic in the last 7 days and the 21 before).');
  else if (test.mape > 0.2) reasons.push(`Backtest: last week was forecast with a mean error of ${Math.round(test.mape * 100)} %.`);
  if (q.geoTarget || q.platformTarget || q.dataKeyTarget) reasons.push('Targets are not modelled: the projection assumes every request matches them.');

  // Competitors: placements of these zones and of the channels serving them, of this tier or higher,
  // whose schedule overlaps the forecast.
  const placements = byKind(medium.placement).filter((p) => {
    const a = p.attributes;
    if (a.active === false) return false;
    return zones.includes(medium.zoneOf(a)) || channels.has(refId(a.channel));
  });
  const competitors: Competitor[] = [];
  const quotaPlacements: { placement: number; schedule: number }[] = [];
  for (const p of placements) {
    const a = p.attributes;
    const channel = refId(a.channel);
    const priority = medium.tier(a, channel ? String(find(medium.channel.kind, channel)?.attributes.priority ?? 'standard') : undefined);
    const t = TIERS.indexOf(priority);
    if (t < 0 || t > tier) continue;
    const sched = find(medium.schedule, refId(a.schedule))?.attributes ?? {};
    const from = at(sched.start_date);
    const to = at(sched.end_date);
    if ((!Number.isNaN(to) && to < start) || (!Number.isNaN(from) && from >= end + DAY)) continue;
    const quota = views(sched.quota_type, sched.quota_lifetime);
    const daily = medium.dailyCap(a, sched);
    if (quota) quotaPlacements.push({ placement: Number(p.id), schedule: refId(a.schedule) });
    const adKind = refKind(a.advertisement);
    const ad = find(adKind, refId(a.advertisement));
    const cost = (a.cost && typeof a.cost === 'object' && !Array.isArray(a.cost) ? a.cost : {}) as Record<string, Json>;
    competitors.push({
      tier: t,
      smooth: sched.delivery_method === 'smooth' && a.serve_method !== 'auction' && quota > 0 && !Number.isNaN(to),
      auction: a.serve_method === 'auction',
      dailyCap: daily || Infinity,
      budget: quota || Infinity,
      windowFrom: Number.isNaN(from) ? -Infinity : from,
      windowTo: Number.isNaN(to) ? Infinity : to,
      out: {
        type: adKind === medium.campaign ? 'campaign' : 'ad_item', id: refId(a.advertisement), name: String(ad?.attributes.name ?? ''), placement: Number(p.id),
        zone: channel ? 0 : medium.zoneOf(a), channel, startAt: Number.isNaN(from) ? '' : new Date(from).toISOString(), endAt: Number.isNaN(to) ? '' : new Date(to).toISOString(), projectedImpressions: 0, priority, deliveryPacing: String(sched.delivery_method ?? 'default'),
        serveMethod: String(a.serve_method ?? 'weight'), weight: medium.weight(a, sched), cpm: num(cost.cpm), quotaLifetime: quota, quotaDaily: daily,
        hasPlatformTarget: !!refId(a.platform_target), hasGeoTarget: !!medium.geoTarget(a, sched),
        platformTarget: refId(a.platform_target), geoTarget: medium.geoTarget(a, sched),
      },
    });
  }
  // What quota-limited competitors have delivered already: their remaining budget.
  if (quotaPlacements.length) {
    const delivered = await reports.getDelivery(
      { account: tenant.accountId, scopes: quotaPlacements.map((x) => ({ key: String(x.placement), placements: [x.placement], since: '' })) },
      { metadata: tenantMetadata(tenant), idempotent: true, timeoutMs: 10_000 },
    );
    for (const d of delivered.counts) {
      const c = competitors.find((x) => x.out.placement === Number(d.key));
      if (c && c.budget !== Infinity) c.budget = Math.max(0, c.budget - d.impressions);
    }
  }
  competitors.sort((a, b) => a.tier - b.tier || Number(b.smooth) - Number(a.smooth) || b.out.weight - a.out.weight);

  const ownWeight = q.weight || 1;
  const ownSmooth = q.deliveryPacing === 'smooth' && q.serveMethod !== 'auction' && q.quotaLifetime > 0;
  const spanDays = Math.round((end - start) / DAY) + 1;
  let ownBudget = q.quotaLifetime || Infinity;
  const days: ForecastDay[] = [];
  for (let d = start; d <= end; d += DAY) {
    let left = projectDay(profile, d);
    const runs = (c: Competitor) => c.windowFrom < d + DAY && c.windowTo >= d;
    const take = (c: Competitor, most: number) => {
      const n = Math.max(0, Math.min(most, c.dailyCap, c.budget));
      c.budget -= n;
      c.out.projectedImpressions += Math.round(n);
      return n;
    };
    // Higher tiers first, each up to its limits.
    for (const c of competitors) if (c.tier < tier && runs(c)) left -= take(c, left);
    const same = competitors.filter((c) => c.tier === tier && runs(c));
    // Within the tier: smooth placements on their pace, then weight, then auction.
    for (const c of same.filter((x) => x.smooth)) left -= take(c, Math.min(left, c.budget / Math.max(1, Math.round((c.windowTo - d) / DAY))));
    let own = 0;
    const ownCap = Math.min(q.quotaDaily || Infinity, ownBudget, ownSmooth ? q.quotaLifetime / spanDays : Infinity);
    if (ownSmooth) {
      own = Math.min(left, ownCap);
      left -= own;
    }
    const weighted = same.filter((x) => !x.smooth && !x.auction);
    if (!ownSmooth && q.serveMethod !== 'auction') {
      const total = ownWeight + weighted.reduce((s, c) => s + c.out.weight, 0);
      own = Math.min(ownCap, (left * ownWeight) / total);
      let rest = left - own;
      for (const c of weighted) rest -= take(c, (left * c.out.weight) / total);
      left = Math.max(0, rest);
    } else {
      for (const c of weighted) left -= take(c, left);
    }
    if (!ownSmooth && q.serveMethod === 'auction') {
      own = Math.min(ownCap, left);
      left -= own;
    }
    own = Math.max(0, Math.floor(own));
    ownBudget -= own;
    days.push({ date: new Date(d).toISOString().slice(0, 10), impressions: own });
  }
  const mape = test.mape;
  const confidence = historyDays >= 21 && mape >= 0 && mape <= 0.2 ? 'high' : historyDays >= 7 && (mape < 0 || mape <= 0.5) ? 'moderate' : 'low';
  return {
    confidence,
    confidenceReasons: reasons,
    hasHistory: true,
    total: days.reduce((s, x) => s + x.impressions, 0),
    days,
    competing: competitors.map((c) => c.out),
    historyDays,
    backtestMape: mape,
    backtestDays: test.days,
  };
}

export function forecastsBinding(knex: Knex): ServiceBinding {
  return implement('inventory.Forecasts', ForecastsService, {
    forecastDisplay: async (req, call) => forecast(knex, tenantFromMetadata(call.metadata), req, DISPLAY),
    forecastVast: async (req, call) => forecast(knex, tenantFromMetadata(call.metadata), req, VAST),
  });
}
