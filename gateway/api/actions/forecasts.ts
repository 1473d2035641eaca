import type { Request, Response, Router } from 'express';
import type { CompetingPlacement, Forecast, ForecastQuery } from '../../../proto/gen/adserver/inventory/v1/forecasts';
import type { ParameterError } from '../../../services/shared/catalog';
import { forecasts, reports } from '../../../services/shared/grpc/clients';
import { QueryValues } from '../../../services/shared/query-values';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller } from '../backend';
import { documentedRoute, namedQuery } from '../route-docs';
import { queryOf } from './reports';

/**
 * Forecasts and platform estimates (the reference's `/v2/reports/forecast/display`, `…/channel`,
 * `/v2/reports/placement-forecast` and `/v2/reports/display-platform-estimate`): inventory forecasts
 * from reporting's history, reporting estimates platforms from its events; the gateway reads the
 * query and shapes the answer.
 */

const FORECAST_PARAMS = ['priority', 'delivery_pacing', 'serve_method', 'weight', 'cpm', 'start_date', 'end_date', 'quota_lifetime', 'quota_daily', 'geo_target', 'platform_target', 'data_key_target'];

/** A non-negative integer or number parameter ('' when absent: 0). */
function numberOf(raw: string, field: string, errors: ParameterError[], integer = true): number {
  if (raw === '') return 0;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isSafeInteger(n))) {
    errors.push({ field, type: 'invalid_value', message: `'${field}' must be a non-negative ${integer ? 'integer' : 'number'}.` });
    return 0;
  }
  return n;
}

function forecastQueryOf(q: Record<string, string>, target: { zone?: string; channel?: string }): ForecastQuery {
  const errors: ParameterError[] = [];
  const query: ForecastQuery = {
    zone: target.zone !== undefined ? numberOf(target.zone, 'zone_id', errors) : 0,
    channel: target.channel !== undefined ? numberOf(target.channel, 'channel_id', errors) : 0,
    priority: q.priority, deliveryPacing: q.delivery_pacing, serveMethod: q.serve_method,
    weight: numberOf(q.weight, 'weight', errors), cpm: numberOf(q.cpm, 'cpm', errors, false),
    startDate: q.start_date, endDate: q.end_date,
    quotaLifetime: numberOf(q.quota_lifetime, 'quota_lifetime', errors), quotaDaily: numberOf(q.quota_daily, 'quota_daily', errors),
    geoTarget: numberOf(q.geo_target, 'geo_target', errors), platformTarget: numberOf(q.platform_target, 'platform_target', errors),
    dataKeyTarget: q.data_key_target,
  };
  if (errors.length) throw apiErrors.invalid(errors);
  return query;
}

function competitorOut(c: CompetingPlacement) {
  return {
    id: c.id, placement_id: c.placement, name: c.name, type: c.type, zone_id: c.zone || null, channel_id: c.channel || null,
    start_at: c.startAt || null, end_at: c.endAt || null, projected_impressions: c.projectedImpressions, priority: c.priority,
    delivery_pacing: c.deliveryPacing, serve_method: c.serveMethod, weight: c.weight, cpm: c.cpm, quota_lifetime: c.quotaLifetime,
    quota_daily: c.quotaDaily, has_platform_target: c.hasPlatformTarget, has_geo_target: c.hasGeoTarget,
    has_ad_item_targets: false, has_ad_item_schedule: false,
  };
}

/** What the forecast rests on: days of history and its backtest error (extensions of the reference's shape). */
const basis = (f: Forecast) => ({ history_days: f.historyDays, backtest: f.backtestMape >= 0 ? { mape: Math.round(f.backtestMape * 10_000) / 10_000, days: f.backtestDays } : null });

function displayForecastOut(f: Forecast) {
  return {
    confidence: f.confidence,
    confidence_reasons: f.confidenceReasons.map((reason) => ({ reason })),
    // No history: no projection, rather than a zero that reads as "nothing will serve".
    impressions_projected: f.hasHistory ? { total: f.total, daily_breakdown: f.days.map((d) => ({ date: d.date, impressions: d.impressions })) } : { total: null, daily_breakdown: [] },
    competing_ads: { campaigns: f.competing.filter((c) => c.type === 'campaign').map(competitorOut), ad_items: f.competing.filter((c) => c.type === 'ad_item').map(competitorOut) },
    ...basis(f),
  };
}

