import type { DeliveryScope, DeliveryTotals } from '../../proto/gen/adserver/reporting/v1/reports';
import { errorFields, log } from '../shared/log';
import type { Candidate, DecisionData } from './decision-store';
import { goalsOf, type Goal, type PacingPlan } from './delivery-goals';
import type { DeliveryStore } from './delivery-store';

/**
 * Delivery goals kept on the decision path without a round trip per decision. Each replica holds a
 * share of every goal it serves, claimed from the shared store (delivery-store.ts): the count plus
 * every replica's hold never passes the limit, and a replica decides only within its hold. A hold
 * covers the replica's decisions still in flight (made in the last `inflightMs`, whose impression or
 * click may yet come) and a little headroom; it is claimed again every `claimEveryMs` while the goal is
 * served, and lapses after `holdTtlMs` when the replica stops (or dies).
 *
 * Overshoot: a goal can pass its limit only by events that arrive later than `inflightMs` after their
 * decision (or from a replica that died with decisions in flight). The last few views of a goal may
 * wait up to `inflightMs`: decisions whose impression never comes keep their share held until then.
 *
 * Smooth delivery (pacing) spreads a lifetime quota over the schedule's window: the target rate is
 * what remains over the time that remains, split between the replicas holding the goal; each replica
 * compares it with the eligible traffic it observes and admits that fraction of its requests, evenly.
 */

export interface LedgerOptions {
  /** A stable id of this replica (its holds in the shared store). */
  replica: string;
  /** Reporting's counts, for counters seen for the first time. */
  totals(account: number, scopes: DeliveryScope[]): Promise<DeliveryTotals>;
  now?: () => number;
  inflightMs?: number;
  claimEveryMs?: number;
  holdTtlMs?: number;
}

/** Why a candidate may not serve now. */
export interface Refusal {
  rule: string;
  detail: string;
}

/** A candidate's standing: refused, or allowed (paced: it is a smooth placement within its pace). */
export type Standing = Refusal | { paced: boolean };

export const FREE: Standing = { paced: false };
const PACED: Standing = { paced: true };

/** What the decision engine reads of delivery (decide.ts knows no store). */
export interface DeliveryGate {
  /** `probe`: decision debug, which changes no state. */
  standing(c: Candidate, data: DecisionData, now: number, probe: boolean): Standing;
  /** Effective CPM of an auction placement. */
  ecpm(c: Candidate): number;
}

/** Until a placement has this many impressions of its own, its CTR and CVR lean on the priors. */
export const PRIOR_IMPRESSIONS = 1000;
/** Priors for converting CPC and CPA prices to an effective CPM: 0.1 % click-through, 0.01 % conversion. */
export const PRIOR_CTR = 0.001;
export const PRIOR_CVR = 0.0001;

const SLOT_MS = 100;
const LIFETIME_COUNTER_TTL_MS = 400 * 24 * 3600_000;

interface GoalState {
  key: string;
  account: number;
  goal: Goal;
  /** Decisions this replica may make under its last claim, and those made since. */
  granted: number;
  used: number;
  counted: number;
  holders: number;
  claimedAt: number;
  lastUseAt: number;
  claiming?: Promise<void>;
  /** A first claim has finished (a request need not wait for one). */
  ready: boolean;
  /** Seeding or claiming failed: the goal is refused until a claim succeeds (fail closed). */
  failed: boolean;
  /** Decisions per 100 ms slot, for the decisions in flight and the recent rate. */
  slots: Int32Array;
  stamps: Float64Array;
  pace?: PaceState;
}

interface PaceState {
  plan: PacingPlan;
  /** Admission credit: each eligible request adds the admit fraction; a decision spends 1. */
  credit: number;
  /** Eligible requests per second over the last minute (a ring of seconds). */
  seen: Int32Array;
  seenStamps: Float64Array;
  firstSeenAt: number;
  /** Eligible requests in the last minute, summed again once a second. */
  windowSeen: number;
  windowSecond: number;
}

