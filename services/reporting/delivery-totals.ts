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
 */
export async function deliveryTotals(knex: Knex, q: DeliveryQuery): Promise<DeliveryTotals> {
  if (!(q.account > 0)) throw fail.badRequest('account must be a positive id.');
  if (q.scopes.length > MAX_SCOPES) throw fail.badRequest(`At most ${MAX_SCOPES} scopes per question.`);
  const counts = [];
  for (const s of q.scopes) {
    if (s.placements.length > MAX_PLACEMENTS) throw fail.badRequest(`At most ${MAX_PLACEMENTS} placements per scope.`);
    const since = s.since ? Date.parse(s.since) : NaN;
    if (s.since && (Number.isNaN(since) || since % QUARTER_HOUR !== 0)) throw fail.badRequest(`since must be an RFC 3339 instant on a quarter hour; '${s.since.slice(0, 40)}' is not.`);
    if (!s.placements.length) {
      counts.push({ key: s.key, impressions: 0, clicks: 0 });
      continue;
    }
    const table = s.since ? 'event_rollups' : 'event_rollups_hourly';
    const query = knex(table)
      .where('account_id', q.account)
      .whereIn('placement_id', s.placements)
      .select(knex.raw('coalesce(sum(impressions), 0)::bigint as impressions'), knex.raw('coalesce(sum(clicks), 0)::bigint as clicks'));
    if (s.since) query.where('bucket', '>=', new Date(since));
    const row = (await query.first()) as { impressions: string; clicks: string };
    counts.push({ key: s.key, impressions: Number(row.impressions), clicks: Number(row.clicks) });
  }
  return { counts };
}
