import type { DecisionEntity, DecisionPlacement, DecisionSchedule } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Json, ResourceKind } from '../shared/catalog/types';
import type { FreqEntry } from '../serving/targeting/frequency';
import type { GeoLocation } from '../serving/targeting/geo';
import type { Platform } from '../serving/targeting/platform';

/**
 * A targeting rule, whole in one module of this folder: the catalog kinds of its target resources,
 * their projection into decision data (inventory), how serving finds a placement's target in its
 * snapshot, and the verdict for one request. A module registers its rule; adding a rule is adding a
 * module (and its projection's message in decision_data.proto).
 */

/** What a request tells about its visitor. */
export interface RequestFacts {
  now: Date;
  geo?: GeoLocation;
  platform: Platform;
  screenWidth?: number;
  keywords: readonly string[];
  /** `_abdk` / `_abdk_json` key-value pairs. */
  data: Readonly<Record<string, string>>;
  frequency: Map<number, FreqEntry>;
  /** The account's time zone, for day-parting that uses it. */
  accountTimezone: string;
}

export type Verdict = { ok: true; preferred: boolean } | { ok: false; rule: string; detail: string };

/** A candidate's placement as serving holds it, for a rule to find its target in. */
export interface PlacementContext {
  placementId: number;
  placement: DecisionPlacement;
  placementEntity: DecisionEntity;
  schedule?: DecisionSchedule;
  get(kind: string, id: number): DecisionEntity | undefined;
  /** A parsed form of an entity's target, made once per entity version. */
  parsed<T>(e: DecisionEntity, make: () => T): T;
}

export type Attributes = Record<string, Json>;

export interface TargetingRule<T> {
  /** The rule's name: what decision debug shows when it excludes an ad, and its key in `Targets`. */
  name: string;
  /** The catalog kinds of its target resources. */
  kinds?: readonly ResourceKind[];
  /** Inventory: each kind's stored attributes as decision data. */
  project?: Readonly<Record<string, (a: Attributes) => Partial<DecisionEntity>>>;
  /** Serving: whether an entity of the rule makes serving need the request's location (GeoIP). */
  needsGeo?(e: DecisionEntity): boolean;
  /** Serving: the placement's target under this rule; undefined when it names none. */
  resolve(p: PlacementContext): T | undefined;
  /** Serving: whether the request passes (`preferred` raises the ad ahead of others). */
  evaluate(target: T, facts: RequestFacts, placement: number): Verdict;
}

/** The targets of one placement, by rule name. */
export type Targets = { placement: number; [rule: string]: unknown };

const rules: TargetingRule<unknown>[] = [];

/** Called by each rule module; rules are judged in the order their modules register. */
export function registerRule<T>(rule: TargetingRule<T>): void {
  if (rules.some((r) => r.name === rule.name)) throw new Error(`targeting rule ${rule.name} registered twice`);
  rules.push(rule as TargetingRule<unknown>);
}

export function targetingRules(): readonly TargetingRule<unknown>[] {
  return rules;
}

/** Every rule's target for a placement. */
export function resolveTargets(p: PlacementContext): Targets {
  const t: Targets = { placement: p.placementId };
  for (const rule of rules) {
    const target = rule.resolve(p);
    if (target !== undefined) t[rule.name] = target;
  }
  return t;
}

/** The verdict of every rule a placement names, for one request: the first exclusion, else a pass. */
export function judge(t: Targets, facts: RequestFacts): Verdict {
  let preferred = false;
  for (const rule of rules) {
    const target = t[rule.name];
    if (target === undefined || target === null) continue;
    const verdict = rule.evaluate(target, facts, t.placement);
    if (!verdict.ok) return verdict;
    preferred ||= verdict.preferred;
  }
  return { ok: true, preferred };
}

/** Shared readers of stored attributes, for projections. */
export const str = (v: Json | undefined): string => (v === null || v === undefined ? '' : String(v));
export const int = (v: Json | undefined): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);
export const obj = (v: Json | undefined): Record<string, Json> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Json>) : {});
export const list = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);
/** A reference's id and kind: `{id, type}` for typed references, a bare id otherwise. */
export const refId = (v: Json | undefined): number => (v && typeof v === 'object' && !Array.isArray(v) ? int((v as Record<string, Json>).id) : int(v));
export const refKind = (v: Json | undefined): string => (v && typeof v === 'object' && !Array.isArray(v) ? str((v as Record<string, Json>).type) : '');