export class DeliveryLedger implements DeliveryGate {
  private readonly states = new Map<string, GoalState>();
  private readonly byGoal = new WeakMap<Goal, GoalState>();
  private readonly now: () => number;
  private readonly inflightMs: number;
  private readonly claimEveryMs: number;
  private readonly holdTtlMs: number;
  private readonly slotCount: number;
  /** This replica's impressions, clicks and conversions per placement, for the auction's rates. */
  private readonly performance = new Map<number, { views: number; clicks: number; conversions: number }>();
  /** This replica's decisions with goals whose first event has not come back here (oldest first). */
  private readonly own = new Map<string, { account: number; goals: readonly Goal[]; slot: number; landed: number }>();

  constructor(
    private readonly store: DeliveryStore,
    private readonly options: LedgerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.inflightMs = options.inflightMs ?? 10_000;
    this.claimEveryMs = options.claimEveryMs ?? 100;
    this.holdTtlMs = options.holdTtlMs ?? Math.max(2000, this.claimEveryMs * 10);
    this.slotCount = Math.ceil(this.inflightMs / SLOT_MS);
  }

  private stateOf(account: number, goal: Goal): GoalState {
    // The goal objects live as long as the snapshot's derived goals: most lookups end here.
    const known = this.byGoal.get(goal);
    if (known && this.states.get(known.key) === known) return known;
    const key = `delivery:${account}:${goal.id}`;
    let st = this.states.get(key);
    if (!st) {
      st = {
        key, account, goal, granted: 0, used: 0, counted: 0, holders: 1, claimedAt: -Infinity, lastUseAt: this.now(), ready: false, failed: false,
        slots: new Int32Array(this.slotCount), stamps: new Float64Array(this.slotCount).fill(-1),
      };
      this.states.set(key, st);
      if (this.states.size > 50_000) this.sweep();
    }
    // A changed limit (the schedule edited) applies at once.
    st.goal = goal;
    this.byGoal.set(goal, st);
    return st;
  }

  /** Forgets goals not served for a while (their holds lapse in the store on their own). */
  private sweep(): void {
    const idle = this.now() - Math.max(this.inflightMs, 60_000);
    for (const [k, st] of this.states) if (st.lastUseAt < idle && !st.claiming) this.states.delete(k);
  }

  /** Takes `n` decisions out of the in-flight window, oldest first: their events were counted elsewhere. */
  private dropOldest(st: GoalState, n: number, now: number): void {
    if (n <= 0) return;
    const from = Math.floor((now - this.inflightMs) / SLOT_MS);
    const live: number[] = [];
    for (let i = 0; i < this.slotCount; i++) if (st.stamps[i] > from && st.slots[i] > 0) live.push(i);
    live.sort((a, b) => st.stamps[a] - st.stamps[b]);
    for (const i of live) {
      const take = Math.min(n, st.slots[i]);
      st.slots[i] -= take;
      n -= take;
      if (!n) return;
    }
  }

  /** Decisions of this replica in the last `ms` (at most the in-flight window). */
  private recent(st: GoalState, now: number, ms: number): number {
    const from = Math.floor((now - ms) / SLOT_MS);
    let n = 0;
    for (let i = 0; i < this.slotCount; i++) if (st.stamps[i] > from) n += st.slots[i];
    return n;
  }

  private addDecision(st: GoalState, now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    const i = slot % this.slotCount;
    if (st.stamps[i] !== slot) {
      st.stamps[i] = slot;
      st.slots[i] = 0;
    }
    st.slots[i]++;
    st.used++;
    st.lastUseAt = now;
  }

