/**
 * Delivery rules in the decision engine with the real ledger and an in-memory counter store: quotas,
 * day caps (DST days), pacing under a virtual clock, share of voice and the auction. No HTTP; the
 * same rules through real serving processes are in delivery-serving.test.ts.
 */
import { DecisionEntity, type DeepPartial } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import type { DeliveryScope } from '../../../proto/gen/adserver/reporting/v1/reports';
import { decide, type Clock, type DecisionRequest } from '../decide';
import { dataFrom, type DecisionData } from '../decision-store';
import { dayOf } from '../delivery-goals';
import { DeliveryLedger } from '../delivery-ledger';
import { MemoryDeliveryStore } from '../delivery-store';
import { platformOf } from '../targeting/platform';

const ACCOUNT = 7;
const ZONE = 10;

const entity = (kind: string, id: number, fields: DeepPartial<DecisionEntity>) => DecisionEntity.fromPartial({ kind, id, account: ACCOUNT, ...fields });

interface Ad {
  id: number;
  priority?: string;
  weight?: number;
  schedule?: DeepPartial<DecisionEntity['schedule']>;
  serveMethod?: string;
  costCpm?: string;
  costCpc?: string;
  shareOfVoice?: number;
  channel?: number;
}

/** A zone with one placement per ad, each on a schedule of its own (id 500 + ad id). */
function snapshot(ads: Ad[], channels: { id: number; useShareOfVoice: boolean; priority?: string }[] = []): DecisionData {
  const entities = [entity('standard_zone', ZONE, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1 } })];
  for (const ch of channels) {
    entities.push(entity('channel', ch.id, { channel: { priority: ch.priority ?? 'standard', useShareOfVoice: ch.useShareOfVoice } }));
    entities.push(entity('channel_zone_assignment', 900 + ch.id, { channelZone: { channel: ch.id, zoneKind: 'standard_zone', zone: ZONE } }));
  }
  for (const ad of ads) {
    entities.push(entity('image_ad_item', ad.id, { adItem: { width: 300, height: 250, location: 'https://example.com/', creativeUrl: `https://cdn.example/${ad.id}.png` } }));
    entities.push(entity('schedule', 500 + ad.id, { schedule: { startDate: '2026-01-01 00:00:00', ...ad.schedule } }));
    entities.push(entity('placement', 200 + ad.id, {
      placement: {
        zoneKind: ad.channel ? '' : 'standard_zone', zone: ad.channel ? 0 : ZONE, channel: ad.channel ?? 0, advertisementKind: 'image_ad_item', advertisement: ad.id,
        schedule: 500 + ad.id, weight: ad.weight ?? 1, active: true, priority: ad.priority ?? 'standard', serveMethod: ad.serveMethod ?? 'weight',
        costCpm: ad.costCpm ?? '', costCpc: ad.costCpc ?? '', shareOfVoice: ad.shareOfVoice ?? -1,
      },
    }));
  }
  return dataFrom(entities);
}

/** A virtual clock and a seeded chance (mulberry32), so every run decides alike. */
function virtualClock(start: number, seed = 42): Clock & { t: number } {
  let s = seed >>> 0;
  const c = {
    t: start,
    now: () => c.t,
    random: () => {
      s = (s + 0x6d2b79f5) >>> 0;
      let r = Math.imul(s ^ (s >>> 15), 1 | s);
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
      return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
    },
  };
  return c;
}

const noHistory = async (_account: number, scopes: DeliveryScope[]) => ({ counts: scopes.map((s) => ({ key: s.key, impressions: 0, clicks: 0 })) });

function ledgerOn(store: MemoryDeliveryStore, clock: Clock, replica = 'r1', totals = noHistory, inflightMs = 2000) {
  return new DeliveryLedger(store, { replica, totals, now: clock.now, inflightMs, claimEveryMs: 100 });
}

const visitorAt = (now: number): DecisionRequest['visitor'] => ({ now: new Date(now), platform: platformOf(''), keywords: [], data: {}, frequency: new Map(), accountTimezone: 'UTC' });

