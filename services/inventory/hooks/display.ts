import type { Json, ParameterError } from '../../shared/catalog';
import { fail } from '../../shared/errors';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';

/**
 * Cross-field rules of the display resources (zones, campaigns, image and flash ad items, campaign
 * assignments) that a field-by-field description cannot state.
 */

function invalid(field: string, message: string): never {
  throw fail.invalid([{ field, type: 'invalid_value', message } satisfies ParameterError]);
}

/** Attributes of an active resource of this service, in the caller's account and mode. */
async function loadAttributes(ctx: HookContext, kind: string, id: number): Promise<Attributes | undefined> {
  const row = await ctx
    .db('resources')
    .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, kind, id })
    .whereNull('archived_at')
    .first('attributes');
  return row?.attributes as Attributes | undefined;
}

/** What the resource will hold once this write is stored. */
const merged = (values: Attributes, ctx: HookContext): Attributes => ({ ...(ctx.existing ?? {}), ...values });

const given = (v: Json | undefined) => v !== undefined && v !== null && v !== '';

/**
 * A flexible type fixes the size: a zone or campaign takes the type's size when it gives none, and
 * anything it gives (an image always gives one) must match the type's maximum width and height exactly.
 */
async function matchFlexibleType(values: Attributes, ctx: HookContext, sizeRequired: boolean): Promise<boolean> {
  const all = merged(values, ctx);
  const typeId = all.flexible_type;
  if (!given(typeId)) return false;
  const type = await loadAttributes(ctx, 'flexible_type', typeId as number);
  if (!type) invalid('flexible_type', `'flexible_type' refers to flexible type ${typeId}, which does not exist.`);
  for (const dim of ['width', 'height'] as const) {
    const want = type[dim] as number;
    const have = all[dim];
    // 0 (the default of zones and campaigns) means no size was chosen.
    const unset = have === undefined || have === null || (!sizeRequired && have === 0);
    if (unset) values[dim] = want;
    else if (have !== want) invalid(dim, `'${dim}' must be ${want} to match flexible type ${typeId} (${type.width}x${type.height}).`);
  }
  return true;
}

const standardZone: KindHooks = {
  async prepare(values, ctx) {
    if (ctx.op === 'create') values.deleted = false;
    const flexible = await matchFlexibleType(values, ctx, false);
    const all = merged(values, ctx);
    if (all.dimensions === 'dynamic') {
      for (const dim of ['width', 'height'] as const) {
        if (values[dim] !== undefined && values[dim] !== 0) invalid(dim, `'${dim}' must be 0 or not given when dimensions are dynamic.`);
        values[dim] = 0;
      }
      if (flexible) invalid('dimensions', `'dimensions' must be fixed for a zone of a flexible type.`);
    } else {
      for (const dim of ['width', 'height'] as const) {
        if (!((all[dim] as number) > 0)) invalid(dim, `'${dim}' is required (a positive integer) when dimensions are fixed.`);
      }
    }
  },
};

const standardCampaign: KindHooks = {
  async prepare(values, ctx) {
    if (ctx.op === 'create') values.deleted = false;
    await matchFlexibleType(values, ctx, false);
  },
};

/** An ad item shows a stored creative or an image at a URL: after every write it has one of them. */
function requireCreative(values: Attributes, ctx: HookContext, onlyOneOnCreate: boolean): void {
  if (ctx.op === 'create' && onlyOneOnCreate && given(values.creative) && given(values.creative_url)) {
    invalid('creative_url', `Give only one of 'creative' and 'creative_url'.`);
  }
  const all = merged(values, ctx);
  if (!given(all.creative) && !given(all.creative_url)) {
    const field = ctx.op === 'update' && values.creative === null ? 'creative' : 'creative_url';
    invalid(field, `One of 'creative' and 'creative_url' is required${ctx.op === 'update' ? ' to remain set' : ''}.`);
  }
}

const imageAdItem: KindHooks = {
  async prepare(values, ctx) {
    if (ctx.op === 'create') values.is_self_serve = 'false';
    requireCreative(values, ctx, false);
    await matchFlexibleType(values, ctx, true);
  },
};

const flashAdItem: KindHooks = {
  prepare(values, ctx) {
    requireCreative(values, ctx, true);
  },
};

const campaignAssignment: KindHooks = {
  async prepare(values, ctx) {
    if (values.active !== undefined) values.status = values.active ? 'active' : 'paused';
    if (ctx.op !== 'create') return;
    // References were checked to exist; a flexible campaign takes only ad items of its flexible type.
    const campaign = values.campaign as { id: number; type: string };
    const ad = values.advertisement as { id: number; type: string };
    const c = await loadAttributes(ctx, campaign.type, campaign.id);
    if (!c || !given(c.flexible_type)) return;
    const a = await loadAttributes(ctx, ad.type, ad.id);
    if (a?.flexible_type !== c.flexible_type) {
      invalid('advertisement', `Campaign ${campaign.id} is of flexible type ${c.flexible_type}: only an ad item of that flexible type can be assigned to it.`);
    }
  },
};

export const displayHooks: Record<string, KindHooks> = {
  standard_zone: standardZone,
  standard_campaign: standardCampaign,
  image_ad_item: imageAdItem,
  flash_ad_item: flashAdItem,
  campaign_assignment: campaignAssignment,
};