  /**
   * Claims the goal's hold again: what is in flight, plus headroom for the next few claim periods at
   * the recent rate. Seeds the counter from reporting first when the store has none.
   */
  private claim(st: GoalState): Promise<void> {
    if (st.claiming) return st.claiming;
    const now = this.now();
    st.claimedAt = now;
    // The grant not yet spent may be spent while this claim travels: it is sent as in flight, so the
    // new hold covers those decisions even when the limit then leaves a smaller grant. Without it a
    // replica could hold fewer decisions than it had made and another be granted the difference (a
    // CI run of two replicas served 31 of a goal of 30).
    const reserve = Math.max(0, st.granted - st.used);
    const inflight = this.recent(st, now, this.inflightMs) + reserve;
    const rate = this.recent(st, now, 1000);
    // New grant asked: what tops the unspent reserve up to the headroom the recent rate needs.
    const headroom = Math.max(0, Math.max(2, Math.ceil((rate * this.claimEveryMs * 3) / 1000)) - reserve);
    const usedAtSend = st.used;
    const countTtl = st.goal.until ? st.goal.until - now + 24 * 3600_000 : LIFETIME_COUNTER_TTL_MS;
    st.claiming = (async () => {
      try {
        let answer = await this.store.claim(st.key, this.options.replica, inflight, headroom, st.goal.limit, this.holdTtlMs, countTtl);
        if (!answer) {
          const totals = await this.options.totals(st.account, [
            { key: st.key, placements: st.goal.placements, since: st.goal.since ? new Date(st.goal.since).toISOString() : '' },
          ]);
          const c = totals.counts.find((x) => x.key === st.key);
          const seeded = st.goal.unit === 'clicks' ? (c?.clicks ?? 0) : (c?.impressions ?? 0);
          await this.store.seed(st.key, seeded, countTtl);
          answer = await this.store.claim(st.key, this.options.replica, inflight, headroom, st.goal.limit, this.holdTtlMs, countTtl);
        }
        if (!answer) throw new Error('the delivery counter vanished while it was claimed');
        // The hold covers what was in flight when it was asked for (less the decisions whose event
        // another replica counted meanwhile) and `granted` new decisions; decisions made during the
        // round trip spend that grant.
        this.dropOldest(st, answer.landed, now);
        // What may be decided from the send on: the reserve (decisions made while the claim travelled
        // spent it first) and the new grant; the hold just claimed covers exactly that.
        st.used -= usedAtSend;
        st.granted = answer.granted + reserve;
        st.counted = answer.counted;
        st.holders = answer.holders;
        if (st.failed) log.info('delivery counters reachable again', { goal: st.key });
        st.failed = false;
      } catch (err) {
        if (!st.failed) log.warn('delivery goal cannot be claimed; its placements wait', { goal: st.key, ...errorFields(err) });
        st.failed = true;
        st.granted = 0;
      } finally {
        st.ready = true;
        st.claiming = undefined;
      }
    })();
    return st.claiming;
  }

  /**
   * Claims every goal of the zone's placements that this replica has not claimed yet, so that the
   * first request after a start (or a new day) is decided with counts; undefined when none is missing
   * (the common case costs a memo lookup and a glance at each goal).
   */
  prepare(data: DecisionData, account: number, zone: number, now: number): Promise<unknown> | undefined {
    // The zone's placements with goals, found again each minute (schedules start and end).
    const byZone = data.memo('delivery-goal-placements', () => new Map<number, { minute: number; placements: number[] }>());
    const minute = Math.floor(now / 60_000);
    const zoneKey = account * 4294967296 + zone;
    let held = byZone.get(zoneKey);
    if (!held || held.minute !== minute) {
      const ids = new Set<number>();
      for (const c of data.eligible(account, zone, undefined, now)) if (goalsOf(data, account, c.placement, now).goals.length) ids.add(c.placement);
      byZone.set(zoneKey, (held = { minute, placements: [...ids] }));
    }
    const placements = held.placements;
    let waits: Promise<void>[] | undefined;
    for (const placement of placements) {
      for (const goal of goalsOf(data, account, placement, now).goals) {
        const st = this.stateOf(account, goal);
        if (!st.ready) (waits ??= []).push(this.claim(st));
      }
    }
    return waits && Promise.all(waits);
  }

