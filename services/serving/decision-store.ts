import { DISPLAY_AD_ITEM_KINDS } from '../shared/catalog';
import { PRIORITY_TIERS } from '../shared/catalog/kinds/fields';
import * as grpc from '@grpc/grpc-js';
import {
  DecisionDataClient,
  type DecisionDataUpdate,
  type DecisionDemandEndpoint,
  type DecisionDemandSource,
  type DecisionEntity,
  type DecisionEntityRef,
  type DecisionOrtbNativeAd,
  type DecisionOrtbNativeAsset,
  type DecisionOrtbNativeTemplate,
  type DecisionPmpDeal,
} from '../../proto/gen/adserver/inventory/v1/decision_data';
import { openStream } from '../shared/grpc/client';
import { parseTimestamp } from '../shared/timezones';
import { log } from '../shared/log';
import { entityNeedsGeo, resolveTargets, type Targets } from '../targeting';
import type { FrequencyCap } from '../targeting/frequency-cap';

/** One ad that may serve in a zone, with what its events must name. */
export interface Candidate {
  account: number;
  zone: number;
  publisher: number;
  placement: number;
  assignment: number;
  campaign: number;
  advertiser: number;
  adItem: number;
  adItemKind: string;
  channel: number;
  /** The placement's geo target (0: none), recorded with its events for the geo-target report. */
  geoTarget: number;
  weight: number;
  /** Its priority tier, 0 (sponsorship) to 4 (house): a lower tier serves only when no higher one can. */
  tier: number;
  pricingModel: string;
  price: string;
  /** Its schedule (the owner of its quota, day cap and pacing). */
  schedule: number;
  /** `auction`: within its tier, the highest effective CPM wins; `weight`: picked by weight. */
  serveMethod: string;
  /** Its percent of the tier's decisions when its channel uses share of voice; -1 otherwise. */
  shareOfVoice: number;
  /** The placement's rates (decimal strings, "" when unset), for the auction's effective CPM. */
  cost: { cpm: string; cpc: string; cpa: string };
  /** Serves only when no other placement is eligible (VAST is_fallback). */
  fallback: boolean;
}

/** Why an ad of the zone's placements is not a candidate (the decision-debug answer lists these). */
export interface Excluded {
  placement: number;
  adItem: number;
  rule: string;
  detail: string;
}

const AD_ITEM_KINDS: ReadonlySet<string> = new Set([...DISPLAY_AD_ITEM_KINDS, 'vast_ad_item', 'vast4_ad']);

/** The campaign kind an assignment belongs to. */
const campaignKindOf = (e: DecisionEntity) => (e.kind === 'vast_campaign_assignment' || e.kind === 'vast4_campaign_assignment' ? 'vast_campaign' : 'standard_campaign');
const ZONE_KINDS = new Set(['standard_zone', 'email_zone']);

/**
 * Video kinds that take display's shapes are held under display's names (ids are unique across
 * kinds), so every rule that reads placements, schedules, channels and assignments reads both.
 */
const HELD_AS: Readonly<Record<string, string>> = {
  vast_placement: 'placement',
  vast_schedule: 'schedule',
  vast_channel: 'channel',
  vast_channel_zone_assignment: 'channel_zone_assignment',
  vast_campaign_assignment: 'campaign_assignment',
  vast4_placement: 'placement',
  vast4_campaign_assignment: 'campaign_assignment',
};

/** The resource a part of a VAST ad belongs to (its media file's ad item, a 4.2 linear's creative...), when it is one. */
function parentOf(e: DecisionEntity): [string, number] | undefined {
  const adItem = e.vastMedia?.adItem ?? e.vastCompanion?.adItem ?? e.vastTracking?.adItem;
  if (adItem) return ['vast_ad_item', adItem];
  if (e.vast4Creative) return ['vast4_ad', e.vast4Creative.ad];
  const creative = e.vast4Linear?.creative ?? e.vast4Overlay?.creative ?? e.vast4UniversalAdId?.creative;
  if (creative) return ['vast4_creative', creative];
  if (e.vast4File) return ['vast4_linear', e.vast4File.linear];
  if (e.vast4IconFallback) return ['vast4_icon', e.vast4IconFallback.icon];
  return undefined;
}
const key = (account: number, kind: string, id: number) => `${account}:${HELD_AS[kind] ?? kind}:${id}`;

