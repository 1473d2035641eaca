import { DISPLAY_AD_ITEM_KINDS } from '../shared/catalog';
import * as grpc from '@grpc/grpc-js';
import type { Knex } from 'knex';
import pg from 'pg';
import {
  DecisionDataService,
  type DecisionDataUpdate,
  type DecisionEntity,
  type DecisionEntityRef,
  type WatchDecisionDataRequest,
} from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Json } from '../shared/catalog';
import { envInt, envStr } from '../shared/config';
import type { Database, Migration } from '../shared/db';
import { errorFields, log } from '../shared/log';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import { targetingProjection } from '../targeting';
import { toVastEntity, VAST_DECISION_KINDS } from './vast-decision-data';
import { NO_DEMAND, PROGRAMMATIC_DECISION_KINDS, standardZoneDemand, toProgrammaticEntity } from './programmatic-decision-data';
import { int, refId, refKind, str } from '../targeting/rule';

/**
 * Decision data for the serving path: a typed snapshot of the live-mode resources that decide which ad
 * a zone shows, then every change to them. A trigger on `resources` appends each live-mode change to
 * `decision_changes` and announces it with NOTIFY, so every inventory replica (each LISTENing, and
 * polling as a safety net) pushes changes made through any replica to the serving processes it feeds.
 */

/** Kinds the serving path reads; other live-mode changes are logged but never sent. */
export const DECISION_KINDS = new Set([
  'standard_zone', 'email_zone', 'standard_campaign', ...DISPLAY_AD_ITEM_KINDS, 'campaign_assignment', 'placement', 'schedule', 'image_creative', 'rich_media_creative', 'native_template',
  'geo_target', 'day_parting', 'platform_target', 'postal_code_target', 'list_target', 'data_list', 'data_key_target', 'channel', 'channel_zone_assignment',
  ...VAST_DECISION_KINDS, ...PROGRAMMATIC_DECISION_KINDS,
]);

/**
 * Display ad items reach serving only while a placement or a campaign assignment names them (or did,
 * within the last 30 days: see namingRows): serving reaches an ad item through those alone, and an
 * account's library of unplaced ad items (a million of them in the bench) would otherwise sit in every
 * serving process's memory.
 */
const HELD_AD_ITEM_KINDS: ReadonlySet<string> = new Set(DISPLAY_AD_ITEM_KINDS);
const AD_ITEM_NAMING_KINDS = ['placement', 'campaign_assignment'];
/** The ad item a placement or assignment names: `{id, type}`, or a bare id. */
const NAMED_AD_ITEM_SQL = "case jsonb_typeof(attributes->'advertisement') when 'object' then attributes->'advertisement'->>'id' else attributes->>'advertisement' end";

const CHANNEL_PREFIX = 'decision_changes_';
/** How long the change log keeps entries: a serving process away longer resumes with a snapshot. */
const RETAIN_MINUTES = 60;
/** A gap in the sequence (a transaction still open, or rolled back) is waited for this long. */
const GAP_WAIT_MS = 2000;
const SNAPSHOT_CHUNK = 500;

/**
 * The trigger function that logs each change of `resources` and NOTIFYs (the channel names the schema,
 * so platforms sharing one Postgres server do not hear each other): live-mode changes only (0200), or
 * both modes with their mode (0201, for the test-mode Watch stream).
 */
function changeLogFunction(modes: 'live' | 'both'): string {
  const insert = modes === 'live'
    ? `if r.mode = 'live' then
          insert into decision_changes (account_id, kind, resource_id) values (r.account_id, r.kind, r.id);
          perform pg_notify('${CHANNEL_PREFIX}' || tg_table_schema, '');
        end if;`
    : `insert into decision_changes (account_id, kind, resource_id, mode) values (r.account_id, r.kind, r.id, r.mode);
        perform pg_notify('${CHANNEL_PREFIX}' || tg_table_schema, '');`;
  return `
      create or replace function decision_change_log() returns trigger language plpgsql as $$
      declare r record;
      begin
        if tg_op = 'DELETE' then r := old; else r := new; end if;
        ${insert}
        return null;
      end $$`;
}

