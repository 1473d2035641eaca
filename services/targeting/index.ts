/**
 * Every targeting rule, registered by importing its module; they are judged in this order (the first
 * that excludes an ad names it). Adding a rule: a module here, imported below.
 */
import './geo-target';
import './day-parting';
import './platform-target';
import './keywords';
import './postal-code-target';
import './list-target';
import './data-key-target';
import './frequency-cap';

export { judge, resolveTargets, targetingRules, type PlacementContext, type RequestFacts, type Targets, type TargetingRule, type Verdict } from './rule';
export { continentOf, CONTINENTS } from './geo-target';
export { WEEKDAYS } from './day-parting';
export { DATA_KEY_TYPES } from './data-key-target';
export { DESKTOP_BROWSERS, DESKTOP_OSES, MOBILE_BROWSERS, MOBILE_OSES } from './platform-target';

import { targetingRules } from './rule';
import type { ResourceKind } from '../shared/catalog/types';
import type { DecisionEntity } from '../../proto/gen/adserver/inventory/v1/decision_data';
import type { Attributes } from './rule';

/** The catalog kinds of every rule's target resources. */
export function targetingKinds(): ResourceKind[] {
  return targetingRules().flatMap((r) => r.kinds ?? []);
}

/** Inventory's projection of a targeting resource into decision data, by kind. */
export function targetingProjection(kind: string): ((a: Attributes) => Partial<DecisionEntity>) | undefined {
  for (const r of targetingRules()) {
    const project = r.project?.[kind];
    if (project) return project;
  }
  return undefined;
}

/** Whether an entity makes serving need the request's location. */
export function entityNeedsGeo(e: DecisionEntity): boolean {
  return targetingRules().some((r) => r.needsGeo?.(e));
}
