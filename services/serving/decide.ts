import { pickWeighted, TIERS, type Candidate, type DecisionData, type Excluded } from './decision-store';
import { judge, type RequestFacts } from '../targeting';
import { FREE, type DeliveryGate } from './delivery-ledger';
import { isDemand, type DemandCandidate } from './demand/candidate';

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
  /** A video player's request: the zone is a VAST zone. */
  video?: boolean;
  /** Decision debug's `one` decision (who wins its auction): it reads delivery state and changes none. */
  probe?: boolean;
}

/** State outside the snapshot that a decision reads, gathered by the caller beforehand. */
export interface DecisionCounters {
  /** Ad items already shown on this page view (the zone's unique delivery), when the page is known. */
  shownOnPage?: ReadonlySet<number>;
  /** Delivery goals (quotas, day caps), pacing and the auction's rates; absent: no goal applies (test mode). */
  delivery?: DeliveryGate;
  /** Programmatic bids that arrived within the zone's budget (one per demand endpoint), for `one` decisions. */
  bids?: readonly DemandCandidate[];
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
  const candidates = snapshot.eligible(request.account, request.zone, request.size, now, explain, request.video);
  const bids = request.want === 'one' ? counters.bids ?? [] : [];
  if (!candidates.length && !bids.length) return { ads: [], excluded };
  const allowed: Candidate[] = [];
  const preferred = new Set<Candidate>();
  const paced = new Set<Candidate>();
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
    const standing = counters.delivery?.standing(c, snapshot, now, request.want === 'all' || !!request.probe) ?? FREE;
    if ('rule' in standing) {
      explain?.({ placement: c.placement, adItem: c.adItem, rule: standing.rule, detail: standing.detail });
      continue;
    }
    if (standing.paced) paced.add(c);
    allowed.push(c);
    if (verdict.preferred) preferred.add(c);
  }
  if (!allowed.length && !bids.length) return { ads: [], excluded };
  // Fallback placements serve only when nothing else can.
  if (allowed.some((c) => c.fallback) && allowed.some((c) => !c.fallback)) {
    for (let i = allowed.length - 1; i >= 0; i--) {
      if (!allowed[i].fallback) continue;
      explain?.({ placement: allowed[i].placement, adItem: allowed[i].adItem, rule: 'fallback', detail: 'a placement that is not a fallback is eligible' });
      allowed.splice(i, 1);
    }
  }
  if (request.want === 'ranked') {
    // Every eligible ad (keyword "preferred" matches only, when any), by tier, then weight, ties in random order.
    const pool = preferred.size ? allowed.filter((c) => preferred.has(c)) : allowed;
    const keyed = pool.map((c) => ({ c, k: clock.random() }));
    keyed.sort((a, b) => a.c.tier - b.c.tier || b.c.weight - a.c.weight || a.k - b.k);
    return { ads: keyed.map((x) => x.c), excluded };
  }
  // Priority tiers: the highest tier with an eligible ad serves; a lower one only when the higher
  // leaves the decision unfilled (the remainder of a share of voice under 100 %).
  const tiers = new Map<number, Candidate[]>();
  for (const c of allowed) {
    const list = tiers.get(c.tier);
    if (list) list.push(c);
    else tiers.set(c.tier, [c]);
  }
  // Bids compete in their endpoint's tier (network unless it says otherwise).
  const bidTiers = new Map<number, DemandCandidate[]>();
  for (const b of bids) {
    const list = bidTiers.get(b.tier);
    if (list) list.push(b);
    else bidTiers.set(b.tier, [b]);
  }
  const order = [...new Set([...tiers.keys(), ...bidTiers.keys()])].sort((a, b) => a - b);
  const best = order[0];
  const zone = snapshot.zone(request.account, request.zone, request.video)?.zone;
  const tieBreak = zone?.auctionTieBreak === 'RANDOM' ? 'random' : 'score';
  if (explain) {
    for (const c of allowed) {
      if (c.tier !== best) explain({ placement: c.placement, adItem: c.adItem, rule: 'priority', detail: `a ${TIERS[best]} ad is eligible (this one is ${TIERS[c.tier]})` });
    }
  }
  for (const t of order) {
    const inTier = tiers.get(t) ?? [];
    // Within the tier, keyword "preferred" matches are served ahead of the rest.
    const favoured = inTier.filter((c) => preferred.has(c));
    const eligible = favoured.length ? favoured : inTier;
    if (request.want === 'all') {
      if (eligible.length) return { ads: eligible, excluded };
      continue;
    }
    const chosen = eligible.length ? pickInTier(eligible, paced, clock.random, counters.delivery, auctionFirst(snapshot, request), tieBreak) : undefined;
    // The tier's direct pick and its best bid meet on effective CPM: a bid must beat the placement's.
    const bid = highestBid(bidTiers.get(t), clock.random);
    if (bid && (!chosen || bid.demand.price > effectiveCpm(chosen, counters.delivery))) return { ads: [bid], excluded };
    if (chosen) return { ads: [chosen], excluded };
  }
  return { ads: [], excluded };
}