/** Test-mode changes join the log, marked with their mode, for the test-mode Watch stream. */
export const decisionChangesModeMigration: Migration = {
  name: '0201_decision_changes_mode',
  async up(db) {
    await db.schema.alterTable('decision_changes', (t) => {
      t.string('mode', 8).notNullable().defaultTo('live');
    });
    await db.raw(changeLogFunction('both'));
  },
  async down(db) {
    await db.raw(changeLogFunction('live'));
    await db.raw("delete from decision_changes where mode <> 'live'");
    await db.schema.alterTable('decision_changes', (t) => t.dropColumn('mode'));
  },
};

export const decisionChangesMigration: Migration = {
  name: '0200_decision_changes',
  async up(db) {
    await db.schema.createTable('decision_changes', (t) => {
      t.bigIncrements('seq').primary();
      t.bigInteger('account_id').notNullable();
      t.string('kind', 64).notNullable();
      t.bigInteger('resource_id').notNullable();
      t.timestamp('at', { useTz: true }).notNullable().defaultTo(db.fn.now());
      t.index(['at']);
    });
    await db.raw(changeLogFunction('live'));
    await db.raw(`create trigger resources_decision_changes after insert or update or delete on resources
                  for each row execute function decision_change_log()`);
  },
  async down(db) {
    await db.raw('drop trigger if exists resources_decision_changes on resources');
    await db.raw('drop function if exists decision_change_log()');
    await db.schema.dropTable('decision_changes');
  },
};

interface ResourceRow {
  id: number;
  account_id: number;
  kind: string;
  mode: string;
  attributes: Record<string, Json>;
  archived_at: Date | null;
}


/** A placement's pricing: the first price its cost names (money stays a decimal string). */
export function pricing(cost: Json | undefined): { pricingModel: string; price: string } {
  if (!cost || typeof cost !== 'object' || Array.isArray(cost)) return { pricingModel: '', price: '' };
  for (const [field, model] of [['cpm', 'cpm'], ['cpc', 'cpc'], ['cpa', 'cpa'], ['fixed_cost', 'flat']] as const) {
    const v = (cost as Record<string, Json>)[field];
    if (typeof v === 'number' && v > 0) return { pricingModel: model, price: String(v) };
  }
  return { pricingModel: '', price: '' };
}

/** The cost's rates as decimal strings, for the auction's effective CPM. */
export function rates(cost: Json | undefined): { costCpm: string; costCpc: string; costCpa: string } {
  const c = cost && typeof cost === 'object' && !Array.isArray(cost) ? (cost as Record<string, Json>) : {};
  const rate = (v: Json | undefined) => (typeof v === 'number' && v > 0 ? String(v) : '');
  return { costCpm: rate(c.cpm), costCpc: rate(c.cpc), costCpa: rate(c.cpa) };
}

/** A frequency cap in seconds: the period counts days, or hours with the unit extension; 0 without a cap. */
function frequency(a: Record<string, Json>): { frequencyLimit: number; frequencyWindowSeconds: number } {
  const limit = int(a.per_user_view_limit);
  const period = int(a.per_user_view_period);
  if (!limit || !period) return { frequencyLimit: 0, frequencyWindowSeconds: 0 };
  return { frequencyLimit: limit, frequencyWindowSeconds: period * (a.per_user_view_period_unit === 'hours' ? 3600 : 86_400) };
}

