import type { Json, ParameterError } from '../../shared/catalog';
import { DRAFT_AD_ITEM_KINDS, DRAFT_AD_ITEM_TYPES, DRAFTS } from '../../shared/catalog/kinds/drafts';
import { fail } from '../../shared/errors';
import type { Attributes, HookContext, KindHooks } from '../../shared/resource-store';
import { given, loadAttributes, merged, throwIf } from './common';

/**
 * Rules of the draft kinds. A draft is checked field by field when written (the catalog derives
 * `draft`'s members from the real kind); the real kind's cross-field rules and hooks run when the draft
 * campaign is saved (services/inventory/drafts.ts), so a draft is validated as what it becomes.
 */

/** Whether an active resource of one of `kinds` with this id is the caller's; its kind when it is. */
export async function kindOf(ctx: Pick<HookContext, 'db' | 'tenant'>, kinds: readonly string[], id: number): Promise<string | undefined> {
  const row = await ctx
    .db('resources')
    .where({ account_id: ctx.tenant.accountId, mode: ctx.tenant.mode, id })
    .whereIn('kind', kinds)
    .whereNull('archived_at')
    .first('kind');
  return row?.kind as string | undefined;
}

/** The draft campaign link of each kind that has one. */
const CAMPAIGN_LINK: Record<string, string> = {
  draft_vast_ad_item: 'vast_campaign_draft_id',
  draft_vast_schedule: 'vast_campaign_draft_id',
  draft_vast_campaign_assignment: 'vast_campaign_draft_id',
  draft_vast_placement: 'vast_campaign_draft_id',
  draft_campaign_assignment: 'campaign_draft_id',
  draft_placement: 'campaign_draft_id',
};

function draftHooks(kind: string): KindHooks {
  const d = DRAFTS.get(kind)!;
  const link = CAMPAIGN_LINK[kind];
  return {
    async prepare(values, ctx) {
      if (ctx.op === 'update') {
        // Converted drafts are the record of what was saved (the reference's 405 for a second save).
        if (ctx.existing?.asset_created === true) throw fail.notModifiable('This draft has already been converted.');
        // PUT's `draft` holds the fields to change: the others stay as they were.
        if (values.draft !== undefined) values.draft = { ...((ctx.existing?.draft as Attributes | undefined) ?? {}), ...(values.draft as Attributes) };
      } else {
        values.asset_created = false;
        values[d.createdField] = null;
        if (DRAFT_AD_ITEM_TYPES[kind]) values.ad_item_type = DRAFT_AD_ITEM_TYPES[kind];
      }
      const all = merged(values, ctx);
      const draft = (all.draft ?? {}) as Attributes;
      const errors: ParameterError[] = [];
      // The reference requires an ad item draft's name up front (its list shows drafts by name).
      if (DRAFT_AD_ITEM_TYPES[kind] && !given(draft.name)) errors.push({ field: 'draft', type: 'missing_field', message: "'draft.name' is required." });
      const campaign = link ? (all[link] as number) : undefined;
      // Parts named by id must be drafts of the same draft campaign.
      const sameCampaign = async (field: string, partKind: string) => {
        const id = values[field];
        if (typeof id !== 'number') return;
        const part = await loadAttributes(ctx, partKind, id);
        if (part && part[link] !== campaign) {
          errors.push({ field, type: 'invalid_value', message: `'${field}' must name a draft of the same draft campaign (${link} ${campaign}).` });
        }
      };
      if (kind === 'draft_vast_campaign_assignment') await sameCampaign('vast_ad_item_draft_id', 'draft_vast_ad_item');
      if (kind === 'draft_vast_placement') await sameCampaign('schedule_draft_id', 'draft_vast_schedule');
      if (kind === 'draft_campaign_assignment' || kind === 'draft_vast_campaign_assignment') {
        // Assignments here carry no schedule (schedules belong to placements), so a value would do nothing.
        if (given(values.schedule_draft_id)) {
          errors.push({ field: 'schedule_draft_id', type: 'invalid_value', message: "'schedule_draft_id' must be null: campaign assignments have no schedule on this platform; give the draft placement its schedule." });
        }
      }
      if (kind === 'draft_campaign_assignment' && typeof values.ad_item_draft_id === 'number') {
        if (!(await kindOf(ctx, DRAFT_AD_ITEM_KINDS, values.ad_item_draft_id))) {
          errors.push({ field: 'ad_item_draft_id', type: 'invalid_reference', message: `'ad_item_draft_id' refers to draft ad item ${values.ad_item_draft_id}, which does not exist.` });
        }
      }
      if (kind === 'draft_placement') {
        if (typeof values.zone_id === 'number' && !(await kindOf(ctx, ['standard_zone', 'email_zone'], values.zone_id))) {
          errors.push({ field: 'zone_id', type: 'invalid_reference', message: `'zone_id' refers to zone ${values.zone_id}, which does not exist.` });
        }
        if (given(all.zone_id) && given(all.channel_id)) {
          errors.push({ field: 'channel_id', type: 'invalid_value', message: "Give one of 'zone_id' and 'channel_id': a placement goes into a zone or onto a channel." });
        }
      }
      if ((kind === 'draft_placement' || kind === 'draft_vast_placement') && given(all.schedule_draft_id) && given(draft.schedule as Json)) {
        errors.push({ field: 'schedule_draft_id', type: 'invalid_value', message: "Give one of 'schedule_draft_id' and 'draft.schedule', not both." });
      }
      throwIf(errors);
    },
  };
}

export const draftHooksByKind: Record<string, KindHooks> = Object.fromEntries([...DRAFTS.keys()].map((k) => [k, draftHooks(k)]));
