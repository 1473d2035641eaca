import type { Knex } from 'knex';
import type { RebuildRollupsRequest, RebuildRollupsResponse } from '../../proto/gen/adserver/reporting/v1/reports';
import { workerId } from '../shared/lease-queue';
import { envInt } from '../shared/config';
import { ParamErrors } from './report-params';
import { demandRollupUpsert, rollupUpsert, videoRollupUpsert } from './events-ingest';
import { errorFields, log } from '../shared/log';

const HOUR = 3600_000;

export function retentionDays(): number {
  return envInt('EVENT_RETENTION_DAYS', 90);
}

/**
 * Recomputes the rollups (quarter-hourly and hourly) of [from, to) (widened to whole hours) from the raw
 * events, in one transaction. It first locks the rollups against writes, which waits for every ingest batch in flight
 * to commit and holds new ones back, so the raw events it reads are exactly those counted before and
 * none is counted twice or lost. Ranges older than the raw-event retention are refused: their raw
 * events are gone and the rollups are all that is left.
 */
export async function rebuildRollups(knex: Knex, req: RebuildRollupsRequest, now = Date.now()): Promise<RebuildRollupsResponse> {
  const errors = new ParamErrors();
  const parse = (raw: string, name: string) => {
    const t = Date.parse(raw);
    if (!raw || Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}T/.test(raw)) errors.add(name, `'${name}' must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z.`);
    return t;
  };
  let from = parse(req.from, 'from');
  let to = parse(req.to, 'to');
  if (!errors.list.length && to <= from) errors.add('to', "'to' must be after 'from'.");
  const horizon = now - retentionDays() * 86_400_000;
  if (!errors.list.length && from < horizon) {
    errors.add('from', `'from' is older than the raw-event retention (${retentionDays()} days): those raw events are deleted, so their rollups cannot be rebuilt.`);
  }
  errors.throwIfAny();
  from = Math.floor(from / HOUR) * HOUR;
  to = Math.ceil(to / HOUR) * HOUR;
  const fromTs = new Date(from);
  const toTs = new Date(to);
  return knex.transaction(async (tx) => {
    // In the order ingestion's statement names them, so neither waits on a table while holding a later one.
    await tx.raw('lock table event_rollups, event_rollups_hourly, video_rollups, video_rollups_hourly, demand_rollups, demand_rollups_hourly in share row exclusive mode');
    for (const t of ['event_rollups', 'event_rollups_hourly', 'video_rollups', 'video_rollups_hourly', 'demand_rollups', 'demand_rollups_hourly']) {
      await tx(t).where('bucket', '>=', fromTs).where('bucket', '<', toTs).delete();
    }
    const res = await tx.raw(
      `with src as (select * from serving_events where occurred_at >= ? and occurred_at < ?),
         up as (${rollupUpsert('src', 'event_rollups')} returning 1),
         up_hourly as (${rollupUpsert('src', 'event_rollups_hourly')} returning 1),
         up_video as (${videoRollupUpsert('src', 'video_rollups')} returning 1),
         up_video_hourly as (${videoRollupUpsert('src', 'video_rollups_hourly')} returning 1),
         up_demand as (${demandRollupUpsert('src', 'auction_bids', 'demand_rollups')} returning 1),
         up_demand_hourly as (${demandRollupUpsert('src', 'auction_bids', 'demand_rollups_hourly')} returning 1)
       select (select count(*) from src)::int as events,
         (select count(*) from up)::int + (select count(*) from up_video)::int + (select count(*) from up_demand)::int as rollup_rows`,
      [fromTs, toTs],
    );
    const row = (res as { rows: { events: number; rollup_rows: number }[] }).rows[0];
    return { events: row.events, rollupRows: row.rollup_rows, from: fromTs.toISOString(), to: toTs.toISOString() };
  });
}

/**
 * Deletes raw events older than EVENT_RETENTION_DAYS (rollups stay), once per EVENT_RETENTION_INTERVAL_MS
 * on whichever replica holds the `retention` lease, in chunks so no single statement holds locks long.
 */
export function startRetentionSweep(knex: Knex): () => Promise<void> {
  const holder = workerId();
  const interval = envInt('EVENT_RETENTION_INTERVAL_MS', 3_600_000);
  let running: Promise<void> | undefined;
  const sweep = async () => {
    const leaseMs = Math.max(60_000, interval);
    const claimed = await knex.raw(
      `insert into reporting_leases (name, holder, expires_at) values ('retention', ?, now() + ? * interval '1 millisecond')
       on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
       where reporting_leases.expires_at < now() or reporting_leases.holder = excluded.holder
       returning holder`,
      [holder, leaseMs],
    );
    if (!(claimed as { rows: unknown[] }).rows.length) return;
    let deleted = 0;
    for (;;) {
      const res = await knex.raw(
        `delete from serving_events where id in (
           select id from serving_events where occurred_at < now() - ? * interval '1 day' order by occurred_at limit 5000)`,
        [retentionDays()],
      );
      const n = (res as { rowCount: number }).rowCount ?? 0;
      deleted += n;
      if (n < 5000) break;
    }
    if (deleted) log.info('raw events past retention deleted', { deleted, retention_days: retentionDays() });
  };
  const run = () => {
    if (!running) running = sweep().catch((err) => log.warn('retention sweep failed', errorFields(err))).finally(() => (running = undefined));
  };
  const first = setTimeout(run, 1000);
  const timer = setInterval(run, interval);
  return async () => {
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
