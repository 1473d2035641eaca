import { pickWeighted, TIERS, type Candidate, type DecisionData, type Excluded } from './decision-store';
import { judge, type RequestFacts } from '../targeting';

/**
 * The decision engine: which ad a zone shows for one request. Pure: it reads the snapshot of decision
 * data, the request's facts and the counters it is given, and the clock; it knows no HTTP, cookies,
 * Redis or events, so every rule it applies can be tested by calling it.
 */

/** What a request asks for, once parsed and its visitor described. */
export interface DecisionRequest {
  account: number;
  zone: number;
  /** `size=WxH`: only ads of that size. */
  size?: { width: number; height: number };
  /**
   * What the request tells about its visitor (location, platform, keywords, data keys, frequency),
   * and its time, which the caller reads from the same clock it passes.
   */
  visitor: RequestFacts;
  /**
   * `one`: the weighted pick; `ranked`: every eligible ad, most eligible first (jsonr); `all`: every
   * eligible ad in snapshot order, with the exclusions (decision debug).
   */
  want: 'one' | 'ranked' | 'all';
  /** Only ads the answer's form can show (an image tag needs an image), picked among with their weights. */
  accepts?: (c: Candidate) => boolean;
}

/** State outside the snapshot that a decision reads, gathered by the caller beforehand. */
export interface DecisionCounters {
  /** Ad items already shown on this page view (the zone's unique delivery), when the page is known. */
  shownOnPage?: ReadonlySet<number>;
}

/** Time and chance, injected so that a test can fix both. */
export interface Clock {
  now(): number;
  random(): number;
}

export const systemClock: Clock = { now: Date.now, random: Math.random };

export interface DecisionResult {
  /** The chosen ad (`one`), or the eligible ads in the order asked for. */
  ads: Candidate[];
  /** Why each other ad of the zone was left out (filled for `all` only). */
  excluded: Excluded[];
}

export function decide(request: DecisionRequest, snapshot: DecisionData, counters: DecisionCounters, clock: Clock): DecisionResult {
  const excluded: Excluded[] = [];
  const explain = request.want === 'all' ? (e: Excluded) => excluded.push(e) : undefined;
  const now = clock.now();
  const candidates = snapshot.eligible(request.account, request.zone, request.size, now, explain);
  if (!candidates.length) return { ads: [], excluded };
  const allowed: Candidate[] = [];
  const preferred = new Set<Candidate>();
  for (const c of candidates) {
    const t = snapshot.targetingOf(c);
    const verdict = judge(t.targets, request.visitor);
    if (!verdict.ok) {
      explain?.({ placement: c.placement, adItem: c.adItem, rule: verdict.rule, detail: verdict.detail });
      continue;
    }
    if (counters.shownOnPage && t.uniqueDelivery && counters.shownOnPage.has(c.adItem)) {
      explain?.({ placement: c.placement, adItem: c.adItem, rule: 'unique_delivery', detail: 'already shown on this page view' });
      continue;
    }
    if (request.want === 'one' && request.accepts && !request.accepts(c)) continue;
    allowed.push(c);
    if (verdict.preferred) preferred.add(c);
  }
  if (!allowed.length) return { ads: [], excluded };
  if (request.want === 'ranked') {
    // Every eligible ad (keyword "preferred" matches only, when any), by tier, then weight, ties in random order.
    const pool = preferred.size ? allowed.filter((c) => preferred.has(c)) : allowed;
    const keyed = pool.map((c) => ({ c, k: clock.random() }));
    keyed.sort((a, b) => a.c.tier - b.c.tier || b.c.weight - a.c.weight || a.k - b.k);
    return { ads: keyed.map((x) => x.c), excluded };
  }
  // Priority tiers: only the highest tier with an eligible ad serves.
  let best = allowed[0].tier;
  for (const c of allowed) if (c.tier < best) best = c.tier;
  const tier = allowed.filter((c) => {
    if (c.tier === best) return true;
    explain?.({ placement: c.placement, adItem: c.adItem, rule: 'priority', detail: `a ${TIERS[best]} ad is eligible (this one is ${TIERS[c.tier]})` });
    return false;
  });
  // Within the tier, keyword "preferred" matches are served ahead of the rest.
  const favoured = tier.filter((c) => preferred.has(c));
  const eligible = favoured.length ? favoured : tier;
  if (request.want === 'all') return { ads: eligible, excluded };
  const chosen = pickWeighted(eligible, clock.random);
  return { ads: chosen ? [chosen] : [], excluded };
}
