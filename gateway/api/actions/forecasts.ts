import type { Request, Response, Router } from 'express';
import type { CompetingPlacement, Forecast, ForecastQuery } from '../../../proto/gen/adserver/inventory/v1/forecasts';
import type { ParameterError } from '../../../services/shared/catalog';
import { forecasts, reports } from '../../../services/shared/grpc/clients';
import { QueryValues } from '../../../services/shared/query-values';
import { ctxOf } from '../../context';
import { apiErrors, methodNotSupported } from '../../errors';
import { asCaller, backend } from '../backend';
import { documentedRoute, namedQuery } from '../route-docs';
import { queryOf } from './reports';

/**
 * Forecasts and platform estimates (the reference's `/v2/reports/forecast/display|vast`, `…/channel`,
 * `/v2/reports/placement-forecast` and `/v2/reports/display-|vast-platform-estimate`): inventory
 * forecasts from reporting's history, reporting estimates platforms from its events; the gateway reads
 * the query and shapes the answer. Display and VAST routes are the same handlers over their medium.
 */

interface Medium {
  name: 'display' | 'vast';
  /** Zone kinds the platform estimate takes. */
  zoneKinds: string[];
  zoneTitle: string;
  forecast: typeof forecasts.forecastDisplay;
  /** The reference's `object` of a platform estimate. */
  estimateObject: string;
}

const MEDIA: Medium[] = [
  { name: 'display', zoneKinds: ['standard_zone', 'email_zone'], zoneTitle: 'zone', forecast: (q, o) => forecasts.forecastDisplay(q, o), estimateObject: 'platform_estimator' },
  { name: 'vast', zoneKinds: ['vast_zone'], zoneTitle: 'VAST zone', forecast: (q, o) => forecasts.forecastVast(q, o), estimateObject: 'vast_platform_estimator' },
];

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

/** A competitor in the reference's shape: display names its zone and targets by flag, VAST by id. */
function competitorOut(c: CompetingPlacement, medium: Medium) {
  const where = medium.name === 'vast' ? { vast_zone_id: c.zone || null, vast_channel_id: c.channel || null } : { zone_id: c.zone || null, channel_id: c.channel || null };
  const targets = medium.name === 'vast'
    ? { platform_target_id: c.platformTarget || null, geo_target_id: c.geoTarget || null }
    : { has_platform_target: c.hasPlatformTarget, has_geo_target: c.hasGeoTarget, has_ad_item_targets: false, has_ad_item_schedule: false };
  return {
    id: c.id, placement_id: c.placement, name: c.name, type: c.type, ...where,
    start_at: c.startAt || null, end_at: c.endAt || null, projected_impressions: c.projectedImpressions, priority: c.priority,
    delivery_pacing: c.deliveryPacing, serve_method: c.serveMethod, weight: c.weight, cpm: c.cpm, quota_lifetime: c.quotaLifetime,
    quota_daily: c.quotaDaily, ...targets,
  };
}

/** What the forecast rests on: days of history and its backtest error (extensions of the reference's shape). */
const basis = (f: Forecast) => ({ history_days: f.historyDays, backtest: f.backtestMape >= 0 ? { mape: Math.round(f.backtestMape * 10_000) / 10_000, days: f.backtestDays } : null });

function forecastOut(f: Forecast, medium: Medium) {
  return {
    confidence: f.confidence,
    confidence_reasons: f.confidenceReasons.map((reason) => ({ reason })),
    // No history: no projection, rather than a zero that reads as "nothing will serve".
    impressions_projected: f.hasHistory ? { total: f.total, daily_breakdown: f.days.map((d) => ({ date: d.date, impressions: d.impressions })) } : { total: null, daily_breakdown: [] },
    competing_ads: {
      campaigns: f.competing.filter((c) => c.type === 'campaign').map((c) => competitorOut(c, medium)),
      ad_items: f.competing.filter((c) => c.type === 'ad_item').map((c) => competitorOut(c, medium)),
    },
    ...basis(f),
  };
}

export function forecastActions(router: Router): void {
  const forecastRoute = (medium: Medium, channel: boolean) => async (req: Request, res: Response) => {
    const q = queryOf(req, [channel ? 'channel_id' : 'zone_id', ...FORECAST_PARAMS]);
    const query = forecastQueryOf(q, channel ? { channel: q.channel_id } : { zone: q.zone_id });
    const f = await asCaller(ctxOf(res), (metadata) => medium.forecast(query, { metadata, idempotent: true, timeoutMs: 30_000 }));
    res.json({ object: `${medium.name}${channel ? '_channel' : ''}_forecast`, url: req.path, data: forecastOut(f, medium) });
  };
  for (const medium of MEDIA) {
    const what = medium.name === 'vast' ? 'VAST ' : '';
    documentedRoute(router, { method: 'get', path: `/v2/reports/forecast/${medium.name}`, summary: `Impressions a proposed ${what}placement would get in a ${what}zone, day by day, with its competitors`, tag: 'reports', query: namedQuery(['zone_id', ...FORECAST_PARAMS]), response: { schema: { type: 'object' } } }, forecastRoute(medium, false));
    documentedRoute(router, { method: 'get', path: `/v2/reports/forecast/${medium.name}/channel`, summary: `Impressions a proposed ${what}placement would get on a ${what}channel, day by day, with its competitors`, tag: 'reports', query: namedQuery(['channel_id', ...FORECAST_PARAMS]), response: { schema: { type: 'object' } } }, forecastRoute(medium, true));
  }

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

  const estimate = (medium: Medium) => async (req: Request, res: Response) => {
    const ctx = ctxOf(res);
    const q = queryOf(req, ['zone_ids']);
    const values = new QueryValues();
    const zones = values.ids(q.zone_ids, 'zone_ids');
    if (!values.errors.length && !zones.length) values.errors.push({ field: 'zone_ids', type: 'missing_field', message: "'zone_ids' must name one or more zones, comma-separated." });
    if (values.errors.length) throw apiErrors.invalid(values.errors);
    // Every id must be one of the caller's zones of this medium: another account's, or a display zone
    // asked of the VAST estimate, is not found rather than estimated as empty.
    const found = await backend.list(ctx, { kinds: medium.zoneKinds, ids: zones, limit: zones.length });
    const missing = zones.find((z) => !found.items.some((i) => i.id === z));
    if (missing !== undefined) throw apiErrors.notFound(`No ${medium.zoneTitle} with id ${missing} exists.`);
    const est = await asCaller(ctx, (metadata) => reports.getPlatformEstimate({ zones, days: 28, vast: medium.name === 'vast' }, { metadata, idempotent: true, timeoutMs: 30_000 }));
    res.json({
      object: medium.estimateObject,
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
  };
  for (const medium of MEDIA) {
    const what = medium.name === 'vast' ? 'VAST ' : '';
    documentedRoute(router, { method: 'get', path: `/v2/reports/${medium.name}-platform-estimate`, summary: `Shares of platforms, browsers and operating systems among the ${what}zones\u2019 responses of the last 28 days`, tag: 'reports', query: namedQuery(['zone_ids']), response: { schema: { type: 'object' } } }, estimate(medium));
  }

  for (const m of MEDIA) {
    for (const p of [`/v2/reports/forecast/${m.name}`, `/v2/reports/forecast/${m.name}/channel`, `/v2/reports/${m.name}-platform-estimate`]) router.all(p, methodNotSupported);
  }
  router.all('/v2/reports/placement-forecast', methodNotSupported);
}
