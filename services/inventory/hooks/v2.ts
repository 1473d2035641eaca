import type { Knex } from 'knex';
import type { FieldSpec, Json, ParameterError } from '../../shared/catalog';
import { checkValue } from '../../shared/catalog/validate';
import { fail } from '../../shared/errors';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { SUB_ID_SEQUENCE } from '../migrations-v2';

/**
 * Rules of the v2-only inventory kinds that the catalog cannot express: ids of sub-objects (tracking
 * pixels, template variables), date and duration formats, and cross-resource checks (a native ad item's
 * variables must belong to its template).
 */

const DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const HMS = /^(\d{2}):([0-5]\d):([0-5]\d)$/;
const PERCENT = /^(100|[1-9]?\d)%?$/;

async function nextIds(db: Knex, n: number): Promise<number[]> {
  if (n === 0) return [];
  const { rows } = await db.raw(`select nextval('${SUB_ID_SEQUENCE}')::int as id from generate_series(1, ?)`, [n]);
  return (rows as { id: number }[]).map((r) => Number(r.id));
}

/** Gives an id to each element without one; ids given must be ones the resource already had. */
async function assignIds(values: Attributes, field: string, ctx: HookContext, errors: ParameterError[]): Promise<void> {
  const list = values[field];
  if (!Array.isArray(list)) return;
  const known = new Set(((ctx.existing?.[field] as { id?: number }[] | undefined) ?? []).map((e) => e.id));
  const items = list as Record<string, Json>[];
  for (const item of items) {
    if (item.id !== undefined && !known.has(item.id as number)) {
      errors.push({ field, type: 'invalid_value', message: `'${field}' names id ${item.id}, which this resource does not have; leave id out to add a new one.` });
      return;
    }
  }
  const fresh = await nextIds(ctx.db, items.filter((i) => i.id === undefined).length);
  values[field] = items.map((i) => (i.id === undefined ? { id: fresh.shift()!, ...i } : i));
}

function throwIf(errors: ParameterError[]): void {
  if (errors.length) throw fail.invalid(errors);
}

export function isDateTime(v: string): boolean {
  const m = DATETIME.exec(v);
  if (!m) return false;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 19).replace('T', ' ') === v;
}

function midnightToday(): string {
  return `${new Date().toISOString().slice(0, 10)} 00:00:00`;
}

const adItem: KindHooks = {
  async prepare(values, ctx) {
    const errors: ParameterError[] = [];
    if (ctx.op === 'create') values.is_self_serve = 'false';
    await assignIds(values, 'tracking_pixels', ctx, errors);
    throwIf(errors);
  },
};

/** Loads a resource of this tenant from the inventory's own table. */
async function loadOwn(ctx: HookContext, kind: string, id: number): Promise<Attributes | undefined> {
  const row = await ctx.db('resources').where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind, id }).whereNull('archived_at').first('attributes');
  return row?.attributes as Attributes | undefined;
}

const URL_VARIABLE_TYPES = new Set(['url', 'url_raw', 'image_url']);
const URL_FIELD: FieldSpec = { type: 'string', format: 'url', maxLength: 2048 };

const nativeAdItem: KindHooks = {
  async prepare(values, ctx) {
    await adItem.prepare!(values, ctx);
    const templateId = (values.template ?? ctx.existing?.template) as number | null | undefined;
    const variables = (values.variables ?? ctx.existing?.variables ?? {}) as Record<string, Json>;
    if (values.variables === undefined && values.template === undefined) return;
    const errors: ParameterError[] = [];
    const template = templateId ? await loadOwn(ctx, 'native_template', templateId) : undefined;
    const defs = new Map(((template?.variables as { id: number; name: string; type: string; max_length?: number | null; optional?: boolean }[]) ?? []).map((v) => [String(v.id), v]));
    for (const [key, value] of Object.entries(variables)) {
      const def = defs.get(key);
      if (!def) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables' has '${key.slice(0, 32)}', which is not a variable id of native template ${templateId}; known ids: ${[...defs.keys()].join(', ') || 'none'}.` });
        break;
      }
      if (typeof value !== 'string' && typeof value !== 'number') {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' must be a string or a number.` });
        break;
      }
      if (def.type === 'number' && Number.isNaN(Number(value))) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) must be a number.` });
        break;
      }
      // Values of URL variables end up in pages as links and sources: the catalog's one URL rule (http(s) only).
      const urlProblem = URL_VARIABLE_TYPES.has(def.type) && value !== '' ? checkValue(URL_FIELD, String(value), 1) : undefined;
      if (urlProblem) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) ${urlProblem}.` });
        break;
      }
      if (def.max_length && String(value).length > def.max_length) {
        errors.push({ field: 'variables', type: 'invalid_value', message: `'variables.${key}' (${def.name}) must be at most ${def.max_length} characters long.` });
        break;
      }
    }
    throwIf(errors);
  },
};