/** The media files, companions and tracking URLs of one VAST ad item. */
export interface VastParts {
  media: DecisionEntity[];
  companions: DecisionEntity[];
  tracking: DecisionEntity[];
}

/** A demand endpoint of an account, as the auction reads it. */
export interface HeldDemandEndpoint {
  id: number;
  account: number;
  endpoint: DecisionDemandEndpoint;
}

/** An OpenRTB native ad of a standard zone. */
export interface HeldOrtbNativeAd {
  id: number;
  ad: DecisionOrtbNativeAd;
}

/** An asset (title, image or data) of an OpenRTB native template. */
export interface HeldOrtbNativeAsset {
  id: number;
  asset: DecisionOrtbNativeAsset;
}

/** The priority tiers, highest first (the reference's placement and channel `priority`). */
export const TIERS = PRIORITY_TIERS;


/**
 * The decision data of every account in memory: entities by kind and id, with indexes from zone to
 * placements and from campaign to assignments. Requests read it only; updates replace entries.
 */
export class DecisionData {
  private readonly entities = new Map<string, DecisionEntity>();
  private readonly placementsByZone = new Map<string, Set<number>>();
  private readonly assignmentsByCampaign = new Map<string, Set<number>>();
  /** Channel zone assignments by zone, and placements by channel: a channel's placements serve in its zones. */
  private readonly channelLinksByZone = new Map<string, Set<number>>();
  private readonly placementsByChannel = new Map<string, Set<number>>();
  /** Placements by schedule: a schedule's quota counts the views or clicks of every placement on it. */
  private readonly placementsBySchedule = new Map<string, Set<number>>();
  /** The parts of VAST ads by the resource they belong to (parentOf). */
  private readonly partsByParent = new Map<string, Set<string>>();
  /**
   * Programmatic demand: endpoints by account, native ads by `account:zone`, native assets by
   * `account:template` (each entity by id), kept in step by every change; the accessors' arrays are
   * made once per state of the snapshot (memo).
   */
  private readonly endpointsByAccount = new Map<string, Map<number, DecisionEntity>>();
  private readonly nativeAdsByZone = new Map<string, Map<number, DecisionEntity>>();
  private readonly nativeAssetsByTemplate = new Map<string, Map<number, DecisionEntity>>();
  /** Values derived from the snapshot (delivery goals), emptied by every change like `targeting`. */
  private readonly derived = new Map<string, unknown>();
  /** Parsed forms of targets, kept with the entity they came from (an update replaces the entity). */
  private readonly parsed = new WeakMap<DecisionEntity, unknown>();
  /** Resolved targets by account, placement and zone; emptied by every change to the snapshot. */
  private readonly targeting = new Map<string, TargetingOf>();
  /** Whether any live target needs the requester's location (the GeoIP database is opened only then). */
  needsGeo = false;

  get size(): number {
    return this.entities.size;
  }

  clear(): void {
    this.targeting.clear();
    this.derived.clear();
    this.placementsBySchedule.clear();
    this.partsByParent.clear();
    this.entities.clear();
    this.placementsByZone.clear();
    this.assignmentsByCampaign.clear();
    this.channelLinksByZone.clear();
    this.placementsByChannel.clear();
    this.endpointsByAccount.clear();
    this.nativeAdsByZone.clear();
    this.nativeAssetsByTemplate.clear();
  }

  apply(update: Pick<DecisionDataUpdate, 'reset' | 'upserts' | 'removals'>): void {
    if (update.reset) this.clear();
    for (const r of update.removals) this.remove(r);
    for (const e of update.upserts) this.upsert(e);
  }