/** A VAST zone may order the auction before weight within a tier (its serve_priority_order). */
function auctionFirst(snapshot: DecisionData, request: DecisionRequest): boolean {
  return !!request.video && snapshot.zone(request.account, request.zone, true)?.zone?.servePriorityOrder === 'auction';
}

/**
 * One ad of a tier. Smooth placements within their pace come first (they keep a promise over time),
 * then the share of voice of a channel that uses it (its unsold remainder leaves the decision to
 * lower tiers unless weighted ads share the tier), then weight, then the auction: the highest
 * effective CPM, ties broken by weight.
 */
export function pickInTier(tier: Candidate[], paced: ReadonlySet<Candidate>, random: () => number, gate?: DeliveryGate, auctionBeforeWeight = false, tieBreak: 'random' | 'score' = 'score'): Candidate | undefined {
  if (paced.size) {
    const onPace = tier.filter((c) => paced.has(c));
    if (onPace.length) return pickWeighted(onPace, random);
  }
  let rest = tier;
  if (tier.some((c) => c.shareOfVoice >= 0)) {
    let u = random() * 100;
    for (const c of tier) {
      if (c.shareOfVoice < 0) continue;
      u -= c.shareOfVoice;
      if (u < 0) return c;
    }
    rest = tier.filter((c) => c.shareOfVoice < 0);
    if (!rest.length) return undefined;
  }
  const weighted = rest.filter((c) => c.serveMethod !== 'auction');
  if (weighted.length && (!auctionBeforeWeight || weighted.length === rest.length)) return pickWeighted(weighted, random);
  return auction(rest.filter((c) => c.serveMethod === 'auction'), random, gate, tieBreak);
}

/** A candidate's effective CPM: its auction rate from delivery (CPC and CPA priced by their rates), else its CPM. */
export function effectiveCpm(c: Candidate, gate?: DeliveryGate): number {
  if (isDemand(c)) return c.demand.price;
  return gate ? gate.ecpm(c) : Number(c.cost.cpm || 0);
}

/** The highest bid; equal bids are drawn by chance. */
function highestBid(bids: DemandCandidate[] | undefined, random: () => number): DemandCandidate | undefined {
  let winner: DemandCandidate | undefined;
  let ties = 0;
  for (const b of bids ?? []) {
    if (!winner || b.demand.price > winner.demand.price) {
      winner = b;
      ties = 1;
    } else if (b.demand.price === winner.demand.price && random() < 1 / ++ties) winner = b;
  }
  return winner;
}

/**
 * The highest effective CPM. Ties (the zone's auction_tie_break): `score` gives them to the higher
 * weight (the placement's score), then to chance; `random` draws among them with equal chance.
 */
function auction(rest: Candidate[], random: () => number, gate?: DeliveryGate, tieBreak: 'random' | 'score' = 'score'): Candidate | undefined {
  if (tieBreak === 'random') {
    let best = -1;
    let tied: Candidate[] = [];
    for (const c of rest) {
      const ecpm = effectiveCpm(c, gate);
      if (ecpm > best) {
        best = ecpm;
        tied = [c];
      } else if (ecpm === best) tied.push(c);
    }
    return tied.length > 1 ? tied[Math.min(tied.length - 1, Math.floor(random() * tied.length))] : tied[0];
  }
  let winner: Candidate | undefined;
  let best = -1;
  let ties = 0;
  for (const c of rest) {
    const ecpm = effectiveCpm(c, gate);
    if (ecpm > best || (ecpm === best && c.weight > winner!.weight)) {
      winner = c;
      best = ecpm;
      ties = 1;
    } else if (ecpm === best && c.weight === winner!.weight && random() < 1 / ++ties) {
      winner = c; // equal price and weight: each is as likely
    }
  }
  return winner;
}
