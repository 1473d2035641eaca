import * as grpc from '@grpc/grpc-js';
import {
  DecisionDataClient,
  type DecisionDataUpdate,
  type DecisionEntity,
  type DecisionEntityRef,
} from '../../proto/gen/adserver/inventory/v1/decision_data';
import { serviceAddress } from '../shared/config';
import { channelOptions } from '../shared/grpc/client';
import { withInternalToken } from '../shared/internal-token';
import { log } from '../shared/log';

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
  weight: number;
  pricingModel: string;
  price: string;
}

const AD_ITEM_KINDS = new Set(['image_ad_item', 'flash_ad_item', 'custom_html_ad_item', 'native_ad_item', 'rich_media_ad_item']);
const ZONE_KINDS = new Set(['standard_zone', 'email_zone']);

const key = (account: number, kind: string, id: number) => `${account}:${kind}:${id}`;

/** `YYYY-MM-DD HH:MM:SS` UTC to epoch ms; NaN when empty or malformed. */
function scheduleTime(s: string): number {
  return s ? Date.parse(`${s.replace(' ', 'T')}Z`) : NaN;
}

/**
 * The decision data of every account in memory: entities by kind and id, with indexes from zone to
 * placements and from campaign to assignments. Requests read it only; updates replace entries.
 */
export class DecisionData {
  private readonly entities = new Map<string, DecisionEntity>();
  private readonly placementsByZone = new Map<string, Set<number>>();
  private readonly assignmentsByCampaign = new Map<string, Set<number>>();

  get size(): number {
    return this.entities.size;
  }