/** The typed form of one stored resource, or undefined for kinds the serving path does not read. */
export function toDecisionEntity(row: ResourceRow): DecisionEntity | undefined {
  const a = row.attributes ?? {};
  const base = { kind: row.kind, id: row.id, account: row.account_id };
  switch (row.kind) {
    case 'standard_zone':
    case 'email_zone':
      return {
        ...base,
        zone: {
          width: int(a.width),
          height: int(a.height),
          dimensions: row.kind === 'email_zone' ? 'fixed' : str(a.dimensions) || 'fixed',
          publisher: refId(a.publisher),
          flexibleType: refId(a.flexible_type),
          refreshFrequency: int(a.refresh_frequency),
          uniqueDelivery: a.unique_delivery === true,
          vastVersion: '',
          defaultAdItem: 0,
          defaultCampaign: 0,
          servePriorityOrder: 'weight',
          ...(row.kind === 'standard_zone' ? standardZoneDemand(a) : NO_DEMAND),
        },
      };
    case 'standard_campaign':
      return { ...base, campaign: { advertiser: refId(a.advertiser), width: int(a.width), height: int(a.height), flexibleType: refId(a.flexible_type) } };
    case 'image_ad_item':
    case 'flash_ad_item':
    case 'custom_html_ad_item':
    case 'native_ad_item':
    case 'rich_media_ad_item':
      return {
        ...base,
        adItem: {
          width: int(a.width),
          height: int(a.height),
          location: str(a.location),
          trackingPixel: str(a.tracking_pixel),
          trackingPixels: Array.isArray(a.tracking_pixels) ? a.tracking_pixels.map((p) => str((p as Record<string, Json>)?.url)).filter(Boolean) : [],
          htmlContentBelow: str(a.html_content_below),
          altText: str(a.html_alt_text),
          target: str(a.html_target),
          creativeUrl: str(a.creative_url),
          creative: refId(a.creative),
          customHtml: str(a.custom_html),
          template: refId(a.template),
          variablesJson: a.variables ? JSON.stringify(a.variables) : '',
          advertiser: refId(a.advertiser),
          flexibleType: refId(a.flexible_type),
        },
      };
    case 'campaign_assignment':
      return {
        ...base,
        assignment: { campaign: refId(a.campaign), adItemKind: refKind(a.advertisement), adItem: refId(a.advertisement), weight: int(a.weight) || 1, active: a.active !== false },
      };
    case 'placement':
      return {
        ...base,
        placement: {
          zoneKind: refKind(a.zone),
          zone: refId(a.zone),
          advertisementKind: refKind(a.advertisement),
          advertisement: refId(a.advertisement),
          schedule: refId(a.schedule),
          weight: int(a.weight) || 1,
          active: a.active !== false,
          channel: int(a.channel),
          ...pricing(a.cost),
          geoTarget: int(a.geo_target),
          platformTarget: int(a.platform_target),
          listTarget: int(a.list_target),
          dataKeyTarget: int(a.data_key_target_id),
          postalCodeTarget: int(a.postal_code_target),
          keywords: str(a.keywords),
          keywordsMatchMethod: str(a.keywords_match_method) || 'preferred',
          ...frequency(a),
          priority: str(a.priority) || 'standard',
          serveMethod: str(a.serve_method) || 'weight',
          shareOfVoice: typeof a.share_of_voice === 'number' ? a.share_of_voice : -1,
          ...rates(a.cost),
          dayCapLimit: int(a.day_cap_limit),
          dayCapType: str(a.day_cap_type),
          fallback: false,
          ownPriority: false,
          frequencyEvent: '',
        },
      };
    case 'schedule':
      return {
        ...base,
        schedule: {
          startDate: str(a.start_date),
          endDate: str(a.end_date),
          dayParting: int(a.day_parting_id),
          ...frequency(a),
          quotaLifetime: int(a.quota_lifetime),
          quotaType: str(a.quota_type),
          dayCapLimit: int(a.day_cap_limit),
          dayCapType: str(a.day_cap_type),
          deliveryMethod: str(a.delivery_method) || 'default',
          underDeliveryBehaviour: str(a.under_delivery_behaviour) || 'endOnDate',
          timezone: str(a.start_at_timezone) || str(a.end_at_timezone),
          geoTarget: 0,
          weight: 0,
        },
      };
    case 'channel':
      return { ...base, channel: { priority: str(a.priority) || 'standard', useShareOfVoice: a.use_share_of_voice === true } };
    case 'channel_zone_assignment':
      return { ...base, channelZone: { channel: int(a.channel), zoneKind: refKind(a.zone), zone: refId(a.zone) } };
    case 'image_creative':
    case 'rich_media_creative':
      return { ...base, creative: { fileUrl: str(a.file_url) } };
    case 'native_template':
      return { ...base, nativeTemplate: { rawHtml: str(a.raw_html), variablesJson: JSON.stringify(a.variables ?? []) } };
    default: {
      // Video and programmatic kinds are projected in their own modules.
      const body = toVastEntity(row.kind, a) ?? toProgrammaticEntity(row.kind, a);
      if (body) return { ...base, ...body };
      // Target resources: each targeting rule projects its own (services/targeting/).
      const project = targetingProjection(row.kind);
      return project ? { ...base, ...project(a) } : undefined;
    }
  }
}

type Listener = (update: DecisionDataUpdate) => void;
export type DecisionMode = 'live' | 'test';

/**
 * One per inventory process: follows the change log (NOTIFY, else a poll) and fans each change out to
 * the Watch streams connected here. `settled` is the sequence up to which every change has been read
 * (a later one committed before an earlier transaction finished leaves a gap, waited for GAP_WAIT_MS).
 */
