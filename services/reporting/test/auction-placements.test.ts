/**
 * GET /v2/reports/auction-placements and /v2/vast-reports/auction-placements: the account's auction
 * placements (from inventory) with what they won (reporting's rollups, display or VAST), fed through
 * the real ingest API.
 */
import crypto from 'node:crypto';
import type { ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { admin } from '../../../gateway/test/support/platform';
import { EventKind, recordEvents, servingEvent } from './events-fixtures';

const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
const IMG = 'https://cdn.example.com/a.png';
const run = crypto.randomUUID().slice(0, 8);
const now = new Date();
const today = `${now.toISOString().slice(0, 10)}T00:00:00+00:00`;

async function made(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

/** `n` won decisions of a placement, each answered and shown, at `price` CPM (USD). */
function wins(account: number, p: { publisher: number; zone: number; adItem: number; placement: number }, n: number, price: string, vast = false): ServingEvent[] {
  const out: ServingEvent[] = [];
  for (let i = 0; i < n; i++) {
    const d = `${run}-${p.placement}-${i}`;
    for (const [kind, name] of [[EventKind.RESPONSE, 'response'], [EventKind.IMPRESSION, 'impression']] as const) {
      out.push(servingEvent({
        account, occurredAt: now.toISOString(), ...p, advertiser: 0, campaign: 0, decision: d, id: `${d}:${name}`, kind,
        pricingModel: 'cpm', price, currency: 'USD', vast,
      }));
    }
  }
  return out;
}

let acct: TestAccount;
let api: Client;
const ids: Record<string, number> = {};

beforeAll(async () => {
  acct = await newAccount();
  api = acct.live;
  await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
  ids.publisher = (await made(api, '/v2/publishers', { name: 'Auction publisher' })).id;
  ids.zone = (await made(api, '/v2/zones/standard', { name: 'Z', width: 300, height: 250, publisher: ids.publisher })).id;
  const schedule = (await made(api, '/v2/schedules', {})).id;
  const item = (await made(api, '/v2/ad-items/image', { name: 'Bid', width: 300, height: 250, creative_url: IMG })).id;
  ids.item = item;
  const placement = (over: Record<string, unknown>) => made(api, '/v2/placements', { advertisement: { id: item, type: 'image_ad_item' }, zone: { id: ids.zone, type: 'standard_zone' }, schedule, ...over });
  ids.high = (await placement({ serve_method: 'auction', cost: { cpm: 4.5 } })).id;
  ids.low = (await placement({ serve_method: 'auction', cost: { cpm: 2 } })).id;
  ids.weighted = (await placement({ serve_method: 'weight', cost: { cpm: 9 } })).id;

  ids.vastZone = (await made(api, '/v2/vast-zones', { name: 'Pre-roll', publisher: ids.publisher })).id;
  const vastItem = (await made(api, '/v2/vast-ad-items', { name: 'Spot', duration: '00:00:15' })).id;
  const vastSchedule = (await made(api, '/v2/vast-schedules', { start_date: '2030-01-01 00:00:00' })).id;
  ids.vast = (await made(api, '/v2/vast-placements', { advertisement: { id: vastItem, type: 'vast_ad_item' }, zone: ids.vastZone, schedule: vastSchedule, serve_method: 'auction', cost: { cpm: 8 } })).id;

  const at = (placement: number, zone = ids.zone, adItem = item) => ({ publisher: ids.publisher, zone, adItem, placement });
  const events = [
    ...wins(acct.id, at(ids.high), 6, '4.50'),
    ...wins(acct.id, at(ids.low), 4, '2.00'),
    ...wins(acct.id, at(ids.weighted), 5, '9.00'),
    ...wins(acct.id, at(ids.vast, ids.vastZone, vastItem), 3, '8.00', true),
  ];
  expect(await recordEvents(events)).toEqual({ stored: events.length });
});

describe('GET /v2/reports/auction-placements', () => {
  test('overview: wins and views of the auction placements only, revenue and CPM bids per currency', async () => {
    const res = await api.get(`/v2/reports/auction-placements?${q({ type: 'overview', period: 'day', preset: 'today', details: true })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/auction-placements', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'auction_placement_report', url: '/v2/reports/auction-placements', meta: { type: 'overview', period: 'day', from: today, timezone: 'UTC' } });
    const usd = (amount: number) => [{ cur: 'USD', amount }];
    // 6 wins at CPM 4.50 and 4 at CPM 2: revenue 0.027 + 0.008; bids 2..4.5, 6 × 4.5 + 4 × 2 = 35.
    const summary = {
      requests: null, wins: 10, views: 10, revenue: 0.035, publisherRevenue: 0, minCPM: 2, maxCPM: 4.5, totalCPM: 35,
      financials: { revenue: usd(0.035), publisherRevenue: usd(0), minCPM: usd(2), maxCPM: usd(4.5), totalCPM: usd(35) },
    };
    expect(res.body.data).toEqual([{ type: 'overview', id: acct.id, summary, details: [{ start_date: today, ...summary }] }]);
  });

  test('by placement with breakdown; filters by placement and zone', async () => {
    const res = await api.get(`/v2/reports/auction-placements?${q({ type: 'placement', period: 'day', preset: 'today', breakdown: true })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/auction-placements', 'get', res.body);
    expect(res.body.data.map((d: any) => d.id)).toEqual([ids.high, ids.low]);
    const [high] = res.body.data;
    expect(high.summary).toMatchObject({ wins: 6, views: 6, minCPM: 4.5, maxCPM: 4.5, totalCPM: 27 });
    expect(high.summary.breakdown).toEqual([expect.objectContaining({ zone: { type: 'standard_zone', id: ids.zone }, placement: ids.high, publisher: ids.publisher, wins: 6 })]);
    expect(high.details).toBeUndefined();

    const one = await api.get(`/v2/reports/auction-placements?${q({ type: 'zone', period: 'day', preset: 'today', placements: ids.low })}`);
    expect(one.body.data).toEqual([expect.objectContaining({ type: 'zone', id: ids.zone, summary: expect.objectContaining({ wins: 4, totalCPM: 8 }) })]);
    // A weight-served placement is never in it, even when asked for.
    const weighted = await api.get(`/v2/reports/auction-placements?${q({ type: 'placement', period: 'day', preset: 'today', placements: ids.weighted })}`);
    expect(weighted.body.data).toEqual([]);
    const publisher = await api.get(`/v2/reports/auction-placements?${q({ type: 'publisher', period: 'week', preset: 'today', zones: ids.zone })}`);
    expect(publisher.body.data).toEqual([expect.objectContaining({ id: ids.publisher, summary: expect.objectContaining({ wins: 10 }) })]);
  });

  test('VAST: only the VAST auction placements and their VAST delivery', async () => {
    const res = await api.get(`/v2/vast-reports/auction-placements?${q({ type: 'placement', period: 'day', preset: 'today', breakdown: true, details: true })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/vast-reports/auction-placements', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'vast_auction_placement_report', url: '/v2/vast-reports/auction-placements' });
    expect(res.body.data).toHaveLength(1);
    const [p] = res.body.data;
    expect(p).toMatchObject({ type: 'placement', id: ids.vast, summary: { wins: 3, views: 3, revenue: 0.024, minCPM: 8, maxCPM: 8, totalCPM: 24 } });
    expect(p.summary.breakdown).toEqual([expect.objectContaining({ zone: { type: 'vast_zone', id: ids.vastZone }, placement: ids.vast, wins: 3 })]);
    expect(p.details[0]).toMatchObject({ start_date: today, wins: 3, breakdown: [expect.objectContaining({ placement: ids.vast })] });
  });

  test('documented errors name their parameter; test mode and other accounts see nothing', async () => {
    for (const [params, field] of [
      [{ period: 'day', preset: 'today' }, 'type'],
      [{ type: 'campaign', period: 'day', preset: 'today' }, 'type'],
      [{ type: 'overview', preset: 'today' }, 'period'],
      [{ type: 'overview', period: 'day' }, 'preset'],
      [{ type: 'overview', period: 'day', preset: 'today', placements: 'x' }, 'placements'],
      [{ type: 'overview', period: 'day', preset: 'today', timezone: 'Mars/Base' }, 'timezone'],
      [{ type: 'overview', period: 'day', preset: 'today', financials: true }, 'financials'],
    ] as const) {
      for (const path of ['/v2/reports/auction-placements', '/v2/vast-reports/auction-placements']) {
        paramFor(expectError(await api.get(`${path}?${q(params)}`), 400, 'v2'), field);
      }
    }
    expect((await api.post('/v2/reports/auction-placements', {})).status).toBe(501);
    const test = await acct.test.get(`/v2/reports/auction-placements?${q({ type: 'overview', period: 'day', preset: 'today' })}`);
    expect(test.body.data).toEqual([expect.objectContaining({ id: acct.id, summary: expect.objectContaining({ wins: 0, minCPM: 0 }) })]);
    const other = await newAccount();
    const theirs = await other.live.get(`/v2/reports/auction-placements?${q({ type: 'placement', period: 'day', preset: 'today', placements: ids.high })}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    // The reporting budget (60 a minute by default) applies to both paths.
    expect(theirs.headers['x-ratelimit-limit']).toBe(String(60));
    expect((await other.live.get(`/v2/vast-reports/auction-placements?${q({ type: 'overview', period: 'day', preset: 'today' })}`)).headers['x-ratelimit-limit']).toBe('60');
  });
});
