import type { Migration } from '../shared/db';
import { RESOURCE_MIGRATIONS } from '../shared/resource-store';

/**
 * Reporting's typed tables.
 *
 * - `serving_events`: every event once (primary key = the event id, so a redelivered event is a no-op),
 *   live mode only (test traffic never produces events). Indexed for the raw reports (click and
 *   conversion details, event logs) and for rebuilds and the retention sweep by time.
 * - `event_rollups`: per 15-minute bucket (UTC-aligned; every IANA offset is a multiple of 15 minutes, so
 *   any zone's day, week and month boundaries fall on a bucket edge) and per (account, publisher, zone,
 *   advertiser, campaign, ad item, placement, assignment, currency): counts and money. `amount` is what
 *   the events cost the advertiser under the placement's pricing (cpm per impression, cpc per click, cpa
 *   per conversion), as numeric; ids are 0 where an event carries none, so the key never holds nulls.
 *   Since 0007 the key also holds `vast` (the decision answered a VAST request).
 * - `video_rollups` / `video_rollups_hourly`: VAST players' tracking events (kind VIDEO) per bucket, per
 *   the same ids (no currency: they carry no money) and per event name.
 * - `auction_bids`: the bids of AUCTION events (kind 6), one row per demand endpoint asked, deleted with
 *   their event.
 * - `demand_rollups` / `demand_rollups_hourly`: programmatic demand per bucket and per (account,
 *   publisher, zone, vast, demand source, demand endpoint, currency): the auctions' requests and how
 *   each endpoint answered, the wins, and the impressions won (views) with their revenue.
 * - `reporting_leases`: one row per singleton job (retention sweep), claimed with an expiry.
 */
