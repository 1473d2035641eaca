import type { FieldSpec, KindGroup, ResourceKind } from '../types';
import { customHtmlAdItem, nativeAdItem, richMediaAdItem } from './ad-items';
import { placement, schedule } from './delivery';
import { campaignAssignment, imageAdItem, standardCampaign } from './inventory';
import { vastAdItem, vastCampaign, vastCampaignAssignment, vastPlacement, vastSchedule } from './video';

/**
 * Campaign drafts (the reference's /v2/drafts/... group). A draft holds, under `draft`, any subset of
 * the fields of the real resource it will become, plus the ids that tie it to its draft campaign.
 * Drafts serve nothing (decision data streams only the real kinds); POST .../{id}/save turns a draft
 * campaign and its parts into real resources at once (services/inventory/drafts.ts), running the
 * real kinds' validation and hooks then, and marks the drafts converted (`asset_created`).
 *
 * The `draft` member's fields are derived from the real kind's v2 view, so a field added to a real
 * kind is at once accepted in its draft. References the save resolves (a draft assignment's campaign
 * and ad item, a draft placement's advertisement) are left out of `draft`: the *_draft_id fields name
 * the draft counterparts instead.
 */

/** The real kind's v2 input fields, each optional and without its default: a draft holds only what was set. */
function partialFields(real: ResourceKind, omit: readonly string[]): Record<string, FieldSpec> {
  const names = real.views.v2?.fields ?? Object.keys(real.fields);
  const out: Record<string, FieldSpec> = {};
  for (const name of names) {
    const spec = real.fields[name];
    if (!spec || spec.readOnly || spec.writeOnly || omit.includes(name)) continue;
    const { required: _required, default: _default, createOnly: _createOnly, parent: _parent, onRefDelete: _onRefDelete, ...rest } = spec;
    out[name] = rest;
  }
  return out;
}

export interface DraftOf {
  /** Draft kind name (`draft_vast_campaign`). */
  kind: string;
  real: ResourceKind;
  /** v2 collection path. */
  path: string;
  /** The reference's name of the field holding the real resource's id once saved (`created_vast_campaign_id`). */
  createdField: string;
  /** Fields before `draft`: the draft ids tying it to its campaign, and other metadata. */
  links?: Record<string, FieldSpec>;
  /** Real fields the save sets (or the links replace), not accepted under `draft`. */
  omit?: readonly string[];
}

/** Every draft kind by its name, with what it is a draft of (read by inventory's save). */
export const DRAFTS = new Map<string, DraftOf>();

function draftKind(d: DraftOf): ResourceKind {
  DRAFTS.set(d.kind, d);
  const draft: FieldSpec = { type: 'object', required: true, closed: true, maxBytes: 131072, properties: partialFields(d.real, d.omit ?? []) };
  return {
    kind: d.kind,
    service: 'inventory',
    title: `draft ${d.real.title}`,
    fields: {
      ...d.links,
      draft,
      asset_created: { type: 'boolean', readOnly: true },
      [d.createdField]: { type: 'ref', ref: d.real.kind, readOnly: true, nullable: true },
    },
    views: { v2: { object: d.kind, path: d.path } },
  };
}

/** A draft's campaign: a draft owns its parts, so deleting the campaign draft deletes them. */
const ofCampaign = (ref: string): FieldSpec => ({ type: 'ref', ref, required: true, parent: true, createOnly: true });
/** A draft schedule named instead of a real `draft.schedule`; it must be of the same draft campaign (hooks). */
const scheduleDraft = (ref: string): FieldSpec => ({ type: 'ref', ref, nullable: true, default: null, onRefDelete: 'nullify' });

// VAST: every part names its draft VAST campaign.

export const draftVastCampaign = draftKind({ kind: 'draft_vast_campaign', real: vastCampaign, path: '/v2/drafts/vast-campaigns', createdField: 'created_vast_campaign_id' });

export const draftVastAdItem = draftKind({
  kind: 'draft_vast_ad_item',
  real: vastAdItem,
  path: '/v2/drafts/vast-ad-items',
  createdField: 'created_vast_ad_item_id',
  links: { vast_campaign_draft_id: ofCampaign('draft_vast_campaign') },
});

export const draftVastSchedule = draftKind({
  kind: 'draft_vast_schedule',
  real: vastSchedule,
  path: '/v2/drafts/vast-schedules',
  createdField: 'created_vast_schedule_id',
  links: { vast_campaign_draft_id: ofCampaign('draft_vast_campaign') },
});

