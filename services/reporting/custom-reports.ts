import type { Knex } from 'knex';
import type { ServerUnaryCall } from '@grpc/grpc-js';
import {
  CustomReportsService, type GenerateRequest, type GeneratedReport, type GeneratedReportList, type GetGeneratedRequest, type ListGeneratedRequest,
} from '../../proto/gen/adserver/reporting/v1/custom_reports';
import { Report, type ReportQuery } from '../../proto/gen/adserver/reporting/v1/reports';
import type { ParameterError } from '../shared/catalog/types';
import { LeaseQueue } from '../shared/lease-queue';
import { envInt } from '../shared/config';
import { formatTimestamp } from '../shared/db';
import { fail, ServiceError } from '../shared/errors';
import { implement, type ServiceBinding } from '../shared/grpc/server';
import { errorFields, log } from '../shared/log';
import type { Attributes, KindHooks } from '../shared/resource-store';
import { tenantFromMetadata, type Tenant } from '../shared/tenant';
import { ParamErrors, REPORT_TYPES, VAST_REPORT_TYPES, parseRange } from './report-params';
import { buildReport, parseReportQuery, withFinancials } from './report-query';
import { addMonths, type CalendarDate } from '../shared/timezones';

const CONFIG_KIND = { display: 'report_configuration', vast: 'vast_report_configuration' } as const;
const SCHEDULE_KIND = { display: 'report_configuration_schedule', vast: 'vast_report_configuration_schedule' } as const;
const configKind = (vast: boolean) => (vast ? CONFIG_KIND.vast : CONFIG_KIND.display);
const scheduleKind = (vast: boolean) => (vast ? SCHEDULE_KIND.vast : SCHEDULE_KIND.display);

/** Where a parameter of the report query lives in a configuration. */
const CONFIG_FIELD: Record<string, string> = { preset: 'date.preset', from: 'date.start', to: 'date.end', timezone: 'date.timezone' };

function configurationHooks(vast: boolean): KindHooks {
  const types = vast ? VAST_REPORT_TYPES : REPORT_TYPES.filter((t) => t !== 'textad' && t !== 'popup');
  return {
    prepare(values, ctx) {
      const merged: Attributes = { ...ctx.existing, ...values };
      const errors = new ParamErrors();
      if (values.type !== undefined && !(types as readonly string[]).includes(String(values.type))) {
        errors.add('type', `'type' must be one of ${types.join(', ')}.`);
      }
      if (values.date !== undefined) {
        const d = (merged.date ?? {}) as Record<string, string | null>;
        const inner = new ParamErrors();
        parseRange({ preset: d.preset ?? '', from: d.start ?? '', to: d.end ?? '', timezone: d.timezone ?? '' }, inner);
        for (const p of inner.list) errors.add(CONFIG_FIELD[p.field] ?? `date.${p.field}`, p.message.replace(/'from'/g, "'start'").replace(/'to'/g, "'end'"), p.type);
      }
      if (merged.exclude_channel_stats === true && merged.require_channel_stats === true) {
        errors.add('require_channel_stats', "'exclude_channel_stats' and 'require_channel_stats' cannot both be true: no stats would remain.");
      }
      errors.throwIfAny();
    },
  };
}

const todayUtc = () => new Date().toISOString().slice(0, 10);

function scheduleHooks(): KindHooks {
  return {
    prepare(values, ctx) {
      if (ctx.op === 'create' && typeof values.start_at === 'string' && values.start_at < todayUtc()) {
        throw fail.invalid([{ field: 'start_at', type: 'invalid_value', message: "'start_at' must be today or a later date (YYYY-MM-DD)." }]);
      }
      const display = (values.display_as ?? undefined) as Record<string, boolean> | undefined;
      if (display && display.details === false && display.summary === false) {
        throw fail.invalid([{ field: 'display_as', type: 'invalid_value', message: "'display_as' must show details, summary or both." }]);
      }
    },
    /** send_count and next_report_at come from the generated results, not from stored attributes. */
    async decorate(items, tenant, db) {
      if (!items.length) return;
      const counts = (await db('generated_reports')
        .select('schedule_id')
        .count({ n: '*' })
        .where({ account_id: tenant.accountId, mode: tenant.mode })
        .whereIn('schedule_id', items.map((i) => i.id))
        .groupBy('schedule_id')) as unknown as { schedule_id: number; n: number }[];
      const byId = new Map(counts.map((c) => [Number(c.schedule_id), Number(c.n)]));
      for (const item of items) {
        const a = (item.attributes ?? {}) as Attributes;
        a.send_count = byId.get(item.id) ?? 0;
        const next = a.active === true && typeof a.start_at === 'string' ? occurrences(a.start_at, String(a.frequency), Date.now()).next : undefined;
        a.next_report_at = next === undefined ? null : new Date(next).toISOString().replace('.000Z', '+00:00');
        item.attributes = a;
      }
    },
  };
}