  private index(map: Map<string, Set<number>>, k: string, id: number, add: boolean): void {
    let set = map.get(k);
    if (add) {
      if (!set) map.set(k, (set = new Set()));
      set.add(id);
    } else if (set) {
      set.delete(id);
      if (!set.size) map.delete(k);
    }
  }

  private indexEntity(map: Map<string, Map<number, DecisionEntity>>, k: string, e: DecisionEntity, add: boolean): void {
    let held = map.get(k);
    if (add) {
      if (!held) map.set(k, (held = new Map()));
      held.set(e.id, e);
    } else if (held) {
      held.delete(e.id);
      if (!held.size) map.delete(k);
    }
  }

  private indexAll(e: DecisionEntity, add: boolean): void {
    if (e.demandEndpoint) this.indexEntity(this.endpointsByAccount, String(e.account), e, add);
    if (e.ortbNativeAd) this.indexEntity(this.nativeAdsByZone, `${e.account}:${e.ortbNativeAd.zone}`, e, add);
    if (e.ortbNativeAsset) this.indexEntity(this.nativeAssetsByTemplate, `${e.account}:${e.ortbNativeAsset.template}`, e, add);
    if (e.placement?.zone) this.index(this.placementsByZone, key(e.account, e.placement.zoneKind, e.placement.zone), e.id, add);
    if (e.placement?.schedule) this.index(this.placementsBySchedule, key(e.account, 'schedule', e.placement.schedule), e.id, add);
    if (e.placement?.channel) this.index(this.placementsByChannel, key(e.account, 'channel', e.placement.channel), e.id, add);
    if (e.assignment) this.index(this.assignmentsByCampaign, key(e.account, campaignKindOf(e), e.assignment.campaign), e.id, add);
    if (e.channelZone) this.index(this.channelLinksByZone, key(e.account, e.channelZone.zoneKind, e.channelZone.zone), e.id, add);
    const parent = parentOf(e);
    if (parent) {
      const k = key(e.account, parent[0], parent[1]);
      let set = this.partsByParent.get(k);
      if (add) {
        if (!set) this.partsByParent.set(k, (set = new Set()));
        set.add(`${e.kind}:${e.id}`);
      } else if (set) {
        set.delete(`${e.kind}:${e.id}`);
        if (!set.size) this.partsByParent.delete(k);
      }
    }
  }

  /** The parts of a VAST resource (a 2/3 ad item's media files, a 4.2 ad's creatives, a linear's files...), in id order. */
  partsOf(account: number, parentKind: string, parentId: number): DecisionEntity[] {
    return this.memo(`vast-parts:${account}:${parentKind}:${parentId}`, () => {
      const out: DecisionEntity[] = [];
      for (const ref of this.partsByParent.get(key(account, parentKind, parentId)) ?? []) {
        const sep = ref.indexOf(':');
        const e = this.get(account, ref.slice(0, sep), Number(ref.slice(sep + 1)));
        if (e) out.push(e);
      }
      return out.sort((a, b) => a.id - b.id);
    });
  }

  /** An account's demand endpoints (active or not: `endpoint.active` says), in id order. */
  demandEndpoints(account: number): HeldDemandEndpoint[] {
    return this.memo(`demand-endpoints:${account}`, () =>
      [...(this.endpointsByAccount.get(String(account))?.values() ?? [])]
        .map((e) => ({ id: e.id, account: e.account, endpoint: e.demandEndpoint! }))
        .sort((a, b) => a.id - b.id),
    );
  }

  demandSource(account: number, id: number): DecisionDemandSource | undefined {
    return this.get(account, 'demand_source', id)?.demandSource;
  }

  /** A PMP deal (its OpenRTB deal id is `String(id)`). */
  pmpDeal(account: number, id: number): DecisionPmpDeal | undefined {
    return this.get(account, 'pmp_deal', id)?.pmpDeal;
  }