const nativeTemplate: KindHooks = {
  async prepare(values, ctx) {
    const errors: ParameterError[] = [];
    if (Array.isArray(values.variables)) {
      const seen = new Set<string>();
      for (const v of values.variables as { placeholder: string; type: string; dropdown_values?: string | null }[]) {
        if (seen.has(v.placeholder)) errors.push({ field: 'variables', type: 'invalid_value', message: `'variables' uses the placeholder '${v.placeholder}' twice.` });
        seen.add(v.placeholder);
        if (v.type === 'dropdown' && !v.dropdown_values) errors.push({ field: 'variables', type: 'invalid_value', message: `'variables': the dropdown variable '${v.placeholder}' needs dropdown_values.` });
      }
      throwIf(errors);
      await assignIds(values, 'variables', ctx, errors);
    }
    throwIf(errors);
  },
};

const schedule: KindHooks = {
  prepare(values, ctx) {
    const errors: ParameterError[] = [];
    for (const f of ['start_date', 'end_date']) {
      const v = values[f];
      if (typeof v === 'string' && !isDateTime(v)) errors.push({ field: f, type: 'invalid_value', message: `'${f}' must be a date and time in the form YYYY-MM-DD HH:MM:SS.` });
    }
    throwIf(errors);
    if (ctx.op === 'create' && (values.start_date === undefined || values.start_date === null)) values.start_date = midnightToday();
    if (ctx.op === 'update' && values.start_date === null) values.start_date = midnightToday();
    const start = (values.start_date ?? ctx.existing?.start_date) as string | null;
    const end = (values.end_date !== undefined ? values.end_date : ctx.existing?.end_date) as string | null;
    if (start && end && end < start) errors.push({ field: 'end_date', type: 'invalid_value', message: `'end_date' (${end}) must not be before 'start_date' (${start}).` });
    if (ctx.op === 'create' && values.under_delivery_behaviour === undefined) {
      values.under_delivery_behaviour = values.delivery_method === 'smooth' ? 'endOnDate' : null;
    }
    throwIf(errors);
  },
};

const placement: KindHooks = {
  prepare(values, ctx) {
    const zone = values.zone !== undefined ? values.zone : (ctx.existing?.zone ?? null);
    const channel = values.channel !== undefined ? values.channel : (ctx.existing?.channel ?? null);
    if ((zone === null) === (channel === null)) {
      throw fail.invalid([
        { field: zone === null ? 'zone' : 'channel', type: zone === null ? 'missing_field' : 'invalid_value', message: "A placement goes into a zone or onto a channel: give exactly one of 'zone' and 'channel'." },
      ]);
    }
  },
};

const vastAdItem: KindHooks = {
  prepare(values, ctx) {
    const errors: ParameterError[] = [];
    if (typeof values.duration === 'string' && !HMS.test(values.duration)) {
      errors.push({ field: 'duration', type: 'invalid_value', message: "'duration' must be a length of time in the form hh:mm:ss." });
    }
    if (typeof values.skip_duration === 'string' && !HMS.test(values.skip_duration) && !PERCENT.test(values.skip_duration)) {
      errors.push({ field: 'skip_duration', type: 'invalid_value', message: "'skip_duration' must be a time in the form hh:mm:ss or a whole percentage from 0 to 100." });
    }
    if (typeof values.wrapper_url === 'string' && values.wrapper_url !== '') {
      try {
        const u = new URL(values.wrapper_url);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        errors.push({ field: 'wrapper_url', type: 'invalid_value', message: "'wrapper_url' must be an absolute http(s) URL or empty." });
      }
    }
    const useWrapper = values.use_wrapper ?? ctx.existing?.use_wrapper;
    const wrapperUrl = values.wrapper_url !== undefined ? values.wrapper_url : ctx.existing?.wrapper_url;
    if (useWrapper === true && !wrapperUrl) {
      errors.push({ field: 'wrapper_url', type: 'missing_field', message: "'wrapper_url' is required when 'use_wrapper' is true." });
    }
    throwIf(errors);
  },
};

export const v2Hooks: Record<string, KindHooks> = {
  custom_html_ad_item: adItem,
  rich_media_ad_item: adItem,
  native_ad_item: nativeAdItem,
  native_template: nativeTemplate,
  schedule,
  placement,
  vast_ad_item: vastAdItem,
};