export class DecisionChangeHub {
  private settled = 0;
  /** Sequences above `settled` already sent, with the first time a gap below them was seen. */
  private readonly sentAbove = new Set<number>();
  private gapSince = 0;
  private readonly listeners = { live: new Set<Listener>(), test: new Set<Listener>() };
  private pollTimer?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private listenClient?: pg.Client;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(private readonly db: Database) {}

  get version(): number {
    return this.settled;
  }

  async start(): Promise<void> {
    const row = await this.db.knex('decision_changes').max<{ max: number | null }>('seq as max').first();
    this.settled = Number(row?.max ?? 0);
    const url = envStr('DATABASE_URL');
    if (url) await this.listen(url);
    // The poll catches what a lost notification would miss, and is the only signal for PGlite.
    this.pollTimer = setInterval(() => this.kick(), envInt('DECISION_POLL_MS', 500));
    this.pruneTimer = setInterval(() => void this.prune(), 60_000);
    this.pollTimer.unref();
    this.pruneTimer.unref();
  }

  private async listen(url: string): Promise<void> {
    const client = new pg.Client({ connectionString: url });
    client.on('notification', () => this.kick());
    client.on('error', (err) => {
      log.warn('decision change listener lost its connection', errorFields(err));
      this.listenClient = undefined;
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen(url).catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`listen "${CHANNEL_PREFIX}${this.db.schema}"`);
      this.listenClient = client;
      this.kick();
    } catch (err) {
      log.warn('decision change listener could not connect; polling only', errorFields(err));
      client.end().catch(() => undefined);
      if (!this.stopped) setTimeout(() => void this.listen(url).catch(() => undefined), 1000).unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.pruneTimer);
    await this.listenClient?.end().catch(() => undefined);
  }

  subscribe(mode: DecisionMode, fn: Listener): () => void {
    this.listeners[mode].add(fn);
    return () => this.listeners[mode].delete(fn);
  }

  /** Reads new changes; concurrent kicks collapse into one more pass. */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass()
      .catch((err) => log.warn('reading decision changes failed', errorFields(err)))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(): Promise<void> {
    const rows: ChangeRow[] = await this.db
      .knex('decision_changes')
      .where('seq', '>', this.settled)
      .orderBy('seq')
      .limit(2000)
      .select('seq', 'account_id', 'kind', 'resource_id', 'mode');
    const fresh = rows.filter((r) => !this.sentAbove.has(r.seq));
    if (fresh.length) {
      const updates = await Promise.all(MODES.map((mode) => changesUpdate(this.db.knex, refsOf(fresh, mode), mode)));
      for (const r of fresh) this.sentAbove.add(r.seq);
      this.advance(rows.map((r) => r.seq));
      MODES.forEach((mode, i) => {
        const update = updates[i];
        update.version = this.settled;
        update.synced = true;
        if (update.upserts.length || update.removals.length) for (const fn of this.listeners[mode]) fn(update);
      });
    } else {
      this.advance(rows.map((r) => r.seq));
    }
  }

  /** Moves `settled` over every contiguous sequence read; a gap older than GAP_WAIT_MS is given up on. */
  private advance(seen: number[]): void {
    const have = new Set(seen);
    for (;;) {
      const next = this.settled + 1;
      if (have.has(next) || this.sentAbove.has(next)) {
        this.sentAbove.delete(next);
        this.settled = next;
        this.gapSince = 0;
        continue;
      }
      const pending = [...this.sentAbove].some((s) => s > next);
      if (!pending) break;
      if (!this.gapSince) this.gapSince = Date.now();
      if (Date.now() - this.gapSince < GAP_WAIT_MS) break;
      this.settled = next;
      this.gapSince = 0;
    }
  }

  private async prune(): Promise<void> {
    await this.db
      .knex('decision_changes')
      .where('at', '<', this.db.knex.raw(`now() - interval '${RETAIN_MINUTES} minutes'`))
      .delete()
      .catch((err) => log.warn('pruning decision changes failed', errorFields(err)));
  }

  /** Whether the log still holds every change after `version` (nothing pruned past it). */
  async canResumeFrom(version: number): Promise<boolean> {
    if (version <= 0 || version > this.settled) return false;
    const row = await this.db.knex('decision_changes').min<{ min: number | null }>('seq as min').first();
    const min = row?.min == null ? this.settled + 1 : Number(row.min);
    return min <= version + 1;
  }