  standing(c: Candidate, data: DecisionData, now: number, probe: boolean): Standing {
    const { goals, pacing } = goalsOf(data, c.account, c.placement, now);
    if (!goals.length) return FREE;
    let paced = false;
    for (const goal of goals) {
      const st = this.stateOf(c.account, goal);
      if (!probe && !st.claiming && now - st.claimedAt >= this.claimEveryMs) void this.claim(st);
      const scope = goal.rule === 'quota' ? 'lifetime quota' : 'day cap';
      if (st.failed) return { rule: goal.rule, detail: `the ${scope}'s counter cannot be read; the placement waits rather than risk passing it` };
      if (st.counted >= goal.limit) return { rule: goal.rule, detail: `${scope} reached: ${st.counted} of ${goal.limit} ${goal.unit}` };
      if (st.used >= st.granted) {
        if (!probe && !st.claiming) void this.claim(st);
        return { rule: goal.rule, detail: `${scope} nearly reached: ${st.counted} of ${goal.limit} ${goal.unit} counted, the rest held by decisions in flight` };
      }
      if (pacing && pacing.goal.id === goal.id) {
        const verdict = this.pace(st, pacing, now, probe);
        if (verdict) return verdict;
        paced = true;
      }
    }
    return paced ? PACED : FREE;
  }

  /** Smooth delivery: admits the fraction of eligible requests that keeps the placement on its pace. */
  private pace(st: GoalState, plan: PacingPlan, now: number, probe: boolean): Refusal | undefined {
    if (now >= plan.end) return undefined; // endOnQuota past its end: as fast as traffic allows
    const p = (st.pace ??= { plan, credit: 0, seen: new Int32Array(60), seenStamps: new Float64Array(60).fill(-1), firstSeenAt: now, windowSeen: 0, windowSecond: -1 });
    p.plan = plan;
    if (!probe) {
      const second = Math.floor(now / 1000);
      const i = second % 60;
      if (p.seenStamps[i] !== second) {
        p.seenStamps[i] = second;
        p.seen[i] = 0;
      }
      p.seen[i]++;
      p.windowSeen++;
      p.credit = Math.min(2, p.credit + this.admitFraction(st, p, now));
    }
    if (p.credit >= 1) return undefined;
    const { expected, delivered } = this.progress(st, plan, now);
    return { rule: 'pacing', detail: `smooth delivery: ${delivered} of ${expected} ${plan.goal.unit} expected by now` };
  }

  /** The share of eligible requests to admit: the target rate over the observed eligible traffic. */
  private admitFraction(st: GoalState, p: PaceState, now: number): number {
    const remaining = st.goal.limit - st.counted - st.used;
    const seconds = (p.plan.end - now) / 1000;
    if (remaining <= 0) return 0;
    if (seconds <= 0) return 1;
    const second = Math.floor(now / 1000);
    if (p.windowSecond !== second) {
      p.windowSecond = second;
      p.windowSeen = 0;
      for (let i = 0; i < 60; i++) if (p.seenStamps[i] > second - 60) p.windowSeen += p.seen[i];
    }
    const seen = p.windowSeen;
    const window = Math.min(60, Math.max(1, (now - p.firstSeenAt) / 1000));
    const traffic = seen / window;
    const target = remaining / seconds / Math.max(1, st.holders);
    return Math.min(1, target / traffic);
  }

  private progress(st: GoalState, plan: PacingPlan, now: number): { expected: number; delivered: number } {
    const share = Math.min(1, Math.max(0, (now - plan.start) / (plan.end - plan.start)));
    return { expected: Math.round(plan.goal.limit * share), delivered: st.counted + st.used };
  }

  /** A placement's goals as this replica sees them (decision debug). */
  goalsView(data: DecisionData, account: number, placement: number, now: number): { rule: string; type: string; limit: number; counted: number }[] {
    return goalsOf(data, account, placement, now).goals.map((g) => ({ rule: g.rule, type: g.unit, limit: g.limit, counted: this.states.get(`delivery:${account}:${g.id}`)?.counted ?? 0 }));
  }

  /** Pacing of a smooth placement (decision debug): expected and delivered so far. */
  pacingOf(data: DecisionData, account: number, placement: number, now: number): { expected: number; delivered: number; quota: number; behind: boolean } | undefined {
    const { pacing } = goalsOf(data, account, placement, now);
    if (!pacing) return undefined;
    const st = this.stateOf(account, pacing.goal);
    const { expected, delivered } = this.progress(st, pacing, now);
    return { expected, delivered, quota: pacing.goal.limit, behind: delivered < expected };
  }