export const migrations: Migration[] = [
  ...RESOURCE_MIGRATIONS,
  {
    name: '0002_reporting_events',
    async up(db) {
      await db.raw(`
        create table serving_events (
          id text primary key,
          kind smallint not null,
          occurred_at timestamptz not null,
          account_id bigint not null,
          publisher_id bigint not null default 0,
          zone_id bigint not null default 0,
          advertiser_id bigint not null default 0,
          campaign_id bigint not null default 0,
          ad_item_id bigint not null default 0,
          placement_id bigint not null default 0,
          assignment_id bigint not null default 0,
          channel_id bigint not null default 0,
          decision text not null default '',
          visitor text not null default '',
          ip text not null default '',
          user_agent text not null default '',
          referrer text not null default '',
          country text not null default '',
          region text not null default '',
          city text not null default '',
          pricing_model text not null default '',
          price numeric(20, 6),
          currency text not null default '',
          amount numeric(20, 9) not null default 0,
          conversion_value numeric(20, 6),
          conversion_reference text not null default '',
          received_at timestamptz not null default now()
        )`);
      await db.raw('create index serving_events_account_kind_time on serving_events (account_id, kind, occurred_at)');
      await db.raw('create index serving_events_time on serving_events (occurred_at)');
      await db.raw(`
        create table event_rollups (
          bucket timestamptz not null,
          account_id bigint not null,
          publisher_id bigint not null,
          zone_id bigint not null,
          advertiser_id bigint not null,
          campaign_id bigint not null,
          ad_item_id bigint not null,
          placement_id bigint not null,
          assignment_id bigint not null,
          currency text not null,
          responses bigint not null default 0,
          impressions bigint not null default 0,
          clicks bigint not null default 0,
          conversions bigint not null default 0,
          amount numeric(24, 9) not null default 0,
          primary key (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, currency)
        )`);
      await db.raw(`
        create table reporting_leases (
          name text primary key,
          holder text not null,
          expires_at timestamptz not null
        )`);
    },
  },
  {
    // Channel joins the rollup key, so the channel include/exclude filters read rollups too.
    name: '0003_reporting_rollup_channel',
    async up(db) {
      await db.raw('alter table event_rollups add column channel_id bigint not null default 0');
      await db.raw('alter table event_rollups drop constraint event_rollups_pkey');
      await db.raw(`alter table event_rollups add primary key
        (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency)`);
    },
  },
  {
    // Results of report configurations: queued by a caller or a schedule (one per schedule occurrence:
    // the unique index makes every replica's scheduler agree), claimed by one replica with a lease.
    name: '0004_reporting_generated_reports',
    async up(db) {
      await db.raw(`
        create table generated_reports (
          id bigserial primary key,
          account_id bigint not null,
          mode varchar(4) not null,
          configuration_id bigint not null references resources (id) on delete cascade,
          schedule_id bigint references resources (id) on delete set null,
          due_at timestamptz,
          name text not null,
          status text not null default 'queued',
          attempts int not null default 0,
          lease_owner text,
          lease_expires_at timestamptz,
          error text,
          result bytea,
          created_at timestamptz not null default now(),
          started_at timestamptz,
          completed_at timestamptz
        )`);
      await db.raw('create unique index generated_reports_occurrence on generated_reports (schedule_id, due_at) where due_at is not null');
      await db.raw('create index generated_reports_tenant on generated_reports (account_id, mode, configuration_id, id)');
      await db.raw("create index generated_reports_pending on generated_reports (id) where status in ('queued', 'running')");
    },
  },
  {
    // The same counts per hour: a report whose period starts all fall on whole hours (UTC and every zone
    // with a whole-hour offset) reads a quarter of the rows. Quarter hours stay the truth for the others.
    name: '0005_reporting_hourly_rollups',
    async up(db) {
      await db.raw('create table event_rollups_hourly (like event_rollups including defaults including constraints)');
      await db.raw(`alter table event_rollups_hourly add primary key
        (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency)`);
      await db.raw(`insert into event_rollups_hourly (bucket, account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id,
          assignment_id, channel_id, currency, responses, impressions, clicks, conversions, amount)
        select date_trunc('hour', bucket), account_id, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id,
          assignment_id, channel_id, currency, sum(responses), sum(impressions), sum(clicks), sum(conversions), sum(amount)
        from event_rollups group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11`);
    },
  },
  {
    // The geo target of the placement that served: the geo-target report reads raw events by it, so
    // the rollup keys (and their write cost) stay as they are.
    name: '0006_reporting_event_geo_target',
    async up(db) {
      await db.raw('alter table serving_events add column geo_target_id bigint not null default 0');
      await db.raw('create index serving_events_geo_target on serving_events (account_id, occurred_at) where geo_target_id <> 0');
    },
  },
  {
    // VAST decisions' events. The rollups key on `vast` so display and VAST reports each read their own
    // rows while delivery totals and traffic keep summing both; every existing row is display. Video
    // events (kind 5) are counted in their own rollups, one row per event name, at both widths.
    name: '0007_reporting_vast_events',
    async up(db) {
      await db.raw("alter table serving_events add column vast boolean not null default false, add column video_event text not null default ''");
      for (const t of ['event_rollups', 'event_rollups_hourly']) {
        await db.raw(`alter table ${t} add column vast boolean not null default false`);
        await db.raw(`alter table ${t} drop constraint ${t}_pkey`);
        await db.raw(`alter table ${t} add primary key
          (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, currency, vast)`);
      }
      for (const t of ['video_rollups', 'video_rollups_hourly']) {
        await db.raw(`
          create table ${t} (
            bucket timestamptz not null,
            account_id bigint not null,
            publisher_id bigint not null,
            zone_id bigint not null,
            advertiser_id bigint not null,
            campaign_id bigint not null,
            ad_item_id bigint not null,
            placement_id bigint not null,
            assignment_id bigint not null,
            channel_id bigint not null,
            event text not null,
            count bigint not null default 0,
            primary key (account_id, bucket, publisher_id, zone_id, advertiser_id, campaign_id, ad_item_id, placement_id, assignment_id, channel_id, event)
          )`);
      }
    },
  },
  {
    // Programmatic demand. Raw events name the endpoint and source that won their decision and the
    // publisher's revenue share; an AUCTION event's bids are rows of their own. The demand rollups count
    // both (AUCTION events stay out of the event rollups: they are not responses), at both widths.
    name: '0008_reporting_demand',
    async up(db) {
      await db.raw(`alter table serving_events add column demand_endpoint_id bigint not null default 0,
        add column demand_source_id bigint not null default 0, add column revenue_share numeric(9, 6)`);
      await db.raw(`
        create table auction_bids (
          event_id text not null references serving_events (id) on delete cascade,
          position int not null,
          demand_endpoint_id bigint not null,
          demand_source_id bigint not null,
          outcome smallint not null,
          cpm numeric(20, 6),
          won boolean not null,
          latency_ms int not null,
          deal text not null,
          loss_reason int not null,
          primary key (event_id, position)
        )`);
      for (const t of ['demand_rollups', 'demand_rollups_hourly']) {
        await db.raw(`
          create table ${t} (
            bucket timestamptz not null,
            account_id bigint not null,
            publisher_id bigint not null,
            zone_id bigint not null,
            vast boolean not null,
            demand_source_id bigint not null,
            demand_endpoint_id bigint not null,
            currency text not null,
            requests bigint not null default 0,
            bids bigint not null default 0,
            empty_responses bigint not null default 0,
            timeouts bigint not null default 0,
            errors bigint not null default 0,
            below_floor bigint not null default 0,
            rejected bigint not null default 0,
            wins bigint not null default 0,
            bid_total numeric(24, 6) not null default 0,
            bid_min numeric(20, 6),
            bid_max numeric(20, 6),
            clearing_total numeric(24, 6) not null default 0,
            views bigint not null default 0,
            revenue numeric(24, 9) not null default 0,
            publisher_revenue numeric(24, 9) not null default 0,
            primary key (account_id, bucket, publisher_id, zone_id, vast, demand_source_id, demand_endpoint_id, currency)
          )`);
      }
    },
  },
];
