import type { KindGroup, ResourceKind } from '../types';

/** Issue 3 resources shared by v1 and v2: zones, campaigns, image/flash ad items (banners), campaign assignments, flexible types. */
export const kinds: ResourceKind[] = [];

export const groups: KindGroup[] = [];