  /**
   * A decision was made for the candidate: it spends a share of each of its goals, and claims more
   * before the share runs out. Its id lets an event that comes back to this replica free its share at once.
   */
  decided(data: DecisionData, c: Candidate, now: number, decisionId?: string): void {
    const { goals, pacing } = goalsOf(data, c.account, c.placement, now);
    if (!goals.length) return;
    const slot = Math.floor(now / SLOT_MS);
    for (const goal of goals) {
      const st = this.stateOf(c.account, goal);
      this.addDecision(st, now);
      if (st.pace && pacing?.goal.id === goal.id) st.pace.credit = Math.max(0, st.pace.credit - 1);
      if (!st.claiming && st.used >= st.granted - 1) void this.claim(st);
    }
    if (decisionId) {
      // Only decisions still in flight matter: older ones are dropped as new ones come.
      this.own.set(decisionId, { account: c.account, goals, slot, landed: 0 });
      for (const [id, old] of this.own) {
        if (old.slot > slot - this.slotCount && this.own.size <= 100_000) break;
        this.own.delete(id);
      }
    }
  }

  /** An event of this replica's own decision: its share is no longer in flight but counted. */
  private landed(decisionId: string, unit: Goal['unit']): void {
    const mine = this.own.get(decisionId);
    if (!mine) return;
    const i = mine.slot % this.slotCount;
    for (let g = 0; g < mine.goals.length; g++) {
      const goal = mine.goals[g];
      if (goal.unit !== unit || mine.landed & (1 << g)) continue;
      mine.landed |= 1 << g;
      const st = this.states.get(`delivery:${mine.account}:${goal.id}`);
      if (st && st.stamps[i] === mine.slot && st.slots[i] > 0) st.slots[i]--;
    }
    if (mine.landed === (1 << mine.goals.length) - 1) this.own.delete(decisionId);
  }

  /** An impression, click or conversion of a live decision: counted once toward its goals. */
  record(data: DecisionData, unit: 'views' | 'clicks' | 'conversions', d: { id: string; account: number; placement: number; replica?: string }): Promise<void> {
    const perf = this.performance.get(d.placement) ?? { views: 0, clicks: 0, conversions: 0 };
    perf[unit]++;
    this.performance.set(d.placement, perf);
    if (this.performance.size > 100_000) this.performance.clear();
    if (unit === 'conversions') return Promise.resolve();
    const keys = goalsOf(data, d.account, d.placement, this.now())
      .goals.filter((g) => g.unit === unit)
      .map((g) => `delivery:${d.account}:${g.id}`);
    if (!keys.length) return Promise.resolve();
    // This replica's own decision frees its share here; another's learns it at its next claim.
    const mine = d.replica === this.options.replica || this.own.has(d.id);
    return this.store.count(keys, `${d.id}:${unit}`, mine ? '' : (d.replica ?? '')).then(
      (counted) => {
        if (!counted) return;
        if (mine) this.landed(d.id, unit as Goal['unit']);
        // This replica's own view of the count moves at once; the others see it at their next claim.
        for (const k of keys) {
          const st = this.states.get(k);
          if (st) st.counted++;
        }
      },
      (err: unknown) => log.warn('delivery event not counted toward its goals', { placement: d.placement, ...errorFields(err) }),
    );
  }

  ecpm(c: Candidate): number {
    // Prices come as exact decimal strings; the auction compares them as numbers.
    const cost = c.cost;
    if (cost.cpm) return Number(cost.cpm);
    // Measured rates, pulled toward the prior until the placement has PRIOR_IMPRESSIONS of its own.
    const p = this.performance.get(c.placement);
    const views = p?.views ?? 0;
    const ctr = ((p?.clicks ?? 0) + PRIOR_CTR * PRIOR_IMPRESSIONS) / (views + PRIOR_IMPRESSIONS);
    if (cost.cpc) return Number(cost.cpc) * ctr * 1000;
    const cvr = ((p?.conversions ?? 0) + PRIOR_CVR * PRIOR_IMPRESSIONS) / (views + PRIOR_IMPRESSIONS);
    if (cost.cpa) return Number(cost.cpa) * cvr * 1000;
    return 0;
  }
}
