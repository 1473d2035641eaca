import type { KindGroup, ResourceKind } from '../types';

/** Reporting resources. */
export const kinds: ResourceKind[] = [];

export const groups: KindGroup[] = [];