  /** The OpenRTB native ads of a standard zone, in id order. */
  ortbNativeAds(account: number, zone: number): HeldOrtbNativeAd[] {
    return this.memo(`ortb-native-ads:${account}:${zone}`, () =>
      [...(this.nativeAdsByZone.get(`${account}:${zone}`)?.values() ?? [])].map((e) => ({ id: e.id, ad: e.ortbNativeAd! })).sort((a, b) => a.id - b.id),
    );
  }

  ortbNativeTemplate(account: number, id: number): DecisionOrtbNativeTemplate | undefined {
    return this.get(account, 'ortb_native_template', id)?.ortbNativeTemplate;
  }

  /** The assets of an OpenRTB native template (titles, images and data together; `asset.asset` says which), in id order. */
  ortbNativeAssets(account: number, template: number): HeldOrtbNativeAsset[] {
    return this.memo(`ortb-native-assets:${account}:${template}`, () =>
      [...(this.nativeAssetsByTemplate.get(`${account}:${template}`)?.values() ?? [])]
        .map((e) => ({ id: e.id, asset: e.ortbNativeAsset! }))
        .sort((a, b) => a.id - b.id),
    );
  }

  /** A VAST 2/3 ad item's media files, companions and tracking URLs, in id order. */
  vastParts(account: number, adItem: number): VastParts {
    const all = this.partsOf(account, 'vast_ad_item', adItem);
    return { media: all.filter((e) => e.vastMedia), companions: all.filter((e) => e.vastCompanion), tracking: all.filter((e) => e.vastTracking) };
  }

  private unindex(e: DecisionEntity): void {
    this.indexAll(e, false);
  }

  upsert(e: DecisionEntity): void {
    // Any change may touch a placement's targets (its schedule, a target, a data list): resolve again.
    this.targeting.clear();
    this.derived.clear();
    const k = key(e.account, e.kind, e.id);
    const old = this.entities.get(k);
    if (old) this.unindex(old);
    this.entities.set(k, e);
    this.indexAll(e, true);
    if (!this.needsGeo && entityNeedsGeo(e)) this.needsGeo = true;
  }

  remove(r: DecisionEntityRef): void {
    this.targeting.clear();
    this.derived.clear();
    const k = key(r.account, r.kind, r.id);
    const old = this.entities.get(k);
    if (!old) return;
    this.unindex(old);
    this.entities.delete(k);
  }

  get(account: number, kind: string, id: number): DecisionEntity | undefined {
    return this.entities.get(key(account, kind, id));
  }

  /** The placements whose schedule is this one. */
  placementsOfSchedule(account: number, schedule: number): number[] {
    return [...(this.placementsBySchedule.get(key(account, 'schedule', schedule)) ?? [])];
  }

  /** A value derived from the snapshot, made once until the snapshot changes. */
  memo<T>(k: string, make: () => T): T {
    if (this.derived.has(k)) return this.derived.get(k) as T;
    if (this.derived.size > 200_000) this.derived.clear();
    const v = make();
    this.derived.set(k, v);
    return v;
  }

  private parsedOf<T>(e: DecisionEntity, make: () => T): T {
    if (!this.parsed.has(e)) this.parsed.set(e, make());
    return this.parsed.get(e) as T;
  }

  /**
   * The targets a candidate's placement names under every targeting rule, resolved from the snapshot
   * once per placement and zone until the snapshot changes.
   */
  targetingOf(c: Candidate): TargetingOf {
    const k = `${c.account}:${c.placement}:${c.zone}`;
    let t = this.targeting.get(k);
    if (!t) {
      if (this.targeting.size > 100_000) this.targeting.clear();
      this.targeting.set(k, (t = this.resolveTargeting(c)));
    }
    return t;
  }

  private resolveTargeting(c: Candidate): TargetingOf {
    const placementEntity = this.get(c.account, 'placement', c.placement)!;
    const placement = placementEntity.placement!;
    const targets = resolveTargets({
      placementId: c.placement,
      placement,
      placementEntity,
      schedule: this.get(c.account, 'schedule', placement.schedule)?.schedule,
      get: (kind, id) => this.get(c.account, kind, id),
      parsed: (e, make) => this.parsedOf(e, make),
    });
    const cap = targets.frequency_cap as FrequencyCap | undefined;
    const zone = this.zone(c.account, c.zone)?.zone;
    return { targets, frequencyWindowSeconds: cap?.windowSeconds ?? 0, uniqueDelivery: !!zone?.uniqueDelivery };
  }

