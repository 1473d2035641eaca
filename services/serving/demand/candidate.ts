import type { Candidate } from '../decision-store';

/** A programmatic bid as a candidate of the decision (decide.ts), apart from the HTTP that brought it. */

/** What a winning bid needs to be served, counted and billed. */
export interface DemandWin {
  endpoint: number;
  source: number;
  /** Percent of the price paid out to the publisher (decimal text). */
  revenueShare: string;
  price: number;
  format: 'display' | 'native' | 'video';
  /** The markup with the auction's macros substituted ('' until fetched when `markupUrl` brings it). */
  adm: string;
  /** A bid without adm: its win notice (macros substituted), whose answer is the markup; '' otherwise. */
  markupUrl: string;
  width: number;
  height: number;
  /** The billing notice, macros substituted: sent when the impression counts. */
  billingUrl: string;
  advertiserDomain: string;
  creativeId: string;
  deal: string;
}

/** A bid taking part in the decision beside the zone's placements. */
export interface DemandCandidate extends Candidate {
  demand: DemandWin;
}

export const isDemand = (c: Candidate | undefined): c is DemandCandidate => !!c && 'demand' in c;
