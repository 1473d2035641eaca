import { addDays, dateIn, isTimeZone, midnight, parseTimestamp } from '../shared/timezones';
import type { DecisionData } from './decision-store';

/**
 * The delivery goals a placement must keep: its schedule's lifetime quota and day cap, and the
 * placement's own (deprecated) day cap. Each goal counts views (impressions) or clicks of a set of
 * placements, over the schedule's lifetime or one day of the schedule's time zone.
 */

export type GoalUnit = 'views' | 'clicks';

export interface Goal {
  /** Names the counter: `s12:life:views`, `s12:d2026-11-25:clicks`, `p34:d2026-11-25:views`. */
  id: string;
  /** `quota` (lifetime) or `day_cap`: the rule a decision cites when the goal stops it. */
  rule: 'quota' | 'day_cap';
  unit: GoalUnit;
  limit: number;
  /** The placements whose events count toward it. */
  placements: number[];
  /** A day goal's day: [since, until) in ms; a lifetime goal has neither. */
  since?: number;
  until?: number;
}

/** Smooth delivery of a lifetime quota over the schedule's window. */
export interface PacingPlan {
  goal: Goal;
  start: number;
  end: number;
}

export interface PlacementGoals {
  goals: Goal[];
  pacing?: PacingPlan;
  /** The goals hold until then (the end of the current day); after it they are derived again. */
  validUntil: number;
}

const NONE: PlacementGoals = { goals: [], validUntil: Infinity };

const pad = (n: number) => String(n).padStart(2, '0');

/** The day of `zone` that holds `now`: its label and bounds (23 or 25 hours long on DST days). */
export function dayOf(zone: string, now: number): { label: string; since: number; until: number } {
  const d = dateIn(zone, now);
  return { label: `${d.year}-${pad(d.month)}-${pad(d.day)}`, since: midnight(zone, d), until: midnight(zone, addDays(d, 1)) };
}

const unitOf = (t: string): GoalUnit | undefined => (t === 'views' || t === 'clicks' ? t : undefined);

/** The goals of one placement at `now`, derived from the snapshot once per placement and day. */
export function goalsOf(data: DecisionData, account: number, placementId: number, now: number): PlacementGoals {
  // On the path of every decision: one Map per snapshot, keyed by the numbers themselves.
  const byPlacement = data.memo('delivery-goals', () => new Map<number, { account: number; v: PlacementGoals }>());
  const held = byPlacement.get(placementId);
  if (held && held.account === account && now < held.v.validUntil) return held.v;
  const v = deriveGoals(data, account, placementId, now);
  byPlacement.set(placementId, { account, v });
  return v;
}

function deriveGoals(data: DecisionData, account: number, placementId: number, now: number): PlacementGoals {
  const placement = data.get(account, 'placement', placementId)?.placement;
  if (!placement) return NONE;
  const schedule = data.get(account, 'schedule', placement.schedule)?.schedule;
  const hasDayCap = (schedule && schedule.dayCapLimit > 0 && unitOf(schedule.dayCapType)) || (placement.dayCapLimit > 0 && unitOf(placement.dayCapType));
  const hasQuota = schedule && schedule.quotaLifetime > 0 && unitOf(schedule.quotaType);
  if (!hasDayCap && !hasQuota) return NONE;
  const zone = schedule?.timezone && isTimeZone(schedule.timezone) ? schedule.timezone : 'UTC';
  const day = dayOf(zone, now);
  const goals: Goal[] = [];
  const onSchedule = () => data.placementsOfSchedule(account, placement.schedule);
  let pacing: PacingPlan | undefined;
  if (schedule && hasQuota) {
    const unit = unitOf(schedule.quotaType)!;
    const goal: Goal = { id: `s${placement.schedule}:life:${unit}`, rule: 'quota', unit, limit: schedule.quotaLifetime, placements: onSchedule() };
    goals.push(goal);
    const start = parseTimestamp(schedule.startDate);
    const end = parseTimestamp(schedule.endDate);
    // Auction placements always deliver as `default`; a window without both ends cannot be paced.
    if (schedule.deliveryMethod === 'smooth' && placement.serveMethod !== 'auction' && !Number.isNaN(start) && !Number.isNaN(end) && end > start) {
      pacing = { goal, start, end };
    }
  }
  if (schedule && schedule.dayCapLimit > 0 && unitOf(schedule.dayCapType)) {
    const unit = unitOf(schedule.dayCapType)!;
    goals.push({ id: `s${placement.schedule}:d${day.label}:${unit}`, rule: 'day_cap', unit, limit: schedule.dayCapLimit, placements: onSchedule(), since: day.since, until: day.until });
  }
  if (placement.dayCapLimit > 0 && unitOf(placement.dayCapType)) {
    const unit = unitOf(placement.dayCapType)!;
    goals.push({ id: `p${placementId}:d${day.label}:${unit}`, rule: 'day_cap', unit, limit: placement.dayCapLimit, placements: [placementId], since: day.since, until: day.until });
  }
  return { goals, pacing, validUntil: day.until };
}