  /** Changes of one mode after `version` up to `settled`, as one update. */
  async changesSince(version: number, mode: DecisionMode): Promise<DecisionDataUpdate> {
    const rows: ChangeRow[] = await this.db
      .knex('decision_changes')
      .where('seq', '>', version)
      .andWhere('seq', '<=', this.settled)
      .andWhere('mode', mode)
      .select('seq', 'account_id', 'kind', 'resource_id', 'mode');
    const update = await changesUpdate(this.db.knex, refsOf(rows, mode), mode);
    update.version = this.settled;
    update.synced = true;
    return update;
  }
}

function emptyUpdate(): DecisionDataUpdate {
  return { reset: false, upserts: [], removals: [], version: 0, synced: false };
}

const MODES: readonly DecisionMode[] = ['live', 'test'];

interface ChangeRow {
  seq: number;
  account_id: number;
  kind: string;
  resource_id: number;
  mode: DecisionMode;
}

const refsOf = (rows: ChangeRow[], mode: DecisionMode): DecisionEntityRef[] =>
  rows.filter((r) => r.mode === mode).map((r) => ({ kind: r.kind, id: r.resource_id, account: r.account_id }));

/** The current state of changed resources of one mode: present and unarchived ones as upserts, others as removals. */
async function changesUpdate(knex: Knex, refs: DecisionEntityRef[], mode: DecisionMode): Promise<DecisionDataUpdate> {
  const update = emptyUpdate();
  const wanted = new Map<number, DecisionEntityRef>();
  for (const r of refs) if (DECISION_KINDS.has(r.kind)) wanted.set(r.id, r);
  if (!wanted.size) return update;
  const rows = await resourceRows(knex, mode, [...wanted.keys()]);
  const found = new Map(rows.map((r) => [r.id, r]));
  // A changed ad item goes only if something names it. Unnamed, it is not sent at all: serving holds it
  // at most stale from a placement since re-pointed, where nothing reaches it until a placement names
  // it again and brings it fresh (a million bulk-loaded ad items cost the stream nothing).
  const changedAdItems = rows.filter((r) => HELD_AD_ITEM_KINDS.has(r.kind) && !r.archived_at);
  const named = new Set(changedAdItems.length ? await namedAdItems(knex, mode, changedAdItems) : []);
  const newlyNamed = rows.filter((r) => AD_ITEM_NAMING_KINDS.includes(r.kind) && !r.archived_at).map((r) => refId(r.attributes?.advertisement)).filter((id) => id && !wanted.has(id));
  for (const [id, ref] of wanted) {
    const row = found.get(id);
    if (row && !row.archived_at && HELD_AD_ITEM_KINDS.has(row.kind) && !named.has(id)) continue;
    const entity = row && !row.archived_at ? toDecisionEntity(row) : undefined;
    if (entity) update.upserts.push(entity);
    else update.removals.push(ref);
  }
  for (const row of newlyNamed.length ? await resourceRows(knex, mode, [...new Set(newlyNamed)]) : []) {
    const entity = HELD_AD_ITEM_KINDS.has(row.kind) && !row.archived_at ? toDecisionEntity(row) : undefined;
    if (entity) update.upserts.push(entity);
  }
  return update;
}

function resourceRows(knex: Knex, mode: DecisionMode, ids: number[]): Promise<ResourceRow[]> {
  return knex('resources').whereIn('id', ids).andWhere('mode', mode).select('id', 'account_id', 'kind', 'mode', 'attributes', 'archived_at');
}

/**
 * Placements and assignments whose ad items serving holds: unarchived ones, and those archived within
 * the 30 days a click's cookie lasts, so a click on an ad served before its campaign was archived still
 * redirects, and its conversion still counts, on a serving process started since.
 */
function namingRows(knex: Knex, mode: DecisionMode): Knex.QueryBuilder {
  return knex('resources')
    .distinct(knex.raw(`${NAMED_AD_ITEM_SQL} as id`))
    .where('mode', mode)
    .whereIn('kind', AD_ITEM_NAMING_KINDS)
    .where((q) => q.whereNull('archived_at').orWhere('archived_at', '>', knex.raw("now() - interval '30 days'")));
}