  /** The active assignments of a campaign (standard or VAST), for a zone's default campaign. */
  activeAssignments(account: number, campaignKind: string, campaign: number): DecisionEntity[] {
    const out: DecisionEntity[] = [];
    for (const aid of this.assignmentsByCampaign.get(key(account, campaignKind, campaign)) ?? []) {
      const a = this.get(account, 'campaign_assignment', aid);
      if (a?.assignment?.active) out.push(a);
    }
    return out;
  }

  /** The zone a request names: a standard zone, else an email zone of that id; a VAST zone for a player's request. */
  zone(account: number, id: number, video = false): DecisionEntity | undefined {
    if (video) return this.get(account, 'vast_zone', id);
    return this.get(account, 'standard_zone', id) ?? this.get(account, 'email_zone', id);
  }

  /**
   * Every ad that may serve in the zone now: active placements of the zone whose schedule runs, their
   * ad item or the active assignments of their campaign, sized for the zone (and `size` when given).
   * Archived or deleted resources (owners' archives cascade into them) are absent from memory.
   */
  eligible(account: number, zoneId: number, size: { width: number; height: number } | undefined, now = Date.now(), explain?: (e: Excluded) => void, video = false): Candidate[] {
    const out: Candidate[] = [];
    for (const group of this.zonePlan(account, zoneId, video)) {
      if (group.runs) {
        const { start, end, keepsPastEnd } = group.runs;
        if ((!Number.isNaN(start) && now < start) || (!Number.isNaN(end) && now > end && !keepsPastEnd)) {
          explain?.({ placement: group.placement, adItem: 0, rule: 'schedule', detail: group.runs.detail });
          continue;
        }
      }
      for (const step of group.steps) {
        if ('excluded' in step) explain?.(step.excluded);
        else if (size && step.size && (step.size.width !== size.width || step.size.height !== size.height)) {
          explain?.({ placement: group.placement, adItem: step.candidate.adItem, rule: 'size', detail: `${step.size.width}x${step.size.height} does not fit the zone or the requested size` });
        } else out.push({ ...step.candidate });
      }
    }
    return out;
  }

