import type { KindHooks } from '../../shared/resource-store';
import { adItemHooks } from './ad-items';
import { draftHooksByKind } from './drafts';
import { nativeHooks } from './native';
import { placementHooks } from './placements';
import { programmaticHooks } from './programmatic';
import { targetingHooks } from './targeting';
import { videoHooks } from './video';
import { vast4Hooks } from './vast-4';
import { zoneAndCampaignHooks } from './zones-campaigns';

/**
 * The inventory's hooks by domain: rules of its kinds that a field-by-field description cannot state
 * (cross-field and cross-resource checks, defaults computed on create, ids of sub-objects).
 */
export const inventoryHooks: Record<string, KindHooks> = {
  ...zoneAndCampaignHooks,
  ...adItemHooks,
  ...nativeHooks,
  ...placementHooks,
  ...targetingHooks,
  ...videoHooks,
  ...vast4Hooks,
  ...programmaticHooks,
  ...draftHooksByKind,
};