export function forecastActions(router: Router): void {
  const display = (channel: boolean) => async (req: Request, res: Response) => {
    const q = queryOf(req, [channel ? 'channel_id' : 'zone_id', ...FORECAST_PARAMS]);
    const query = forecastQueryOf(q, channel ? { channel: q.channel_id } : { zone: q.zone_id });
    const f = await asCaller(ctxOf(res), (metadata) => forecasts.forecastDisplay(query, { metadata, idempotent: true, timeoutMs: 30_000 }));
    res.json({ object: channel ? 'display_channel_forecast' : 'display_forecast', url: req.path, data: displayForecastOut(f) });
  };
  documentedRoute(router, { method: 'get', path: '/v2/reports/forecast/display', summary: 'Impressions a proposed placement would get in a zone, day by day, with its competitors', tag: 'reports', query: namedQuery(['zone_id', ...FORECAST_PARAMS]), response: { schema: { type: 'object' } } }, display(false));
  documentedRoute(router, { method: 'get', path: '/v2/reports/forecast/display/channel', summary: 'Impressions a proposed placement would get on a channel, day by day, with its competitors', tag: 'reports', query: namedQuery(['channel_id', ...FORECAST_PARAMS]), response: { schema: { type: 'object' } } }, display(true));

  // The older form: one entry per zone of `zone_id` (a comma-separated list).
  documentedRoute(router, { method: 'get', path: '/v2/reports/placement-forecast', summary: 'Projected impressions of a proposed placement per zone (the older forecast form)', tag: 'reports', query: namedQuery(['zone_id', ...FORECAST_PARAMS]), response: { schema: { type: 'object' } } }, async (req, res) => {
    const q = queryOf(req, ['zone_id', ...FORECAST_PARAMS]);
    const values = new QueryValues();
    const zones = values.ids(q.zone_id, 'zone_id');
    if (!values.errors.length && !zones.length) values.errors.push({ field: 'zone_id', type: 'missing_field', message: "'zone_id' must name the zone (or zones, comma-separated) to forecast." });
    if (values.errors.length) throw apiErrors.invalid(values.errors);
    const data = [];
    for (const zone of zones) {
      const f = await asCaller(ctxOf(res), (metadata) => forecasts.forecastDisplay(forecastQueryOf(q, { zone: String(zone) }), { metadata, idempotent: true, timeoutMs: 30_000 }));
      const dated = (c: CompetingPlacement) => ({ id: c.id, name: c.name, startDate: c.startAt || null, endDate: c.endAt || null });
      data.push({
        confidence: f.confidence === 'high' ? 'high' : 'low',
        confidence_reasons: f.confidenceReasons.map((reason) => ({ reason })),
        impressions_projected: f.hasHistory ? f.total : null,
        competing_placements: [{ campaigns: f.competing.filter((c) => c.type === 'campaign').map(dated), banners: f.competing.filter((c) => c.type === 'ad_item').map(dated) }],
        details: f.days.map((d) => ({ date: d.date, impressions_projected: d.impressions })),
        ...basis(f),
      });
    }
    res.json({ object: 'placement_forecast', url: req.path, data });
  });

  documentedRoute(router, { method: 'get', path: '/v2/reports/display-platform-estimate', summary: 'Shares of platforms, browsers and operating systems among the zones\u2019 responses of the last 28 days', tag: 'reports', query: namedQuery(['zone_ids']), response: { schema: { type: 'object' } } }, async (req, res) => {
    const q = queryOf(req, ['zone_ids']);
    const values = new QueryValues();
    const zones = values.ids(q.zone_ids, 'zone_ids');
    if (!values.errors.length && !zones.length) values.errors.push({ field: 'zone_ids', type: 'missing_field', message: "'zone_ids' must name one or more zones, comma-separated." });
    if (values.errors.length) throw apiErrors.invalid(values.errors);
    const est = await asCaller(ctxOf(res), (metadata) => reports.getPlatformEstimate({ zones, days: 28 }, { metadata, idempotent: true, timeoutMs: 30_000 }));
    res.json({
      object: 'platform_estimator',
      url: req.path,
      data: est.zones.map((z) => ({
        [String(z.zone)]: [{
          platform: [z.formFactors],
          browser: [{ desktop: [z.desktopBrowsers], mobile: [z.mobileBrowsers] }],
          os: [{ desktop: [z.desktopOs], mobile: [z.mobileOs] }],
        }],
      })),
      // How many responses each zone's shares rest on (0: no data, every share 0).
      meta: { days: 28, responses_sampled: Object.fromEntries(est.zones.map((z) => [String(z.zone), z.sampled])) },
    });
  });

  for (const p of ['/v2/reports/forecast/display', '/v2/reports/forecast/display/channel', '/v2/reports/placement-forecast', '/v2/reports/display-platform-estimate']) router.all(p, methodNotSupported);
}