/** One request as serving makes it: claim what is missing, decide, spend the share. */
async function serveOnce(data: DecisionData, ledger: DeliveryLedger, clock: Clock, want: DecisionRequest['want'] = 'one') {
  await ledger.prepare(data, ACCOUNT, ZONE, clock.now());
  const result = decide({ account: ACCOUNT, zone: ZONE, visitor: visitorAt(clock.now()), want }, data, { delivery: ledger }, clock);
  const id = `d${++decisionSeq}`;
  if (want === 'one') for (const c of result.ads) ledger.decided(data, c, clock.now(), id);
  return { ...result, id };
}

let decisionSeq = 0;
const settle = () => new Promise((r) => setImmediate(r));

describe('delivery goals', () => {
  it('stops a lifetime quota of views at exactly its count, counting only impressions, once each', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const data = snapshot([{ id: 1, priority: 'sponsorship', schedule: { quotaLifetime: 5, quotaType: 'views' } }, { id: 2, priority: 'house' }]);
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const served: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      served.push(ad.adItem);
      // Every sponsorship ad renders: its impression counts (twice, as a replayed URL would: once).
      if (ad.adItem === 1) {
        await ledger.record(data, 'views', { id, account: ACCOUNT, placement: ad.placement });
        await ledger.record(data, 'views', { id, account: ACCOUNT, placement: ad.placement });
      }
      clock.t += 200;
      await settle();
    }
    expect(served.filter((a) => a === 1)).toHaveLength(5);
    expect(served.slice(5).every((a) => a === 2)).toBe(true);
    const debug = await serveOnce(data, ledger, clock, 'all');
    expect(debug.excluded).toContainEqual(expect.objectContaining({ placement: 201, rule: 'quota', detail: expect.stringContaining('5 of 5 views') }));
  });

  it('holds a quota for decisions in flight: responses that never render free their share after the in-flight window', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const data = snapshot([{ id: 1, schedule: { quotaLifetime: 3, quotaType: 'views' } }]);
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock, 'r1', noHistory, 2000);
    const first: number[] = [];
    for (let i = 0; i < 6; i++) {
      first.push((await serveOnce(data, ledger, clock)).ads.length);
      clock.t += 150;
      await settle();
    }
    // Three decisions hold the whole quota while their impressions may come; no fourth is made.
    expect(first.reduce((a, b) => a + b, 0)).toBe(3);
    clock.t += 2500; // past the in-flight window: none rendered, so the quota is free again
    await serveOnce(data, ledger, clock);
    await settle();
    expect((await serveOnce(data, ledger, clock)).ads).toHaveLength(1);
  });

  it('seeds a counter from reporting: what was delivered before counts toward the quota', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const data = snapshot([{ id: 1, schedule: { quotaLifetime: 10, quotaType: 'views' } }]);
    const asked: DeliveryScope[] = [];
    const history = async (_a: number, scopes: DeliveryScope[]) => {
      asked.push(...scopes);
      return { counts: scopes.map((s) => ({ key: s.key, impressions: 8, clicks: 0 })) };
    };
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock, 'r1', history);
    let served = 0;
    for (let i = 0; i < 5; i++) {
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      if (ad) {
        served++;
        await ledger.record(data, 'views', { id, account: ACCOUNT, placement: ad.placement });
      }
      clock.t += 200;
      await settle();
    }
    expect(served).toBe(2);
    expect(asked[0]).toEqual(expect.objectContaining({ placements: [201], since: '' }));
  });

  it('caps clicks per day of the schedule’s time zone, DST days included', async () => {
    // 2026-03-08 is the spring-forward day in New York: 23 hours, from 05:00Z to 04:00Z.
    const day = dayOf('America/New_York', Date.parse('2026-03-08T12:00:00Z'));
    expect(day.label).toBe('2026-03-08');
    expect((day.until - day.since) / 3600_000).toBe(23);
    expect(new Date(day.until).toISOString()).toBe('2026-03-09T04:00:00.000Z');

    const clock = virtualClock(Date.parse('2026-03-09T03:00:00Z')); // 23:00 on the 8th in New York
    const data = snapshot([{ id: 1, schedule: { dayCapLimit: 2, dayCapType: 'clicks', timezone: 'America/New_York' } }]);
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    let clicks = 0;
    for (let i = 0; i < 10; i++) {
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      if (ad) await ledger.record(data, 'clicks', { id, account: ACCOUNT, placement: ad.placement }).then(() => clicks++);
      clock.t += 200;
      await settle();
    }
    expect(clicks).toBe(2);
    expect((await serveOnce(data, ledger, clock, 'all')).excluded).toContainEqual(expect.objectContaining({ rule: 'day_cap' }));
    // 04:00Z is midnight in New York (EDT from this day on): a new day, a new cap.
    clock.t = Date.parse('2026-03-09T04:00:01Z');
    expect((await serveOnce(data, ledger, clock)).ads).toHaveLength(1);
  });

  it('paces a smooth quota: 600 views over an hour under 10x traffic, about 100 in every 10 minutes', async () => {
    const start = Date.parse('2026-06-01T12:00:00Z');
    const clock = virtualClock(start - 1);
    const data = snapshot([
      { id: 1, priority: 'standard', schedule: { startDate: '2026-06-01 12:00:00', endDate: '2026-06-01 13:00:00', quotaLifetime: 600, quotaType: 'views', deliveryMethod: 'smooth' } },
      { id: 2, priority: 'house' },
    ]);
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const slices = [0, 0, 0, 0, 0, 0];
    // 6,000 requests at an even 0.6 s: ten times what the quota needs.
    for (let i = 0; i < 6000; i++) {
      clock.t = start + i * 600;
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      if (ad?.adItem === 1) {
        slices[Math.floor((clock.t - start) / 600_000)]++;
        await ledger.record(data, 'views', { id, account: ACCOUNT, placement: ad.placement });
      }
      if (i % 50 === 0) await settle();
    }
    const total = slices.reduce((a, b) => a + b, 0);
    process.stdout.write(`pacing, one replica: ${slices.join(' + ')} = ${total} views\n`);
    expect(Math.abs(total - 600)).toBeLessThanOrEqual(18);
    for (const s of slices) expect(Math.abs(s - 100)).toBeLessThanOrEqual(15);
    // Debug shows its pace.
    expect(ledger.pacingOf(data, ACCOUNT, 201, start + 1800_000)).toEqual(expect.objectContaining({ quota: 600, expected: 300 }));
  });

  it('paces across two replicas that each see half the traffic: still 600 in the hour, evenly', async () => {
    const start = Date.parse('2026-06-01T12:00:00Z');
    const clock = virtualClock(start - 1);
    const data = snapshot([
      { id: 1, schedule: { startDate: '2026-06-01 12:00:00', endDate: '2026-06-01 13:00:00', quotaLifetime: 600, quotaType: 'views', deliveryMethod: 'smooth' } },
      { id: 2, priority: 'house' },
    ]);
    const store = new MemoryDeliveryStore(clock.now);
    const replicas = [ledgerOn(store, clock, 'a'), ledgerOn(store, clock, 'b')];
    const slices = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 6000; i++) {
      clock.t = start + i * 600;
      const ledger = replicas[i % 2];
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      if (ad?.adItem === 1) {
        slices[Math.floor((clock.t - start) / 600_000)]++;
        await ledger.record(data, 'views', { id, account: ACCOUNT, placement: ad.placement });
      }
      if (i % 50 === 0) await settle();
    }
    process.stdout.write(`pacing, two replicas: ${slices.join(' + ')} = ${slices.reduce((a, b) => a + b, 0)} views\n`);
    expect(Math.abs(slices.reduce((a, b) => a + b, 0) - 600)).toBeLessThanOrEqual(18);
    for (const s of slices) expect(Math.abs(s - 100)).toBeLessThanOrEqual(15);
  });

  it('shows a smooth placement behind its pace in debug', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:30:00Z'));
    const data = snapshot([{ id: 1, schedule: { startDate: '2026-06-01 12:00:00', endDate: '2026-06-01 13:00:00', quotaLifetime: 600, quotaType: 'views', deliveryMethod: 'smooth' } }]);
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    await serveOnce(data, ledger, clock);
    expect(ledger.pacingOf(data, ACCOUNT, 201, clock.now())).toEqual({ expected: 300, delivered: expect.any(Number), quota: 600, behind: true });
  });
});

