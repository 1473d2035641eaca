import type { KindGroup, ResourceKind } from '../types';

/** v2-only inventory resources: custom HTML, native and rich media ad items, companions, creatives, media groups, native templates, placements, schedules, VAST ad items. */
export const kinds: ResourceKind[] = [];

export const groups: KindGroup[] = [];
