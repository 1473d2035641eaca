import type { Knex } from 'knex';
import type { Json, ParameterError } from '../../shared/catalog';
import { fail } from '../../shared/errors';
import type { Attributes, HookContext } from '../../shared/resource-store';
import { SUB_ID_SEQUENCE } from '../migrations';

/** Helpers the inventory's hooks share: refusals, reading own resources, sub-object ids. */

export function invalid(field: string, message: string): never {
  throw fail.invalid([{ field, type: 'invalid_value', message } satisfies ParameterError]);
}

export function throwIf(errors: ParameterError[]): void {
  if (errors.length) throw fail.invalid(errors);
}

/** Attributes of an active resource of this service, in the caller's account and mode. */
export async function loadAttributes(ctx: HookContext, kind: string, id: number): Promise<Attributes | undefined> {
  const row = await ctx
    .db('resources')
    .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind, id })
    .whereNull('archived_at')
    .first('attributes');
  return row?.attributes as Attributes | undefined;
}

/** What the resource will hold once this write is stored. */
export const merged = (values: Attributes, ctx: HookContext): Attributes => ({ ...(ctx.existing ?? {}), ...values });

export const given = (v: Json | undefined) => v !== undefined && v !== null && v !== '';

export async function nextIds(db: Knex, n: number): Promise<number[]> {
  if (n === 0) return [];
  const { rows } = await db.raw(`select nextval('${SUB_ID_SEQUENCE}')::int as id from generate_series(1, ?)`, [n]);
  return (rows as { id: number }[]).map((r) => Number(r.id));
}

/** Gives an id to each element without one; ids given must be ones the resource already had. */
export async function assignIds(values: Attributes, field: string, ctx: HookContext, errors: ParameterError[]): Promise<void> {
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
