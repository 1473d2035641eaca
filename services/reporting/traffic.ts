import type { Knex } from 'knex';
import type { PlatformEstimate, PlatformEstimateQuery, Traffic, TrafficQuery, ZonePlatforms } from '../../proto/gen/adserver/reporting/v1/reports';
import { fail } from '../shared/errors';
import type { Tenant } from '../shared/tenant';
import { platformOf } from '../serving/targeting/platform';

/**
 * What forecasts and estimates read of the past: zones' hourly traffic (from the hourly rollups) and
 * the platforms among their recent responses (user agents of the raw events, parsed as serving parses
 * them for platform targets).
 */

const MAX_ZONES = 200;
const HOUR = 3600_000;
/** Responses sampled per zone for its platform shares (the most recent ones). */
const PLATFORM_SAMPLE = 20_000;

function checkZones(zones: number[], field: string): void {
  if (!zones.length) throw fail.invalid([{ field, type: 'missing_field', message: `'${field}' must name at least one zone.` }]);
  if (zones.length > MAX_ZONES) throw fail.invalid([{ field, type: 'invalid_value', message: `'${field}' may name at most ${MAX_ZONES} zones.` }]);
}

function hourInstant(v: string, field: string): number {
  const t = Date.parse(v);
  if (Number.isNaN(t) || t % HOUR !== 0) throw fail.invalid([{ field, type: 'invalid_value', message: `'${field}' must be an RFC 3339 instant on a whole hour.` }]);
  return t;
}

export async function traffic(knex: Knex, tenant: Tenant, q: TrafficQuery): Promise<Traffic> {
  checkZones(q.zones, 'zones');
  const from = hourInstant(q.from, 'from');
  const to = hourInstant(q.to, 'to');
  if (to <= from || to - from > 400 * 24 * HOUR) throw fail.invalid([{ field: 'to', type: 'invalid_value', message: "'to' must come after 'from', at most 400 days later." }]);
  // A zone's history is every request of its medium it answered (VAST decisions for VAST zones).
  // Test mode records no events: its history is empty.
  if (tenant.mode !== 'live') return { hours: [] };
  const rows = (await knex('event_rollups_hourly')
    .where('account_id', tenant.accountId)
    .whereIn('zone_id', q.zones)
    .where('vast', q.vast)
    .where('bucket', '>=', new Date(from))
    .where('bucket', '<', new Date(to))
    .groupBy('bucket')
    .orderBy('bucket')
    .select('bucket', knex.raw('sum(responses)::bigint as responses'), knex.raw('sum(impressions)::bigint as impressions'))) as { bucket: Date; responses: string; impressions: string }[];
  return { hours: rows.map((r) => ({ hour: new Date(r.bucket).toISOString(), responses: Number(r.responses), impressions: Number(r.impressions) })) };
}

const BROWSER_NAMES: Record<'desktop' | 'mobile', string[]> = {
  desktop: ['chrome', 'edge', 'firefox', 'ie', 'opera', 'other', 'safari'],
  mobile: ['blackberry', 'chrome', 'edge', 'firefox', 'opera', 'other', 'safari', 'samsung', 'uc'],
};
const OS_NAMES: Record<'desktop' | 'mobile', string[]> = {
  desktop: ['chrome_os', 'linux', 'macos', 'other', 'ubuntu', 'windows'],
  mobile: ['android', 'blackberry', 'ios', 'other', 'windows'],
};
/** Serving's platform names in the reference's vocabulary. */
const OS_ALIASES: Record<string, string> = { mac: 'macos', chromeos: 'chrome_os', windows_phone: 'windows' };

function shares(counts: Map<string, number>, names: string[]): Record<string, number> {
  let total = 0;
  for (const n of counts.values()) total += n;
  return Object.fromEntries(names.map((name) => [name, total ? Math.round((10_000 * (counts.get(name) ?? 0)) / total) / 100 : 0]));
}

export async function platformEstimate(knex: Knex, tenant: Tenant, q: PlatformEstimateQuery): Promise<PlatformEstimate> {
  checkZones(q.zones, 'zone_ids');
  const days = q.days || 28;
  if (days < 1 || days > 90) throw fail.invalid([{ field: 'days', type: 'invalid_value', message: "'days' must be 1-90." }]);
  const since = new Date(Date.now() - days * 24 * HOUR);
  const out: ZonePlatforms[] = [];
  for (const zone of q.zones) {
    const rows = tenant.mode !== 'live' ? [] : ((await knex('serving_events')
      .where({ account_id: tenant.accountId, zone_id: zone, kind: 1, vast: q.vast })
      .where('occurred_at', '>=', since)
      .orderBy('occurred_at', 'desc')
      .limit(PLATFORM_SAMPLE)
      .select('user_agent')) as { user_agent: string }[]);
    const form = new Map<string, number>();
    const browsers = { desktop: new Map<string, number>(), mobile: new Map<string, number>() };
    const oses = { desktop: new Map<string, number>(), mobile: new Map<string, number>() };
    const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    for (const r of rows) {
      const p = platformOf(r.user_agent);
      bump(form, p.formFactor);
      const cls = p.formFactor === 'desktop' ? 'desktop' : 'mobile';
      const browser = p.browser === 'others' ? 'other' : p.browser;
      const os = OS_ALIASES[p.os] ?? (p.os === 'others' ? 'other' : p.os);
      bump(browsers[cls], BROWSER_NAMES[cls].includes(browser) ? browser : 'other');
      bump(oses[cls], OS_NAMES[cls].includes(os) ? os : 'other');
    }
    out.push({
      zone,
      sampled: rows.length,
      formFactors: shares(form, ['desktop', 'mobile', 'tablet']),
      desktopBrowsers: shares(browsers.desktop, BROWSER_NAMES.desktop),
      mobileBrowsers: shares(browsers.mobile, BROWSER_NAMES.mobile),
      desktopOs: shares(oses.desktop, OS_NAMES.desktop),
      mobileOs: shares(oses.mobile, OS_NAMES.mobile),
    });
  }
  return { zones: out };
}