export const customReportHooks: Record<string, KindHooks> = {
  [CONFIG_KIND.display]: configurationHooks(false),
  [CONFIG_KIND.vast]: configurationHooks(true),
  [SCHEDULE_KIND.display]: scheduleHooks(),
  [SCHEDULE_KIND.vast]: scheduleHooks(),
};

/**
 * A schedule's occurrences run at 00:00 UTC on `start_at` and every period after it (months and
 * years keep the start day, clamped to shorter months). Answers the latest one not after `now`
 * (undefined before the first) and the one after it.
 */
export function occurrences(startAt: string, frequency: string, now: number): { latest?: number; next: number } {
  const [y, m, d] = startAt.split('-').map(Number);
  const start: CalendarDate = { year: y, month: m, day: d };
  const at = (k: number): number => {
    switch (frequency) {
      case 'DAILY':
        return Date.UTC(y, m - 1, d + k);
      case 'WEEKLY':
        return Date.UTC(y, m - 1, d + 7 * k);
      case 'BIWEEKLY':
        return Date.UTC(y, m - 1, d + 14 * k);
      case 'YEARLY': {
        const c = addMonths(start, 12 * k);
        return Date.UTC(c.year, c.month - 1, c.day);
      }
      default: {
        const c = addMonths(start, k);
        return Date.UTC(c.year, c.month - 1, c.day);
      }
    }
  };
  if (now < at(0)) return { next: at(0) };
  // A first guess from the average period length, then exact steps.
  const avg = { DAILY: 1, WEEKLY: 7, BIWEEKLY: 14, MONTHLY: 30.44, YEARLY: 365.25 }[frequency] ?? 30.44;
  let k = Math.max(0, Math.floor((now - at(0)) / (avg * 86_400_000)) - 1);
  while (at(k + 1) <= now) k++;
  while (k > 0 && at(k) > now) k--;
  return { latest: at(k), next: at(k + 1) };
}

