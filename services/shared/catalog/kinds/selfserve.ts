import type { KindGroup, ResourceKind } from '../types';

/** Self-serve: portals, portal zones, carts, cart items, customers, wallets, orders. */
export const kinds: ResourceKind[] = [];

export const groups: KindGroup[] = [];