  /**
   * What of a zone's eligibility does not depend on the request, worked out once per snapshot: per
   * placement, its schedule's window, then in order the candidates (with their size, checked against
   * a requested size) and the exclusions a decision-debug answer lists.
   */
  private zonePlan(account: number, zoneId: number, video: boolean): PlacementPlan[] {
    return this.memo(`zone-plan:${account}:${zoneId}:${video ? 'v' : 'd'}`, () => {
      const zone = this.zone(account, zoneId, video);
      if (!zone?.zone) return [];
      const plan: PlacementPlan[] = [];
      // The zone's own placements, and those of every channel (not archived) the zone is assigned to.
      const placements = new Set(this.placementsByZone.get(key(account, zone.kind, zoneId)) ?? []);
      for (const linkId of this.channelLinksByZone.get(key(account, zone.kind, zoneId)) ?? []) {
        const channel = this.get(account, 'channel_zone_assignment', linkId)?.channelZone?.channel ?? 0;
        if (!this.get(account, 'channel', channel)) continue;
        for (const pid of this.placementsByChannel.get(key(account, 'channel', channel)) ?? []) placements.add(pid);
      }
      /** Whether an ad item fits the zone: a player sizes what it plays, so a VAST ad needs only to be one. */
      const fitsZone = (item: DecisionEntity, campaign?: DecisionEntity): boolean => {
        if (video) return !!item.vastAd || !!item.vast4Ad;
        const ad = item.adItem;
        if (!ad) return false;
        const z = zone.zone!;
        if (z.flexibleType && ad.flexibleType && z.flexibleType !== ad.flexibleType) return false;
        if (campaign?.campaign?.flexibleType && campaign.campaign.flexibleType !== ad.flexibleType) return false;
        if (z.dimensions === 'fixed' && z.width > 0 && z.height > 0 && (ad.width !== z.width || ad.height !== z.height)) return false;
        return true;
      };
      const sized = (item: DecisionEntity) => (video || !item.adItem ? undefined : { width: item.adItem.width, height: item.adItem.height });
      for (const pid of placements) {
        const p = this.get(account, 'placement', pid)?.placement;
        if (!p) continue;
        const group: PlacementPlan = { placement: pid, steps: [] };
        plan.push(group);
        const exclude = (adItem: number, rule: string, detail: string) => group.steps.push({ excluded: { placement: pid, adItem, rule, detail } });
        if (!p.active) {
          exclude(0, 'paused', 'the placement is not active');
          continue;
        }
        const sched = this.get(account, 'schedule', p.schedule)?.schedule;
        if (!sched) {
          plan.pop();
          continue;
        }
        group.runs = {
          start: parseTimestamp(sched.startDate),
          end: parseTimestamp(sched.endDate),
          // endOnQuota keeps a schedule with a quota serving past its end date until the quota is met.
          keepsPastEnd: sched.underDeliveryBehaviour === 'endOnQuota' && sched.quotaLifetime > 0,
          detail: `runs ${sched.startDate || 'from the start'} to ${sched.endDate || 'forever'} (UTC)`,
        };
        // A channel's placements take the channel's tier where the channel serves them.
        const channel = p.channel ? this.get(account, 'channel', p.channel)?.channel : undefined;
        const priority = channel && !p.ownPriority ? channel.priority : p.priority;
        const tier = TIERS.indexOf((priority || 'standard') as (typeof TIERS)[number]);
        const common = {
          account, zone: zoneId, publisher: zone.zone.publisher, placement: pid, channel: p.channel, geoTarget: p.geoTarget || sched.geoTarget || 0,
          pricingModel: p.pricingModel, price: p.price, tier: tier < 0 ? 1 : tier, schedule: p.schedule,
          serveMethod: p.serveMethod || 'weight', shareOfVoice: channel?.useShareOfVoice ? Math.max(0, p.shareOfVoice) : -1,
          cost: { cpm: p.costCpm, cpc: p.costCpc, cpa: p.costCpa }, fallback: p.fallback,
        };
        const misfit = (item: DecisionEntity | undefined) => item?.adItem && exclude(item.id, 'size', `${item.adItem.width}x${item.adItem.height} does not fit the zone or the requested size`);
        // VAST placements have no weight of their own: their schedule's applies.
        const weight = p.weight || sched.weight || 1;
        if (AD_ITEM_KINDS.has(p.advertisementKind)) {
          const item = this.get(account, p.advertisementKind, p.advertisement);
          if (!item || !fitsZone(item)) {
            misfit(item);
            continue;
          }
          group.steps.push({ size: sized(item), candidate: { ...common, assignment: 0, campaign: 0, advertiser: item.adItem?.advertiser ?? 0, adItem: item.id, adItemKind: item.kind, weight } });
        } else if (p.advertisementKind === 'standard_campaign' || p.advertisementKind === 'vast_campaign') {
          const campaign = this.get(account, p.advertisementKind, p.advertisement);
          if (!campaign?.campaign) continue;
          for (const aid of this.assignmentsByCampaign.get(key(account, p.advertisementKind, campaign.id)) ?? []) {
            const a = this.get(account, 'campaign_assignment', aid)?.assignment;
            if (!a) continue;
            if (!a.active) {
              exclude(a.adItem, 'paused', `campaign assignment ${aid} is paused`);
              continue;
            }
            const item = this.get(account, a.adItemKind, a.adItem);
            if (!item || !fitsZone(item, campaign)) {
              misfit(item);
              continue;
            }
            group.steps.push({
              size: sized(item),
              candidate: {
                ...common,
                assignment: aid,
                campaign: campaign.id,
                advertiser: campaign.campaign.advertiser || item.adItem?.advertiser || 0,
                adItem: item.id,
                adItemKind: item.kind,
                weight: a.weight,
              },
            });
          }
        }
      }
      return plan;
    });
  }
}