describe('selection within a tier', () => {
  it('gives each placement of a share-of-voice channel its share, within 2 points over 10,000 decisions; the rest falls to lower tiers', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'), 7);
    const data = snapshot(
      [{ id: 1, channel: 40, shareOfVoice: 25 }, { id: 2, channel: 40, shareOfVoice: 50 }, { id: 3, priority: 'house' }],
      [{ id: 40, useShareOfVoice: true, priority: 'sponsorship' }],
    );
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const counts = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const [ad] = (await serveOnce(data, ledger, clock)).ads;
      counts.set(ad.adItem, (counts.get(ad.adItem) ?? 0) + 1);
    }
    process.stdout.write(`share of voice over 10,000 decisions: 25 % → ${counts.get(1)! / 100} %, 50 % → ${counts.get(2)! / 100} %, the rest (house) ${counts.get(3)! / 100} %\n`);
    expect(Math.abs(counts.get(1)! / 100 - 25)).toBeLessThanOrEqual(2);
    expect(Math.abs(counts.get(2)! / 100 - 50)).toBeLessThanOrEqual(2);
    expect(Math.abs(counts.get(3)! / 100 - 25)).toBeLessThanOrEqual(2);
  });

  it('serves the highest effective CPM of an auction tier, converting CPC with the prior CTR, ties broken by weight', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const data = snapshot([
      { id: 1, serveMethod: 'auction', costCpm: '2.00' },
      { id: 2, serveMethod: 'auction', costCpm: '3.50', weight: 1 },
      { id: 3, serveMethod: 'auction', costCpm: '3.50', weight: 5 },
      // A CPC of 3000 at the prior 0.1 % CTR is worth a CPM of 3000.
      { id: 4, serveMethod: 'auction', costCpc: '1.00' },
    ]);
    for (let i = 0; i < 20; i++) expect((await serveOnce(data, ledger, clock)).ads.map((c) => c.adItem)).toEqual([3]);
    const cpc = snapshot([{ id: 1, serveMethod: 'auction', costCpm: '0.90' }, { id: 4, serveMethod: 'auction', costCpc: '1.00' }]);
    expect((await serveOnce(cpc, ledger, clock)).ads.map((c) => c.adItem)).toEqual([4]);
    expect(ledger.ecpm((await serveOnce(cpc, ledger, clock, 'all')).ads.find((c) => c.adItem === 4)!)).toBeCloseTo(1.0);
  });

  it("draws among equal effective CPMs with equal chance when the zone's auction_tie_break is RANDOM", async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const data = snapshot([
      { id: 2, serveMethod: 'auction', costCpm: '3.50', weight: 1 },
      { id: 3, serveMethod: 'auction', costCpm: '3.50', weight: 5 },
    ]);
    data.zone(ACCOUNT, ZONE)!.zone!.auctionTieBreak = 'RANDOM';
    const seen = new Map<number, number>();
    for (let i = 0; i < 200; i++) {
      const [c] = (await serveOnce(data, ledger, clock)).ads;
      seen.set(c.adItem, (seen.get(c.adItem) ?? 0) + 1);
    }
    // Weight 1 against 5 would give the first about 33 of 200; equal chance about 100.
    expect(seen.get(2)).toBeGreaterThan(70);
    expect(seen.get(3)).toBeGreaterThan(70);
  });

  it('serves weighted placements of a tier before its auction ones (the default serve order)', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const ledger = ledgerOn(new MemoryDeliveryStore(clock.now), clock);
    const data = snapshot([{ id: 1, serveMethod: 'auction', costCpm: '9.00' }, { id: 2 }]);
    for (let i = 0; i < 10; i++) expect((await serveOnce(data, ledger, clock)).ads.map((c) => c.adItem)).toEqual([2]);
  });
});

