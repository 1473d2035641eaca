import type { Knex } from 'knex';
import type { Resource } from '../../proto/gen/adserver/resources/v1/resources';
import { getKind, type ParameterError } from '../shared/catalog';
import { isPlainObject } from '../shared/catalog/validate';
import { fail, ServiceError } from '../shared/errors';
import { resourcesApi } from '../shared/grpc/resources-api';
import { moneyNumber } from '../shared/money';
import { hashPassword } from '../shared/passwords';
import type { Attributes, HookContext, KindHooks } from '../shared/resource-store';
import { tenantMetadata, type Tenant } from '../shared/tenant';
import { status } from '@grpc/grpc-js';

/** A selfserve resource's stored attributes, or undefined when the tenant has no such resource. */
export async function ownAttributes(db: Knex, t: Tenant, kind: string, id: number): Promise<Attributes | undefined> {
  const row = await db('resources')
    .where({ account_id: t.accountId, mode: t.mode, kind, id })
    .whereNull('archived_at')
    .first('attributes');
  return row?.attributes as Attributes | undefined;
}

/** A resource of another service through its Resources API; undefined when it does not exist. */
export async function remoteResource(t: Tenant, kind: string, id: number): Promise<Resource | undefined> {
  const svc = getKind(kind).service;
  try {
    return await resourcesApi(svc, tenantMetadata(t)).get({ kind, id });
  } catch (err) {
    if ((err as { code?: number }).code === status.NOT_FOUND) return undefined;
    throw err;
  }
}

const invalid = (field: string, message: string) => fail.invalid([{ field, type: 'invalid_value', message }]);
const given = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

/**
 * Portal zones: the standard zone must have a fixed size (the ad items bought for it get that size),
 * and each pricing model needs its prices: fixed-CPM a cpm and a quantity, fixed-CPC a cpc and a quantity.
 */
const portalZone: KindHooks = {
  async prepare(values, ctx) {
    const merged = { ...ctx.existing, ...values };
    if (values.zone !== undefined) {
      const zone = await remoteResource(ctx.tenant, 'standard_zone', values.zone as number);
      const width = Number(zone?.attributes?.width ?? 0);
      const height = Number(zone?.attributes?.height ?? 0);
      if (!zone) throw invalid('zone', `'zone' refers to standard zone ${values.zone}, which does not exist.`);
      if (width < 1 || height < 1) throw invalid('zone', `'zone' must be a standard zone with a fixed width and height; zone ${values.zone} has none.`);
      values.width = width;
      values.height = height;
    }
    const errors: ParameterError[] = [];
    const need = (field: string) => {
      if (merged[field] === null || merged[field] === undefined) {
        errors.push({ field, type: 'missing_field', message: `'${field}' is required when pricing_model is ${merged.pricing_model}.` });
      }
    };
    if (merged.pricing_model === 'fixed-CPM') ['cpm', 'quantity'].forEach(need);
    if (merged.pricing_model === 'fixed-CPC') ['cpc', 'quantity'].forEach(need);
    if (errors.length) throw fail.invalid(errors);
  },
};

/** Stored dates: the start day from midnight, the end day until its last second. */
const dayStart = (d: string) => `${d.slice(0, 10)} 00:00:00`;
const dayEnd = (d: string) => `${d.slice(0, 10)} 23:59:59`;

/** Carts: dates are used for the order only when both are set; set_dates false clears them. */
const cart: KindHooks = {
  prepare(values, ctx) {
    const datesGiven = values.start_date !== undefined || values.end_date !== undefined;
    if (values.set_dates === false) {
      if (given(values.start_date) || given(values.end_date)) throw invalid('set_dates', "'set_dates' cannot be false while start_date or end_date is given.");
      values.start_date = null;
      values.end_date = null;
      return;
    }
    const start = (values.start_date !== undefined ? values.start_date : ctx.existing?.start_date ?? null) as string | null;
    const end = (values.end_date !== undefined ? values.end_date : ctx.existing?.end_date ?? null) as string | null;
    if (values.set_dates === true || datesGiven) {
      if (!start || !end) {
        throw invalid(start ? 'end_date' : 'start_date', 'Dates are used only as a pair: give both start_date and end_date (YYYY-MM-DD), or set set_dates to false.');
      }
      if (start.slice(0, 10) > end.slice(0, 10)) throw invalid('end_date', "'end_date' must not be before 'start_date'.");
      values.start_date = dayStart(start);
      values.end_date = dayEnd(end);
      values.set_dates = true;
    } else if (ctx.op === 'create') {
      values.set_dates = false;
      values.start_date = null;
      values.end_date = null;
    }
  },
};

/** Fields that only make sense for some cart item types. */
const FIELD_TYPES: Record<string, readonly string[]> = {
  custom_html: ['html5', 'raw'],
  alt_text: ['image'],
  template: ['template'],
  template_variables: ['template'],
};
const AUCTION_FIELDS = ['bid_amount', 'daily_limit', 'total_limit'];

