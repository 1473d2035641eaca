import * as accounts from './kinds/accounts';
import * as inventory from './kinds/inventory';
import * as adItems from './kinds/ad-items';
import * as creatives from './kinds/creatives';
import * as delivery from './kinds/delivery';
import * as selfserve from './kinds/selfserve';
import * as reporting from './kinds/reporting';
import * as targeting from './kinds/targeting';
import * as video from './kinds/video';
import * as vast4 from './kinds/vast-4';
import * as drafts from './kinds/drafts';
import * as programmatic from './kinds/programmatic';
import type { ApiVersion, FieldSpec, KindGroup, ResourceKind } from './types';

export * from './types';
export { DISPLAY_AD_ITEM_KINDS } from './kinds/fields';

/** Each module describes the kinds (and "all types" groups) of one area. */
const MODULES: { kinds: readonly ResourceKind[]; groups?: readonly KindGroup[] }[] = [
  accounts, inventory, adItems, creatives, delivery, targeting, video, vast4, programmatic, drafts, selfserve, reporting,
];

/** Every resource kind of the platform. Adding a resource means adding its description to a module. */
export const KINDS: readonly ResourceKind[] = MODULES.flatMap((m) => m.kinds);

/** List-only collections spanning several kinds ("all types"). */
export const GROUPS: readonly KindGroup[] = MODULES.flatMap((m) => m.groups ?? []);

const byName = new Map(KINDS.map((k) => [k.kind, k]));

export function findKind(name: string): ResourceKind | undefined {
  return byName.get(name);
}

export function getKind(name: string): ResourceKind {
  const k = byName.get(name);
  if (!k) throw new Error(`unknown resource kind ${name}`);
  return k;
}

/** The kind whose `object` is `object` in `version` (v1 `image_banner` -> `image_ad_item`). */
export function kindForObject(version: ApiVersion, object: string): ResourceKind | undefined {
  return KINDS.find((k) => k.views[version]?.object === object);
}

export interface ChildLink {
  child: ResourceKind;
  field: string;
  spec: FieldSpec;
}

export interface IdListLink {
  child: ResourceKind;
  /** Where the list is: a field, or a field and its member. */
  path: string[];
}

/** Id lists (`idsOf`) of any kind that may hold ids of `kind`: at the top, or one member deep. */
export function idListsTo(kind: string): IdListLink[] {
  const links: IdListLink[] = [];
  for (const child of KINDS) {
    for (const [field, spec] of Object.entries(child.fields)) {
      if (spec.readOnly) continue;
      if (spec.type === 'array' && spec.idsOf === kind) links.push({ child, path: [field] });
      for (const [member, sub] of Object.entries(spec.properties ?? {})) {
        if (sub.type === 'array' && sub.idsOf === kind) links.push({ child, path: [field, member] });
      }
    }
  }
  return links;
}

/** Fields of any kind that reference `parentKind` (by `ref` or a typed_ref's `refKinds`). */
export function referencesTo(parentKind: string): ChildLink[] {
  const links: ChildLink[] = [];
  for (const child of KINDS) {
    for (const [field, spec] of Object.entries(child.fields)) {
      if (spec.readOnly) continue;
      if (spec.ref === parentKind || spec.refKinds?.includes(parentKind)) links.push({ child, field, spec });
    }
  }
  return links;
}