  clear(): void {
    this.entities.clear();
    this.placementsByZone.clear();
    this.assignmentsByCampaign.clear();
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

  private unindex(e: DecisionEntity): void {
    if (e.placement) this.index(this.placementsByZone, key(e.account, e.placement.zoneKind, e.placement.zone), e.id, false);
    if (e.assignment) this.index(this.assignmentsByCampaign, key(e.account, 'standard_campaign', e.assignment.campaign), e.id, false);
  }

  upsert(e: DecisionEntity): void {
    const k = key(e.account, e.kind, e.id);
    const old = this.entities.get(k);
    if (old) this.unindex(old);
    this.entities.set(k, e);
    if (e.placement) this.index(this.placementsByZone, key(e.account, e.placement.zoneKind, e.placement.zone), e.id, true);
    if (e.assignment) this.index(this.assignmentsByCampaign, key(e.account, 'standard_campaign', e.assignment.campaign), e.id, true);
  }

  remove(r: DecisionEntityRef): void {
    const k = key(r.account, r.kind, r.id);
    const old = this.entities.get(k);
    if (!old) return;
    this.unindex(old);
    this.entities.delete(k);
  }

  get(account: number, kind: string, id: number): DecisionEntity | undefined {
    return this.entities.get(key(account, kind, id));
  }

  /** The zone a request names: a standard zone, else an email zone of that id. */
  zone(account: number, id: number): DecisionEntity | undefined {
    return this.get(account, 'standard_zone', id) ?? this.get(account, 'email_zone', id);
  }

  /**
   * Every ad that may serve in the zone now: active placements of the zone whose schedule runs, their
   * ad item or the active assignments of their campaign, sized for the zone (and `size` when given).
   * Archived or deleted resources (owners' archives cascade into them) are absent from memory.
   */
  eligible(account: number, zoneId: number, size: { width: number; height: number } | undefined, now = Date.now()): Candidate[] {
    const zone = this.zone(account, zoneId);
    if (!zone?.zone) return [];
    const out: Candidate[] = [];
    const placements = this.placementsByZone.get(key(account, zone.kind, zoneId));
    if (!placements) return out;
    const fits = (item: DecisionEntity, campaign?: DecisionEntity): boolean => {
      const ad = item.adItem!;
      const z = zone.zone!;
      if (size && (ad.width !== size.width || ad.height !== size.height)) return false;
      if (z.flexibleType && ad.flexibleType && z.flexibleType !== ad.flexibleType) return false;
      if (campaign?.campaign?.flexibleType && campaign.campaign.flexibleType !== ad.flexibleType) return false;
      if (z.dimensions === 'fixed' && z.width > 0 && z.height > 0 && (ad.width !== z.width || ad.height !== z.height)) return false;
      return true;
    };
    for (const pid of placements) {
      const p = this.get(account, 'placement', pid)?.placement;
      if (!p?.active) continue;
      const sched = this.get(account, 'schedule', p.schedule)?.schedule;
      if (!sched) continue;
      const start = scheduleTime(sched.startDate);
      const end = scheduleTime(sched.endDate);
      if ((!Number.isNaN(start) && now < start) || (!Number.isNaN(end) && now > end)) continue;
      const common = { account, zone: zoneId, publisher: zone.zone.publisher, placement: pid, channel: p.channel, pricingModel: p.pricingModel, price: p.price };
      if (AD_ITEM_KINDS.has(p.advertisementKind)) {
        const item = this.get(account, p.advertisementKind, p.advertisement);
        if (!item?.adItem || !fits(item)) continue;
        out.push({ ...common, assignment: 0, campaign: 0, advertiser: item.adItem.advertiser, adItem: item.id, adItemKind: item.kind, weight: p.weight });
      } else if (p.advertisementKind === 'standard_campaign') {
        const campaign = this.get(account, 'standard_campaign', p.advertisement);
        if (!campaign?.campaign) continue;
        for (const aid of this.assignmentsByCampaign.get(key(account, 'standard_campaign', campaign.id)) ?? []) {
          const a = this.get(account, 'campaign_assignment', aid)?.assignment;
          if (!a?.active) continue;
          const item = this.get(account, a.adItemKind, a.adItem);
          if (!item?.adItem || !fits(item, campaign)) continue;
          out.push({
            ...common,
            assignment: aid,
            campaign: campaign.id,
            advertiser: campaign.campaign.advertiser || item.adItem.advertiser,
            adItem: item.id,
            adItemKind: item.kind,
            weight: a.weight,
          });
        }
      }
    }
    return out;
  }
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
 * Keeps `data` in step with inventory's DecisionData stream: a snapshot, then changes; on a broken
 * stream it reconnects (resuming from the last version) and meanwhile keeps serving what it holds.
 */
export class DecisionFeed {
  private client?: DecisionDataClient;
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
    private readonly address = serviceAddress('inventory'),
  ) {}

  start(): void {
    this.client = new DecisionDataClient(this.address, grpc.credentials.createInsecure(), channelOptions);
    this.connect();
  }

  private connect(): void {
    if (this.stopped || !this.client) return;
    const stream = this.client.watch({ resumeAfter: this.version }, withInternalToken(new grpc.Metadata()));
    this.stream = stream;
    stream.on('data', (u: DecisionDataUpdate) => this.onUpdate(u));
    const again = (why: string) => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      this.pending = undefined;
      if (this.stopped) return;
      // Said once per outage, not on every retry.
      if (this.failures++ === 0) log.warn('decision data stream ended; serving what is held and reconnecting', { reason: why, version: this.version });
      this.retryTimer = setTimeout(() => this.connect(), 500);
    };
    stream.on('error', (err) => again((err as Error).message));
    stream.on('end', () => again('end'));
  }

  private onUpdate(u: DecisionDataUpdate): void {
    this.lastUpdateAt = Date.now();
    if (this.failures) log.info('decision data stream back', { version: this.version });
    this.failures = 0;
    if (u.reset) this.pending = new DecisionData();
    if (this.pending) {
      this.pending.apply({ reset: false, upserts: u.upserts, removals: u.removals });
      if (u.synced) {
        this.data.current = this.pending;
        this.pending = undefined;
        this.synced = true;
        log.info('decision data snapshot loaded', { entities: this.data.current.size, version: u.version });
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
    this.client?.close();
  }

  /** For logs and health: whether a stream is open. */
  get connected(): boolean {
    return !!this.stream;
  }
}