/**
 * Cart items: the cart must sit in the portal of the path and the portal zone in the same portal; the
 * fields must fit the item's type and the zone's pricing model; template variables must be those of the
 * native template. cpm, cpc, quantity and multipler are taken from the portal zone.
 */
const cartItem: KindHooks = {
  async prepare(values, ctx) {
    const t = ctx.tenant;
    const merged: Attributes = { ...ctx.existing, ...values };
    if (ctx.op === 'create') {
      const cartAttrs = await ownAttributes(ctx.db, t, 'cart', values.cart as number);
      if (!cartAttrs) throw fail.notFound('cart', values.cart as number);
      if (values.portal !== undefined && values.portal !== cartAttrs.portal) {
        throw new ServiceError(status.NOT_FOUND, `No cart with id ${values.cart} exists in portal ${values.portal}.`, 'resource_not_found_error');
      }
      values.portal = cartAttrs.portal;
      merged.portal = cartAttrs.portal;
    }
    const zone = await ownAttributes(ctx.db, t, 'portal_zone', merged.portal_zone as number);
    if (!zone) throw fail.notFound('portal zone', merged.portal_zone as number);
    if (zone.portal !== merged.portal) {
      throw fail.invalid([{ field: 'portal_zone', type: 'invalid_reference', message: `'portal_zone' ${merged.portal_zone} belongs to another portal than this cart.` }]);
    }
    const errors: ParameterError[] = [];
    const type = merged.type as string;
    for (const [field, types] of Object.entries(FIELD_TYPES)) {
      if (given(merged[field]) && !types.includes(type)) {
        errors.push({ field, type: 'invalid_value', message: `'${field}' applies only to cart items of type ${types.join(' or ')}; this one is ${type}.` });
      }
    }
    if ((type === 'html5' || type === 'raw') && !given(merged.custom_html)) {
      errors.push({ field: 'custom_html', type: 'missing_field', message: `'custom_html' is required for a cart item of type ${type}.` });
    }
    if (type === 'template' && !given(merged.template)) {
      errors.push({ field: 'template', type: 'missing_field', message: "'template' is required for a cart item of type template." });
    }
    const auction = zone.pricing_model === 'auction';
    for (const field of AUCTION_FIELDS) {
      if (!auction && given(merged[field])) {
        errors.push({ field, type: 'invalid_value', message: `'${field}' applies only to auction portal zones; portal zone ${merged.portal_zone} is ${zone.pricing_model}.` });
      }
    }
    if (auction) {
      for (const field of ['bid_amount', 'total_limit']) {
        if (!given(merged[field])) errors.push({ field, type: 'missing_field', message: `'${field}' is required for a cart item of an auction portal zone.` });
      }
      if (given(merged.daily_limit) && given(merged.total_limit) && (merged.daily_limit as number) > (merged.total_limit as number)) {
        errors.push({ field: 'daily_limit', type: 'invalid_value', message: "'daily_limit' must not exceed 'total_limit'." });
      }
    }
    if (errors.length) throw fail.invalid(errors);
    if (type === 'image' && given(merged.file) && values.file !== undefined) {
      if (!(await remoteResource(t, 'image_creative', merged.file as number))) {
        throw fail.invalid([{ field: 'file', type: 'invalid_reference', message: `'file' refers to image creative ${merged.file}, which does not exist.` }]);
      }
    }
    if (type === 'template' && (values.template !== undefined || values.template_variables !== undefined || values.type !== undefined)) {
      await checkTemplateVariables(t, merged.template as number, (merged.template_variables ?? []) as Attributes[]);
    }
    values.cpm = zone.cpm ?? null;
    values.cpc = zone.cpc ?? null;
    values.quantity = zone.quantity ?? null;
    values.multipler = zone.multipler ?? 1;
  },
};

/** Each variable of the native template once, with a text or numeric value; non-optional ones required. */
async function checkTemplateVariables(t: Tenant, templateId: number, given: Attributes[]): Promise<void> {
  const template = await remoteResource(t, 'native_template', templateId);
  if (!template) throw fail.invalid([{ field: 'template', type: 'invalid_reference', message: `'template' refers to native template ${templateId}, which does not exist.` }]);
  const defs = ((template.attributes?.variables ?? []) as Attributes[]).filter((d) => typeof d.id === 'number');
  const byId = new Map(defs.map((d) => [d.id as number, d]));
  const seen = new Set<number>();
  const bad = (message: string) => fail.invalid([{ field: 'template_variables', type: 'invalid_value', message }]);
  for (const [i, v] of given.entries()) {
    if (!isPlainObject(v)) throw bad(`'template_variables' element ${i} must be an object {id, value}.`);
    const extra = Object.keys(v).find((k) => k !== 'id' && k !== 'value');
    if (extra) throw bad(`'template_variables' element ${i} has unknown member '${extra}' (expected id and value).`);
    const id = v.id as number;
    const def = byId.get(id);
    if (!def) throw bad(`'template_variables' element ${i}: native template ${templateId} has no variable ${id}; its variables are ${[...byId.keys()].join(', ') || 'none'}.`);
    if (seen.has(id)) throw bad(`'template_variables' gives variable ${id} more than once.`);
    seen.add(id);
    const value = v.value;
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
      throw bad(`'template_variables' element ${i} needs a 'value' that is text or a number.`);
    }
    if (typeof def.max_length === 'number' && String(value).length > def.max_length) {
      throw bad(`'template_variables' variable ${id} (${def.name}) must be at most ${def.max_length} characters long.`);
    }
  }
  const missing = defs.filter((d) => !d.optional && !seen.has(d.id as number));
  if (missing.length) throw bad(`'template_variables' must give variable ${missing[0].id} (${missing[0].name}) of native template ${templateId}.`);
}