export const draftVastCampaignAssignment = draftKind({
  kind: 'draft_vast_campaign_assignment',
  real: vastCampaignAssignment,
  path: '/v2/drafts/vast-campaign-assignments',
  createdField: 'created_vast_campaign_assignment_id',
  links: {
    vast_campaign_draft_id: ofCampaign('draft_vast_campaign'),
    vast_ad_item_draft_id: { type: 'ref', ref: 'draft_vast_ad_item', required: true, createOnly: true, onRefDelete: 'delete' },
    // The reference's assignments can carry a schedule; this platform's cannot (only null is taken, hooks).
    schedule_draft_id: scheduleDraft('draft_vast_schedule'),
  },
  omit: ['campaign', 'ad_item'],
});

export const draftVastPlacement = draftKind({
  kind: 'draft_vast_placement',
  real: vastPlacement,
  path: '/v2/drafts/vast-placements',
  createdField: 'created_vast_placement_id',
  links: { vast_campaign_draft_id: ofCampaign('draft_vast_campaign'), schedule_draft_id: scheduleDraft('draft_vast_schedule') },
  // The placement places its campaign: the save sets the advertisement to the new VAST campaign.
  omit: ['advertisement'],
});

// Display: ad items and schedules stand alone and join a draft campaign through its assignments and placements.

export const draftStandardCampaign = draftKind({ kind: 'draft_standard_campaign', real: standardCampaign, path: '/v2/drafts/campaigns/standard', createdField: 'created_campaign_id' });

/** The reference's `ad_item_type` of each display ad item draft. */
export const DRAFT_AD_ITEM_TYPES: Record<string, string> = {
  draft_image_ad_item: 'image',
  draft_rich_media_ad_item: 'html5',
  draft_custom_html_ad_item: 'raw',
  draft_native_ad_item: 'native',
};

const adItemDraft = (kind: string, real: ResourceKind, segment: string) =>
  draftKind({
    kind,
    real,
    path: `/v2/drafts/ad-items/${segment}`,
    createdField: 'created_ad_item_id',
    links: { ad_item_type: { type: 'string', readOnly: true } },
  });

export const draftImageAdItem = adItemDraft('draft_image_ad_item', imageAdItem, 'image');
export const draftCustomHtmlAdItem = adItemDraft('draft_custom_html_ad_item', customHtmlAdItem, 'custom-html');
export const draftNativeAdItem = adItemDraft('draft_native_ad_item', nativeAdItem, 'native');
export const draftRichMediaAdItem = adItemDraft('draft_rich_media_ad_item', richMediaAdItem, 'rich-media');
export const DRAFT_AD_ITEM_KINDS = Object.keys(DRAFT_AD_ITEM_TYPES);

export const draftSchedule = draftKind({ kind: 'draft_schedule', real: schedule, path: '/v2/drafts/schedules', createdField: 'created_schedule_id' });

export const draftCampaignAssignment = draftKind({
  kind: 'draft_campaign_assignment',
  real: campaignAssignment,
  path: '/v2/drafts/campaign-assignments',
  createdField: 'created_campaign_assignment_id',
  links: {
    campaign_draft_id: ofCampaign('draft_standard_campaign'),
    // An integer, as the reference gives it: the id of a draft ad item of any type (checked in hooks).
    ad_item_draft_id: { type: 'integer', required: true, min: 1, createOnly: true },
    schedule_draft_id: scheduleDraft('draft_schedule'),
  },
  omit: ['campaign', 'advertisement'],
});

export const draftPlacement = draftKind({
  kind: 'draft_placement',
  real: placement,
  path: '/v2/drafts/placements',
  createdField: 'created_placement_id',
  links: {
    campaign_draft_id: ofCampaign('draft_standard_campaign'),
    schedule_draft_id: scheduleDraft('draft_schedule'),
    // A real standard or email zone, or a real channel: exactly one (hooks). The reference names them here, not under `draft`.
    zone_id: { type: 'integer', nullable: true, min: 1, default: null },
    channel_id: { type: 'ref', ref: 'channel', nullable: true, default: null, onRefDelete: 'nullify' },
  },
  omit: ['advertisement', 'zone', 'channel'],
});

export const kinds: ResourceKind[] = [
  draftVastCampaign, draftVastAdItem, draftVastSchedule, draftVastCampaignAssignment, draftVastPlacement,
  draftStandardCampaign, draftImageAdItem, draftCustomHtmlAdItem, draftNativeAdItem, draftRichMediaAdItem, draftSchedule, draftCampaignAssignment, draftPlacement,
];

/** GET /v2/drafts/ad-items lists the display ad item drafts of every type. */
export const groups: KindGroup[] = [{ version: 'v2', path: '/v2/drafts/ad-items', kinds: DRAFT_AD_ITEM_KINDS }];