/** Which of these ad items a placement or campaign assignment of their account names (namingRows). */
async function namedAdItems(knex: Knex, mode: DecisionMode, adItems: Pick<ResourceRow, 'id' | 'account_id'>[]): Promise<number[]> {
  const rows: { id: string | null }[] = await namingRows(knex, mode)
    .whereIn('account_id', [...new Set(adItems.map((r) => r.account_id))])
    .whereIn(knex.raw(NAMED_AD_ITEM_SQL) as unknown as string, adItems.map((r) => String(r.id)));
  return rows.map((r) => Number(r.id));
}

/** Streams a snapshot of every decision entity of one mode, in chunks: ad items last, those named only. */
async function sendSnapshot(knex: Knex, send: (u: DecisionDataUpdate) => void, version: number, mode: DecisionMode): Promise<void> {
  let first = true;
  const sendChunk = (rows: ResourceRow[], done: boolean) => {
    const update = emptyUpdate();
    update.reset = first;
    update.upserts = rows.map(toDecisionEntity).filter((e): e is DecisionEntity => !!e);
    update.synced = done;
    update.version = done ? version : 0;
    send(update);
    first = false;
  };
  const kinds = [...DECISION_KINDS].filter((k) => !HELD_AD_ITEM_KINDS.has(k));
  for (let after = 0; ; ) {
    const rows: ResourceRow[] = await knex('resources')
      .where('mode', mode)
      .whereNull('archived_at')
      .whereIn('kind', kinds)
      .andWhere('id', '>', after)
      .orderBy('id')
      .limit(SNAPSHOT_CHUNK)
      .select('id', 'account_id', 'kind', 'mode', 'attributes', 'archived_at');
    if (rows.length < SNAPSHOT_CHUNK) {
      if (rows.length) sendChunk(rows, false);
      break;
    }
    sendChunk(rows, false);
    after = rows[rows.length - 1].id;
  }
  const named: { id: string | null }[] = await namingRows(knex, mode);
  const ids = named.map((r) => Number(r.id)).filter((id) => Number.isSafeInteger(id) && id > 0);
  for (let i = 0; ; i += SNAPSHOT_CHUNK) {
    const chunk = ids.slice(i, i + SNAPSHOT_CHUNK);
    const rows = chunk.length
      ? (await resourceRows(knex, mode, chunk)).filter((r) => HELD_AD_ITEM_KINDS.has(r.kind) && !r.archived_at)
      : [];
    const done = i + SNAPSHOT_CHUNK >= ids.length;
    sendChunk(rows, done);
    if (done) return;
  }
}

/** The DecisionData gRPC API: Watch (server streaming), of live or test data. */
export function decisionDataBinding(db: Database, hub: DecisionChangeHub): ServiceBinding {
  const watch = (call: grpc.ServerWritableStream<WatchDecisionDataRequest, DecisionDataUpdate>) => {
    // Changes arriving while the snapshot is read are held, then sent after it (upserts are idempotent).
    const held: DecisionDataUpdate[] = [];
    let live = false;
    let closed = false;
    const send = (u: DecisionDataUpdate) => {
      if (!closed) call.write(u);
    };
    const mode: DecisionMode = call.request.test ? 'test' : 'live';
    const unsubscribe = hub.subscribe(mode, (u) => (live ? send(u) : held.push(u)));
    const close = () => {
      closed = true;
      unsubscribe();
      watchers.delete(endCall);
    };
    const endCall = () => {
      if (!closed) {
        close();
        call.end();
      }
    };
    watchers.add(endCall);
    call.on('cancelled', close);
    call.on('close', close);
    call.on('error', close);
    void (async () => {
      const resumeAfter = Number(call.request.resumeAfter ?? 0);
      if (await hub.canResumeFrom(resumeAfter)) send(await hub.changesSince(resumeAfter, mode));
      else await sendSnapshot(db.knex, send, hub.version, mode);
      live = true;
      for (const u of held.splice(0)) send(u);
    })().catch((err) => {
      log.warn('decision data stream failed', errorFields(err));
      if (!closed) {
        close();
        call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'Decision data could not be read; reconnect.' });
      }
    });
  };
  return implement('inventory.DecisionData', DecisionDataService, {}, { watch });
}

/** Open Watch streams, ended on shutdown so the gRPC server can stop at once. */
const watchers = new Set<() => void>();

export function endDecisionStreams(): void {
  for (const end of [...watchers]) end();
}
