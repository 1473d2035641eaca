/**
 * The decision engine on its own: a snapshot built in memory, a fixed clock and fixed chance, no
 * HTTP, no Redis, no services. Each rule it applies is checked by what it decides.
 */
import { DecisionEntity, type DeepPartial } from '../../../proto/gen/adserver/inventory/v1/decision_data';
import { decide, type Clock, type DecisionRequest } from '../decide';
import { dataFrom } from '../decision-store';
import { platformOf } from '../targeting/platform';

const ACCOUNT = 7;
const ZONE = 10;

function entity(kind: string, id: number, fields: DeepPartial<DecisionEntity>): DecisionEntity {
  return DecisionEntity.fromPartial({ kind, id, account: ACCOUNT, ...fields });
}

function snapshot(opts: { weights?: number[]; end?: string; uniqueDelivery?: boolean; keywords?: string; priorities?: string[] } = {}) {
  const weights = opts.weights ?? [1, 3];
  const entities = [
    entity('standard_zone', ZONE, { zone: { width: 300, height: 250, dimensions: 'fixed', publisher: 1, uniqueDelivery: !!opts.uniqueDelivery } }),
    entity('schedule', 50, { schedule: { startDate: '2026-01-01 00:00:00', endDate: opts.end ?? '' } }),
  ];
  weights.forEach((weight, i) => {
    entities.push(entity('image_ad_item', 100 + i, { adItem: { width: 300, height: 250, location: 'https://example.com/', creativeUrl: `https://cdn.example/${i}.png` } }));
    entities.push(entity('placement', 200 + i, {
      placement: { zoneKind: 'standard_zone', zone: ZONE, advertisementKind: 'image_ad_item', advertisement: 100 + i, schedule: 50, weight, active: true, keywords: i === 0 ? opts.keywords ?? '' : '', priority: opts.priorities?.[i] ?? '' },
    }));
  });
  return dataFrom(entities);
}

const visitor: DecisionRequest['visitor'] = { now: new Date('2026-06-01T12:00:00Z'), platform: platformOf(''), keywords: [], data: {}, frequency: new Map(), accountTimezone: 'UTC' };
const request = (over: Partial<DecisionRequest> = {}): DecisionRequest => ({ account: ACCOUNT, zone: ZONE, visitor, want: 'one', ...over });
const clock = (random: number, now = Date.parse('2026-06-01T12:00:00Z')): Clock => ({ now: () => now, random: () => random });

describe('decide()', () => {
  it('picks by weight: the same chance always picks the same ad', () => {
    const data = snapshot({ weights: [1, 3] });
    // Total weight 4: a draw under 1/4 lands on the first ad, above it on the second.
    expect(decide(request(), data, {}, clock(0.2)).ads.map((c) => c.adItem)).toEqual([100]);
    expect(decide(request(), data, {}, clock(0.3)).ads.map((c) => c.adItem)).toEqual([101]);
  });

  it('ranks every eligible ad by weight for jsonr', () => {
    const data = snapshot({ weights: [1, 3, 2] });
    expect(decide(request({ want: 'ranked' }), data, {}, clock(0.5)).ads.map((c) => c.adItem)).toEqual([101, 102, 100]);
  });

  it('serves nothing after the schedule ends, and says why in debug', () => {
    const data = snapshot({ end: '2026-03-01 00:00:00' });
    expect(decide(request(), data, {}, clock(0.5)).ads).toEqual([]);
    const debug = decide(request({ want: 'all' }), data, {}, clock(0.5));
    expect(debug.excluded.map((e) => e.rule)).toEqual(['schedule', 'schedule']);
    // The same snapshot before the end date serves.
    expect(decide(request(), data, {}, clock(0.5, Date.parse('2026-02-01T00:00:00Z'))).ads).toHaveLength(1);
  });

  it('leaves out what the page view already showed in a unique-delivery zone', () => {
    const data = snapshot({ weights: [1, 1], uniqueDelivery: true });
    const result = decide(request({ want: 'all' }), data, { shownOnPage: new Set([100]) }, clock(0.1));
    expect(result.ads.map((c) => c.adItem)).toEqual([101]);
    expect(result.excluded).toEqual([expect.objectContaining({ adItem: 100, rule: 'unique_delivery' })]);
  });

  it('serves a keyword-preferred match ahead of the rest', () => {
    const data = snapshot({ weights: [1, 100], keywords: 'sports' });
    expect(decide(request({ visitor: { ...visitor, keywords: ['sports'] } }), data, {}, clock(0.99)).ads.map((c) => c.adItem)).toEqual([100]);
    expect(decide(request(), data, {}, clock(0.99)).ads.map((c) => c.adItem)).toEqual([101]);
  });

  it('picks only among ads the answer form accepts, keeping their weights', () => {
    const data = snapshot({ weights: [1, 3] });
    expect(decide(request({ accepts: (c) => c.adItem === 100 }), data, {}, clock(0.9)).ads.map((c) => c.adItem)).toEqual([100]);
  });

  it('reads a changed target at once: resolved targets are kept only until the snapshot changes', () => {
    const data = snapshot({ weights: [1], keywords: 'sports' });
    const sports = request({ visitor: { ...visitor, keywords: ['sports'] } });
    expect(decide(sports, data, {}, clock(0.5)).ads).toHaveLength(1);
    // Required keywords the request does not give exclude the ad, from the next decision on.
    data.apply({ reset: false, removals: [], upserts: [entity('placement', 200, { placement: { zoneKind: 'standard_zone', zone: ZONE, advertisementKind: 'image_ad_item', advertisement: 100, schedule: 50, weight: 1, active: true, keywords: 'chess', keywordsMatchMethod: 'required' } })] });
    expect(decide(sports, data, {}, clock(0.5)).ads).toEqual([]);
  });

  it('serves only the highest priority tier that has an eligible ad, whatever the weights', () => {
    const data = snapshot({ weights: [1, 1000, 1000], priorities: ['sponsorship', 'standard', 'house'] });
    for (const chance of [0, 0.5, 0.999]) expect(decide(request(), data, {}, clock(chance)).ads.map((c) => c.adItem)).toEqual([100]);
    const debug = decide(request({ want: 'all' }), data, {}, clock(0.5));
    expect(debug.ads.map((c) => c.adItem)).toEqual([100]);
    expect(debug.excluded).toEqual([
      expect.objectContaining({ adItem: 101, rule: 'priority', detail: 'a sponsorship ad is eligible (this one is standard)' }),
      expect.objectContaining({ adItem: 102, rule: 'priority', detail: 'a sponsorship ad is eligible (this one is house)' }),
    ]);
    // jsonr lists every eligible ad, highest tier first.
    expect(decide(request({ want: 'ranked' }), data, {}, clock(0.5)).ads.map((c) => c.adItem)).toEqual([100, 101, 102]);
    // A tier whose ads the answer form cannot show gives way to the next.
    expect(decide(request({ accepts: (c) => c.adItem !== 100 }), data, {}, clock(0.99)).ads.map((c) => c.adItem)).toEqual([101]);
    // The house ad serves when nothing above it is eligible.
    const houseOnly = snapshot({ weights: [1, 1], priorities: ['house', 'bulk'] });
    expect(decide(request(), houseOnly, {}, clock(0.1)).ads.map((c) => c.adItem)).toEqual([101]);
  });

  it('answers nothing for a zone it does not hold', () => {
    expect(decide(request({ zone: 999 }), snapshot(), {}, clock(0.5)).ads).toEqual([]);
  });
});
