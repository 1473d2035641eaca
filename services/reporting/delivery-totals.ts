import type { Knex } from 'knex';
import type { DeliveryQuery, DeliveryTotals } from '../../proto/gen/adserver/reporting/v1/reports';
import { fail } from '../shared/errors';

/** At most this many scopes, and placements per scope, in one question. */
const MAX_SCOPES = 500;
const MAX_PLACEMENTS = 1000;
const QUARTER_HOUR = 15 * 60_000;

/**
 * Impressions and clicks counted for groups of placements, lifetime or since an instant: the durable
 * truth of delivery goals, read from the rollups that reports read (every event once). A lifetime
 * total sums the hourly rollup; a day's total the 15-minute one, whose buckets every IANA day starts on.
 * Display and VAST rows alike (no `vast` filter): a VAST placement's goal counts its impressions too.
 */
export async function deliveryTotals(knex: Knex, q: DeliveryQuery): Promise<DeliveryTotals> {
  if (!(q.account > 0)) throw fail.badRequest('account must be a positive id.');
  if (q.scopes.length > MAX_SCOPES) throw fail.badRequest(`At most ${MAX_SCOPES} scopes per question.`);
  // One query per distinct `since` (lifetime, or a day's start), over every placement the scopes name.
  const bySince = new Map<string, Set<number>>();
  for (const s of q.scopes) {
    if (s.placements.length > MAX_PLACEMENTS) throw fail.badRequest(`At most ${MAX_PLACEMENTS} placements per scope.`);
    const since = s.since ? Date.parse(s.since) : NaN;
    if (s.since && (Number.isNaN(since) || since % QUARTER_HOUR !== 0)) throw fail.badRequest(`since must be an RFC 3339 instant on a quarter hour; '${s.since.slice(0, 40)}' is not.`);
    const key = s.since ? new Date(since).toISOString() : '';
    const set = bySince.get(key) ?? new Set<number>();
    for (const p of s.placements) set.add(p);
    bySince.set(key, set);
  }
  const counted = new Map<string, { impressions: number; clicks: number }>();
  for (const [since, placements] of bySince) {
    if (!placements.size) continue;
    const query = knex(since ? 'event_rollups' : 'event_rollups_hourly')
      .where('account_id', q.account)
      .whereIn('placement_id', [...placements])
      .groupBy('placement_id')
      .select('placement_id', knex.raw('sum(impressions)::bigint as impressions'), knex.raw('sum(clicks)::bigint as clicks'));
    if (since) query.where('bucket', '>=', new Date(since));
    for (const r of (await query) as { placement_id: string; impressions: string; clicks: string }[]) {
      counted.set(`${since}|${r.placement_id}`, { impressions: Number(r.impressions), clicks: Number(r.clicks) });
    }
  }
  return {
    counts: q.scopes.map((s) => {
      const since = s.since ? new Date(Date.parse(s.since)).toISOString() : '';
      let impressions = 0;
      let clicks = 0;
      for (const p of new Set(s.placements)) {
        const c = counted.get(`${since}|${p}`);
        impressions += c?.impressions ?? 0;
        clicks += c?.clicks ?? 0;
      }
      return { key: s.key, impressions, clicks };
    }),
  };
}