interface GeneratedRow {
  id: number;
  account_id: number;
  mode: string;
  configuration_id: number;
  schedule_id: number | null;
  name: string;
  status: string;
  error: string | null;
  result: Buffer | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

const ts = (d: Date | null) => (d ? formatTimestamp(d) : '');

function toGenerated(r: GeneratedRow, withReport: boolean, display?: Record<string, boolean>): GeneratedReport {
  return {
    id: Number(r.id), name: r.name, configuration: Number(r.configuration_id), schedule: Number(r.schedule_id ?? 0), status: r.status,
    createdAt: ts(r.created_at), startedAt: ts(r.started_at), completedAt: ts(r.completed_at), error: r.error ?? '',
    report: withReport && r.result ? withFinancials(Report.decode(r.result)) : undefined,
    displayDetails: display?.details ?? true, displaySummary: display?.summary ?? true,
  };
}

async function ownResource(db: Knex, t: Tenant, kind: string, id: number): Promise<Attributes | undefined> {
  const row = await db('resources').select('attributes').where({ account_id: t.accountId, mode: t.mode, kind, id }).whereNull('archived_at').first();
  return row?.attributes as Attributes | undefined;
}

/** The report query a configuration stands for (always with details; the result shows what display_as asks). */
export function configurationQuery(a: Attributes, vast: boolean): ReportQuery {
  const date = (a.date ?? {}) as Record<string, string | null>;
  const filters = (a.filters ?? {}) as Record<string, number[] | null>;
  const list = (k: string) => filters[k] ?? [];
  return {
    type: String(a.type), period: String(a.period), preset: date.preset ?? '', from: date.start ?? '', to: date.end ?? '', timezone: date.timezone ?? '',
    summary: true, details: true, breakdown: false, financials: true,
    publishers: list('publishers'), zones: list('zones'), advertisers: list('advertisers'), campaigns: list('campaigns'), adItems: list('ad_items'),
    excludePublisherAdItems: a.exclude_publisher_ad_items === true, excludeCampaignAdItems: a.exclude_campaign_ad_items === true,
    excludeChannelStats: a.exclude_channel_stats === true, requireChannelStats: a.require_channel_stats === true, vast, byPlacement: false,
    textads: [], popups: [], placements: [],
  };
}

const MAX_PAGE = 100;

export function customReportsBinding(knex: Knex): ServiceBinding {
  const tenantOf = (call: ServerUnaryCall<unknown, unknown>) => tenantFromMetadata(call.metadata);
  const scoped = (t: Tenant) => knex('generated_reports').where({ account_id: t.accountId, mode: t.mode });
  const requireConfiguration = async (t: Tenant, id: number, vast: boolean) => {
    const a = await ownResource(knex, t, configKind(vast), id);
    if (!a) throw fail.notFound('report configuration', id);
    return a;
  };
  const requireSchedule = async (t: Tenant, configuration: number, id: number, vast: boolean) => {
    const a = await ownResource(knex, t, scheduleKind(vast), id);
    if (!a || a.report_configuration !== configuration) throw fail.notFound('report configuration schedule', id);
    return a;
  };
  return implement('CustomReports', CustomReportsService, {
    async generate(req: GenerateRequest, call): Promise<GeneratedReport> {
      const t = tenantOf(call);
      const a = await requireConfiguration(t, req.configuration, req.vast);
      const [row] = await knex('generated_reports')
        .insert({ account_id: t.accountId, mode: t.mode, configuration_id: req.configuration, name: String(a.name) })
        .returning('*');
      return toGenerated(row, false);
    },
    async listGenerated(req: ListGeneratedRequest, call): Promise<GeneratedReportList> {
      const t = tenantOf(call);
      if (req.limit < 1 || req.limit > MAX_PAGE || req.offset < 0) throw fail.badRequest(`limit must be 1-${MAX_PAGE} and offset non-negative.`);
      if (req.configuration) await requireConfiguration(t, req.configuration, req.vast);
      if (req.schedule) await requireSchedule(t, req.configuration, req.schedule, req.vast);
      const qb = knex('generated_reports')
        .where({ 'generated_reports.account_id': t.accountId, 'generated_reports.mode': t.mode })
        .select('generated_reports.*')
        .join('resources', 'resources.id', 'generated_reports.configuration_id')
        .where('resources.kind', configKind(req.vast))
        .orderBy('generated_reports.id')
        .limit(req.limit + 1)
        .offset(req.offset);
      if (req.configuration) qb.where('generated_reports.configuration_id', req.configuration);
      if (req.schedule) qb.where('generated_reports.schedule_id', req.schedule);
      if (req.ids.length) qb.whereIn('generated_reports.id', req.ids);
      const rows: GeneratedRow[] = await qb;
      return { items: rows.slice(0, req.limit).map((r) => toGenerated(r, false)), hasMore: rows.length > req.limit };
    },
    async getGenerated(req: GetGeneratedRequest, call): Promise<GeneratedReport> {
      const t = tenantOf(call);
      await requireConfiguration(t, req.configuration, req.vast);
      let display: Record<string, boolean> | undefined;
      if (req.schedule) display = (await requireSchedule(t, req.configuration, req.schedule, req.vast)).display_as as Record<string, boolean>;
      const qb = scoped(t).where({ id: req.id, configuration_id: req.configuration });
      if (req.schedule) qb.where({ schedule_id: req.schedule });
      const row: GeneratedRow | undefined = await qb.first();
      if (!row) throw fail.notFound('generated report', req.id);
      return toGenerated(row, true, display);
    },
  });
}

/**
 * The background side: queues each active schedule's due occurrence (once, whatever the number of
 * replicas, through the unique index), and generates queued results on whichever replica claims them
 * (FOR UPDATE SKIP LOCKED with a lease; a result whose worker died is claimed again once the lease
 * expires, so a restart never loses one).
 */
export function startReportGeneration(knex: Knex): () => Promise<void> {
  const queue = new LeaseQueue<GeneratedRow & { attempts?: number }>(knex, {
    table: 'generated_reports',
    leaseUntil: 'lease_expires_at',
    leaseMs: envInt('REPORT_GENERATION_LEASE_MS', 60_000),
    onClaim: 'started_at = now()',
  });
  const interval = envInt('REPORT_GENERATION_INTERVAL_MS', 1000);
  let stopped = false;
  let running: Promise<void> | undefined;

  const queueDueSchedules = async () => {
    const schedules = await knex('resources')
      .select('id', 'account_id', 'mode', 'kind', 'attributes')
      .whereIn('kind', [SCHEDULE_KIND.display, SCHEDULE_KIND.vast])
      .whereNull('archived_at')
      .whereRaw("attributes->>'active' = 'true' and attributes->>'start_at' is not null");
    for (const s of schedules) {
      const a = s.attributes as Attributes;
      const { latest } = occurrences(String(a.start_at), String(a.frequency), Date.now());
      if (latest === undefined) continue;
      const config = await knex('resources').select('attributes').where({ id: a.report_configuration, account_id: s.account_id, mode: s.mode }).first();
      if (!config) continue;
      const sent = Number((await knex('generated_reports').where({ schedule_id: s.id }).count({ n: '*' }))[0].n);
      const suffix = a.name_suffix === 'REPORT_NUMBER' ? `#${sent + 1}` : formatSuffixDate(new Date(latest), String(a.name_suffix_date_format ?? 'YYYY-MM-DD'));
      await knex.raw(
        `insert into generated_reports (account_id, mode, configuration_id, schedule_id, due_at, name) values (?, ?, ?, ?, ?, ?)
         on conflict (schedule_id, due_at) where due_at is not null do nothing`,
        [s.account_id, s.mode, a.report_configuration, s.id, new Date(latest), `${a.name} ${suffix}`],
      );
    }
  };

  const generate = async (row: GeneratedRow & { attempts?: number }) => {
    const t: Tenant = { accountId: Number(row.account_id), mode: row.mode as Tenant['mode'] };
    const finish = (fields: Record<string, unknown>) => queue.whileHeld(row.id, { ...fields, completed_at: knex.fn.now(), lease_owner: null, lease_expires_at: null });
    const config = await knex('resources').select('kind', 'attributes').where({ id: row.configuration_id, account_id: t.accountId, mode: t.mode }).first();
    if (!config) return finish({ status: 'error', error: 'The report configuration no longer exists.' });
    try {
      const vast = config.kind === CONFIG_KIND.vast;
      const report = await buildReport(knex, t, parseReportQuery(configurationQuery(config.attributes as Attributes, vast)));
      await finish({ status: 'success', error: null, result: Buffer.from(Report.encode(report).finish()) });
    } catch (err) {
      if (!(err instanceof ServiceError) && Number(row.attempts ?? 0) < 3) {
        // A passing failure (database away): give it back for another try once the lease runs out.
        log.warn('report generation failed; will retry', { generated_report: row.id, ...errorFields(err) });
        return;
      }
      // Only a refusal of the configuration's own parameters is shown; anything else (a database error
      // names SQL and values) is logged, and the report says only that it failed.
      if (!(err instanceof ServiceError)) {
        log.warn('report generation failed', { generated_report: row.id, ...errorFields(err) });
        return finish({ status: 'error', error: 'The report could not be generated; save the configuration again or contact support.' });
      }
      const params = err.parameters as ParameterError[] | undefined;
      await finish({ status: 'error', error: err.message.slice(0, 1000) + (params?.length ? ` (${params.map((p) => p.field).join(', ')})` : '') });
    }
  };

  const tick = async () => {
    await queueDueSchedules();
    for (let i = 0; i < 10 && !stopped; i++) {
      const row = await queue.claim();
      if (!row) break;
      await generate(row);
    }
  };
  const timer = setInterval(() => {
    if (!running && !stopped) running = tick().catch((err) => log.warn('report generation tick failed', errorFields(err))).finally(() => (running = undefined));
  }, interval);
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

function formatSuffixDate(d: Date, format: string): string {
  const y = String(d.getUTCFullYear());
  const m = String(d.getUTCMonth() + 1).padStart(2, '0');
  const day = String(d.getUTCDate()).padStart(2, '0');
  return format.replace('YYYY', y).replace('MM', m).replace('DD', day);
}