describe('two replicas on one store', () => {
  it('never pass a quota together, whichever replica serves and whichever counts the impression', async () => {
    const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'));
    const store = new MemoryDeliveryStore(clock.now);
    const data = snapshot([{ id: 1, priority: 'sponsorship', schedule: { quotaLifetime: 50, quotaType: 'views' } }, { id: 2, priority: 'house' }]);
    const names = ['a', 'b'];
    const replicas = names.map((name) => ledgerOn(store, clock, name));
    const pending: { ledger: DeliveryLedger; id: string; placement: number; at: number; replica: string }[] = [];
    let impressions = 0;
    let lastAt = 0;
    for (let i = 0; i < 2000; i++) {
      const ledger = replicas[i % 2];
      const { ads: [ad], id } = await serveOnce(data, ledger, clock);
      // Impressions land 300 ms later, on either replica (the token names the one that decided).
      if (ad.adItem === 1) pending.push({ ledger: replicas[Math.floor(i / 3) % 2], id, placement: ad.placement, at: clock.t + 300, replica: names[i % 2] });
      clock.t += 10;
      while (pending.length && pending[0].at <= clock.t) {
        const p = pending.shift()!;
        await p.ledger.record(data, 'views', { id: p.id, account: ACCOUNT, placement: p.placement, replica: p.replica });
        impressions++;
        lastAt = clock.t;
      }
      await settle();
    }
    impressions += pending.length;
    expect(impressions).toBe(50);
    // Shares freed as their events land, wherever they land: the goal is met without waiting out the in-flight window.
    expect(lastAt - Date.parse('2026-06-01T12:00:00Z')).toBeLessThan(2000);
  });

  it('never pass it under random delays, lost impressions and three replicas (20 seeded runs)', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const clock = virtualClock(Date.parse('2026-06-01T12:00:00Z'), seed);
      const store = new MemoryDeliveryStore(clock.now);
      const limit = 20 + seed;
      const data = snapshot([{ id: 1, priority: 'sponsorship', schedule: { quotaLifetime: limit, quotaType: 'views' } }, { id: 2, priority: 'house' }]);
      const names = ['a', 'b', 'c'];
      const replicas = names.map((name) => ledgerOn(store, clock, name, noHistory, 1500));
      const pending: { ledger: DeliveryLedger; id: string; placement: number; at: number; replica: string; late: boolean }[] = [];
      let impressions = 0;
      let late = 0;
      for (let i = 0; i < 3000; i++) {
        const r = Math.floor(clock.random() * 3);
        const { ads: [ad], id } = await serveOnce(data, replicas[r], clock);
        // One response in five never renders; the rest render after 0-2 s, on any replica.
        if (ad.adItem === 1 && clock.random() >= 0.2) {
          const delay = clock.random() * 2000;
          pending.push({ ledger: replicas[Math.floor(clock.random() * 3)], id, placement: ad.placement, at: clock.t + delay, replica: names[r], late: delay > 1500 });
          pending.sort((x, y) => x.at - y.at);
        }
        clock.t += 5 + clock.random() * 20;
        while (pending.length && pending[0].at <= clock.t) {
          const p = pending.shift()!;
          await p.ledger.record(data, 'views', { id: p.id, account: ACCOUNT, placement: p.placement, replica: p.replica });
          impressions++;
          if (p.late) late++;
        }
        if (i % 10 === 0) await settle();
      }
      impressions += pending.length;
      late += pending.filter((p) => p.late).length;
      // Only impressions later than the in-flight window (1.5 s here) can pass the goal, and the
      // goal is met: shares of responses that never rendered come back.
      if (impressions > limit + late || impressions < limit) throw new Error(`seed ${seed}: ${impressions} impressions for a quota of ${limit} (${late} late)`);
    }
  });
});