/** One placement of a zone's plan: when its schedule runs, then its candidates and exclusions in order. */
interface PlacementPlan {
  placement: number;
  /** Absent for a paused placement, whose only step is its exclusion. */
  runs?: { start: number; end: number; keepsPastEnd: boolean; detail: string };
  steps: ({ excluded: Excluded } | { candidate: Candidate; size: { width: number; height: number } | undefined })[];
}

export interface TargetingOf {
  targets: Targets;
  /** Frequency window of the cap (seconds), to count a view when the ad is shown. */
  frequencyWindowSeconds: number;
  uniqueDelivery: boolean;
}

/** Weighted random pick: each candidate's chance is its weight over the sum of weights. */
export function pickWeighted<T extends { weight: number }>(candidates: T[], random = Math.random): T | undefined {
  if (!candidates.length) return undefined;
  const total = candidates.reduce((s, c) => s + c.weight, 0);
  let r = random() * total;
  for (const c of candidates) {
    r -= c.weight;
    if (r < 0) return c;
  }
  return candidates[candidates.length - 1];
}

/** From an entity list (test data), a store of its own. */
export function dataFrom(entities: DecisionEntity[]): DecisionData {
  const d = new DecisionData();
  d.apply({ reset: true, upserts: entities, removals: [] });
  return d;
}

export { ZONE_KINDS, AD_ITEM_KINDS };

/**
 * Keeps `data` in step with inventory's DecisionData stream of one mode (live, or every account's
 * test data): a snapshot, then changes; on a broken stream it reconnects (resuming from the last
 * version) and meanwhile keeps serving what it holds.
 */
export class DecisionFeed {
  private stream?: grpc.ClientReadableStream<DecisionDataUpdate>;
  private version = 0;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private failures = 0;
  /** A snapshot being received is collected apart, so requests never see a half-loaded state. */
  private pending?: DecisionData;
  synced = false;
  lastUpdateAt = 0;

  constructor(
    readonly data: { current: DecisionData },
    private readonly mode: 'live' | 'test' = 'live',
  ) {}

  start(): void {
    this.connect();
  }

  private connect(): void {
    if (this.stopped) return;
    const stream = openStream('inventory', DecisionDataClient, 'watch', { resumeAfter: this.version, test: this.mode === 'test' });
    this.stream = stream;
    stream.on('data', (u: DecisionDataUpdate) => this.onUpdate(u));
    const again = (why: string) => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      this.pending = undefined;
      if (this.stopped) return;
      // Said once per outage, not on every retry.
      if (this.failures++ === 0) log.warn('decision data stream ended; serving what is held and reconnecting', { mode: this.mode, reason: why, version: this.version });
      this.retryTimer = setTimeout(() => this.connect(), 500);
    };
    stream.on('error', (err: Error) => again(err.message));
    stream.on('end', () => again('end'));
  }

  private onUpdate(u: DecisionDataUpdate): void {
    this.lastUpdateAt = Date.now();
    if (this.failures) log.info('decision data stream back', { mode: this.mode, version: this.version });
    this.failures = 0;
    if (u.reset) this.pending = new DecisionData();
    if (this.pending) {
      this.pending.apply({ reset: false, upserts: u.upserts, removals: u.removals });
      if (u.synced) {
        this.data.current = this.pending;
        this.pending = undefined;
        this.synced = true;
        log.info('decision data snapshot loaded', { mode: this.mode, entities: this.data.current.size, version: u.version });
      }
    } else {
      this.data.current.apply(u);
    }
    if (u.synced && u.version) this.version = u.version;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.stream?.cancel();
  }

  /** For logs and health: whether a stream is open. */
  get connected(): boolean {
    return !!this.stream;
  }
}