async function emailTaken(ctx: HookContext, email: string): Promise<boolean> {
  const q = ctx.db('resources')
    .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind: 'customer' })
    .whereRaw("lower(attributes->>'email') = lower(?)", [email]);
  if (ctx.id) q.whereNot('id', ctx.id);
  return !!(await q.first('id'));
}

const accounts = (t: Tenant) => resourcesApi('accounts', tenantMetadata(t));

/**
 * Customers: one per email in an account and mode (409 otherwise; a unique index settles races), the
 * password kept only as a hash, and a linked advertiser created in accounts. The wallet balance is read
 * from the wallets table.
 */
const customer: KindHooks = {
  async prepare(values, ctx) {
    if (typeof values.email === 'string' && (await emailTaken(ctx, values.email))) {
      throw fail.conflict(`A customer with email ${values.email} already exists.`);
    }
    if (typeof values.password === 'string') values.password_hash = await hashPassword(values.password);
    delete values.password;
    const merged = { ...ctx.existing, ...values };
    const displayName =
      (merged.company_name as string | null) || [merged.first_name, merged.last_name].filter(Boolean).join(' ') || (merged.email as string);
    if (ctx.op === 'create') {
      const adv = await accounts(ctx.tenant).create({ kind: 'advertiser', attributes: { name: displayName.slice(0, 255), email: values.email } });
      values.advertiser = adv.id;
      values.last_accessed = null;
    } else if (ctx.existing?.advertiser && ['email', 'first_name', 'last_name', 'company_name'].some((f) => values[f] !== undefined)) {
      await accounts(ctx.tenant).update({ kind: 'advertiser', id: ctx.existing.advertiser as number, attributes: { name: displayName.slice(0, 255), email: merged.email } });
    }
  },
  async abandon(values, ctx) {
    // The customer was not stored (a concurrent create took the email): drop the advertiser made for it.
    if (ctx.op === 'create' && typeof values.advertiser === 'number') {
      await accounts(ctx.tenant).delete({ kind: 'advertiser', id: values.advertiser as number }).catch(() => undefined);
    }
  },
  async decorate(items, t, db) {
    const rows: { customer_id: number; balance: string }[] = await db('wallets')
      .where({ account_id: t.accountId, mode: t.mode })
      .whereIn('customer_id', items.map((i) => i.id))
      .select('customer_id', db.raw('balance::text as balance'));
    const byId = new Map(rows.map((r) => [Number(r.customer_id), moneyNumber(r.balance)]));
    for (const item of items) item.attributes = { ...item.attributes, balance: byId.get(item.id) ?? 0 };
  },
};

/** Fills `field` of each item from a numeric column of `table` keyed by `idColumn` (exact decimal text). */
function moneyFrom(table: string, idColumn: string, column: string, field: string): KindHooks['decorate'] {
  return async (items, t, db) => {
    const rows: { id: number; amount: string }[] = await db(table)
      .where({ account_id: t.accountId, mode: t.mode })
      .whereIn(idColumn, items.map((i) => i.id))
      .select({ id: idColumn }, db.raw(`${column}::text as amount`));
    const byId = new Map(rows.map((r) => [Number(r.id), moneyNumber(r.amount)]));
    // Orders stored before the numeric tables keep the value in their attributes.
    for (const item of items) if (byId.has(item.id)) item.attributes = { ...item.attributes, [field]: byId.get(item.id)! };
  };
}

/** Orders: the total (two decimals) from order_totals. */
const order: KindHooks = { decorate: moneyFrom('order_totals', 'order_id', 'total', 'total') };
/** Order items: the exact, unrounded price (a CPM of 0.004 for one impression costs 0.000004). */
const orderItem: KindHooks = { decorate: moneyFrom('order_item_prices', 'order_item_id', 'price', 'price') };

export const hooks: Record<string, KindHooks> = { portal_zone: portalZone, cart, cart_item: cartItem, customer, order, order_item: orderItem };
