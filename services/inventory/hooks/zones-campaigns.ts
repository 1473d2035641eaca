import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { given, invalid, loadAttributes, merged } from './common';
import { preparePmpDeals } from './programmatic';

/**
 * Zones, campaigns and campaign assignments: dynamic or fixed dimensions, flexible types (which fix
 * the size of zones, campaigns and image ad items) and what a flexible campaign accepts.
 */

/**
 * A flexible type fixes the size: a zone or campaign takes the type's size when it gives none, and
 * anything it gives (an image always gives one) must match the type's maximum width and height exactly.
 */
export async function matchFlexibleType(values: Attributes, ctx: HookContext, sizeRequired: boolean): Promise<boolean> {
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
    await preparePmpDeals(values, ctx);
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

export const zoneAndCampaignHooks: Record<string, KindHooks> = {
  standard_zone: standardZone,
  standard_campaign: standardCampaign,
  campaign_assignment: campaignAssignment,
};
