/**
 * GET /v2/reports/demand-source over real auction events: AUCTION events (every demand endpoint asked
 * and how it answered) and the RESPONSE and IMPRESSION events of the decisions demand won go in through
 * EventIngest.RecordEvents like serving's, and come out of the gateway by account, publisher, zone,
 * demand source and endpoint. The won impressions still count in the display and VAST reports.
 */
import crypto from 'node:crypto';
import { status } from '@grpc/grpc-js';
import Redis from 'ioredis';
import { BidOutcome, RecordEventsRequest, type DemandBid, type ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { expectError, newAccount, paramFor, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { admin } from '../../../gateway/test/support/platform';
import { reports } from '../../shared/grpc/clients';
import { EventKind, recordEvents, servingEvent, waitFor } from './events-fixtures';

const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
const run = crypto.randomUUID().slice(0, 8);
const now = new Date();
const today = `${now.toISOString().slice(0, 10)}T00:00:00+00:00`;
const PATH = '/v2/reports/demand-source';

// Endpoints 1 and 2 belong to source 1, endpoints 3 and 4 to source 2 (ids offset per run, so two runs never meet).
const base = 700_000 + Math.floor(Math.random() * 100_000) * 10;
const S1 = base + 1;
const S2 = base + 2;
const E1 = base + 5;
const E2 = base + 6;
const E3 = base + 7;
const E4 = base + 8;
const SOURCE: Record<number, number> = { [E1]: S1, [E2]: S1, [E3]: S2, [E4]: S2 };

const bid = (endpoint: number, outcome: BidOutcome, cpm = '', won = false): DemandBid => ({
  demandEndpoint: endpoint, demandSource: SOURCE[endpoint], outcome, cpm, won, latencyMs: outcome === BidOutcome.TIMEOUT ? 150 : 40, deal: '', lossReason: won ? 0 : 102,
});

let acct: TestAccount;
let api: Client;
const ids: Record<string, number> = {};
let events: ServingEvent[] = [];

async function made(path: string, body: Record<string, unknown>): Promise<any> {
  const res = await api.post(path, body);
  expect({ path, status: res.status, body: res.body }).toMatchObject({ status: 200 });
  return res.body;
}

/**
 * One decision: its AUCTION event and, when a bid won, the RESPONSE and IMPRESSION events naming the
 * winner at the clearing CPM `price` with the publisher's `share` (percent).
 */
function decision(name: string, zone: number, vast: boolean, bids: DemandBid[], price = '', share = ''): ServingEvent[] {
  const d = `${run}-${name}`;
  const at = { account: acct.id, occurredAt: now.toISOString(), publisher: ids.publisher, zone, advertiser: 0, campaign: 0, adItem: 0, placement: 0, decision: d, vast };
  const out = [servingEvent({ ...at, id: `${d}:auction`, kind: EventKind.AUCTION, bids })];
  const winner = bids.find((b) => b.won);
  if (winner) {
    for (const [kind, suffix] of [[EventKind.RESPONSE, 'response'], [EventKind.IMPRESSION, 'impression']] as const) {
      out.push(servingEvent({
        ...at, id: `${d}:${suffix}`, kind, demandEndpoint: winner.demandEndpoint, demandSource: winner.demandSource, revenueShare: share,
        pricingModel: 'cpm', price, currency: 'USD',
      }));
    }
  }
  return out;
}

beforeAll(async () => {
  acct = await newAccount();
  api = acct.live;
  await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
  ids.publisher = (await made('/v2/publishers', { name: 'Demand publisher' })).id;
  ids.zone = (await made('/v2/zones/standard', { name: 'Z', width: 300, height: 250, publisher: ids.publisher })).id;
  ids.vastZone = (await made('/v2/vast-zones', { name: 'Pre-roll', publisher: ids.publisher })).id;
  events = [
    // A: endpoint 1 wins at 2.50 (clears at 2.10, 60 % to the publisher) over 1.75; 3 has no bid, 4 times out.
    ...decision('a', ids.zone, false, [bid(E1, BidOutcome.BID, '2.50', true), bid(E2, BidOutcome.BID, '1.75'), bid(E3, BidOutcome.NO_BID), bid(E4, BidOutcome.TIMEOUT)], '2.10', '60'),
    // B: endpoint 2 wins at 4.00 (clears at 3.10, 50 %) over 3.00; 3 bids under the floor, 4 fails.
    ...decision('b', ids.zone, false, [bid(E1, BidOutcome.BID, '3.00'), bid(E2, BidOutcome.BID, '4.00', true), bid(E3, BidOutcome.BELOW_FLOOR, '0.20'), bid(E4, BidOutcome.ERROR)], '3.10', '50'),
    // C (VAST): endpoint 1's bid is refused, endpoint 3 wins at 6.00 (70 %).
    ...decision('c', ids.vastZone, true, [bid(E1, BidOutcome.REJECTED, '5.00'), bid(E3, BidOutcome.BID, '6.00', true)], '6.00', '70'),
    // D: nobody bids.
    ...decision('d', ids.zone, false, [bid(E1, BidOutcome.NO_BID), bid(E2, BidOutcome.TIMEOUT)]),
  ];
  expect(await recordEvents(events)).toEqual({ stored: events.length });
});

const usd = (amount: number) => [{ cur: 'USD', amount }];
const get = (params: Record<string, string | number | boolean>, as = api) => as.get(`${PATH}?${q(params)}`);

/** 12 endpoints asked: 5 valid bids, 2 without a bid, 2 timeouts, 1 error, 1 under the floor, 1 refused; 3 won and were seen. */
const OVERVIEW = {
  requests: 12, wins: 3, views: 3,
  // (2.10 + 3.10 + 6.00) / 1000, and 60 %, 50 % and 70 % of each.
  revenue: 0.0112, publisherRevenue: 0.00701,
  minCPM: 1.75, maxCPM: 6, totalCPM: 12.5,
  financials: {
    revenue: usd(0.0112), publisherRevenue: usd(0.00701), minCPM: usd(1.75), maxCPM: usd(6), totalCPM: usd(12.5),
    averageBid: usd(3.45), averageClearingPrice: usd(4.166667),
  },
  emptyResponses: 2, filledResponses: 7,
  bids: 5, timeouts: 2, errors: 1, belowFloor: 1, rejected: 1,
  winRate: 0.25, averageBid: 3.45, averageClearingPrice: 4.166667,
};

describe('GET /v2/reports/demand-source', () => {
  test('overview: every request, answer, win and view once, with revenue, CPMs, win rate and averages', async () => {
    const res = await get({ type: 'overview', period: 'day', preset: 'today', details: true });
    expect(res.status).toBe(200);
    expectReferenceShape(PATH, 'get', res.body);
    expect(res.body).toMatchObject({ object: 'demand_source_report', url: PATH, meta: { type: 'overview', period: 'day', from: today, timezone: 'UTC' } });
    expect(res.body.data).toEqual([{ type: 'overview', id: acct.id, summary: OVERVIEW, details: [{ start_date: today, ...OVERVIEW }] }]);
    // A zone whose day does not start on a whole hour reads the quarter-hour rollups: the same counts.
    const kolkata = await get({ type: 'overview', period: 'day', preset: 'today', timezone: 'Asia/Kolkata' });
    expect(kolkata.body.data[0].summary).toEqual(OVERVIEW);
  });

  test('by endpoint: each endpoint asked, with what it answered and won', async () => {
    const res = await get({ type: 'endpoint', period: 'day', preset: 'today' });
    expect(res.status).toBe(200);
    expectReferenceShape(PATH, 'get', res.body);
    expect(res.body.data.map((d: any) => [d.type, d.id])).toEqual([[ 'endpoint', E1 ], [ 'endpoint', E2 ], [ 'endpoint', E3 ], [ 'endpoint', E4 ]]);
    const [e1, e2, e3, e4] = res.body.data.map((d: any) => d.summary);
    expect(e1).toMatchObject({
      requests: 4, filledResponses: 3, emptyResponses: 1, bids: 2, rejected: 1, wins: 1, views: 1, revenue: 0.0021, publisherRevenue: 0.00126,
      minCPM: 2.5, maxCPM: 3, totalCPM: 2.5, averageBid: 2.75, averageClearingPrice: 2.5, winRate: 0.25,
    });
    expect(e2).toMatchObject({ requests: 3, bids: 2, timeouts: 1, wins: 1, views: 1, revenue: 0.0031, publisherRevenue: 0.00155, minCPM: 1.75, maxCPM: 4, totalCPM: 4, averageBid: 2.875, winRate: 0.3333 });
    expect(e3).toMatchObject({ requests: 3, bids: 1, emptyResponses: 1, belowFloor: 1, filledResponses: 2, wins: 1, views: 1, revenue: 0.006, publisherRevenue: 0.0042, minCPM: 6, maxCPM: 6, winRate: 0.3333 });
    // An endpoint that never bid: no CPMs or averages to give.
    expect(e4).toEqual({
      requests: 2, wins: 0, views: 0, revenue: 0, publisherRevenue: 0, minCPM: 0, maxCPM: 0, totalCPM: 0,
      financials: { revenue: usd(0), publisherRevenue: usd(0), minCPM: [], maxCPM: [], totalCPM: usd(0), averageBid: [], averageClearingPrice: [] },
      emptyResponses: 0, filledResponses: 0, bids: 0, timeouts: 1, errors: 1, belowFloor: 0, rejected: 0, winRate: 0, averageBid: 0, averageClearingPrice: 0,
    });
  });

  test('by demand source, zone and publisher', async () => {
    const sources = await get({ type: 'demand_source', period: 'month', preset: 'today' });
    expect(sources.body.data.map((d: any) => [d.id, d.summary.requests, d.summary.wins, d.summary.views])).toEqual([[S1, 7, 2, 2], [S2, 5, 1, 1]]);
    const zones = await get({ type: 'zone', period: 'week', preset: 'today' });
    expect(zones.body.data.map((d: any) => [d.type, d.id, d.summary.requests, d.summary.wins])).toEqual(
      [['zone', ids.zone, 10, 2], ['zone', ids.vastZone, 2, 1]].sort((a, b) => (a[1] as number) - (b[1] as number)),
    );
    const publishers = await get({ type: 'publisher', period: 'year', preset: 'today' });
    expect(publishers.body.data).toEqual([{ type: 'publisher', id: ids.publisher, summary: OVERVIEW }]);
  });

  test('breakdown by zone, publisher, source and endpoint, in the summary and each period', async () => {
    const res = await get({ type: 'endpoint', period: 'day', preset: 'today', breakdown: true, details: true, endpoints: E1 });
    expect(res.status).toBe(200);
    expectReferenceShape(PATH, 'get', res.body);
    expect(res.body.data).toHaveLength(1);
    const [e1] = res.body.data;
    const rows = [
      expect.objectContaining({ zone: { type: 'standard_zone', id: ids.zone }, publisher: ids.publisher, demandSource: S1, endpoint: E1, requests: 3, bids: 2, emptyResponses: 1, wins: 1 }),
      expect.objectContaining({ zone: { type: 'vast_zone', id: ids.vastZone }, publisher: ids.publisher, demandSource: S1, endpoint: E1, requests: 1, rejected: 1, wins: 0 }),
    ];
    expect(e1.summary.breakdown).toEqual(rows);
    expect(e1.details).toEqual([expect.objectContaining({ start_date: today, requests: 4, breakdown: rows })]);
    // Without breakdown there is none; summary=false leaves the summary out.
    const plain = await get({ type: 'overview', period: 'day', preset: 'today', summary: false, details: true });
    expect(plain.body.data[0].summary).toBeUndefined();
    expect(plain.body.data[0].details[0].breakdown).toBeUndefined();
  });

  test('filters: standard zones, VAST zones, endpoints, publishers', async () => {
    const requests = async (params: Record<string, string | number>) => {
      const res = await get({ type: 'overview', period: 'day', preset: 'today', ...params });
      expect(res.status).toBe(200);
      return res.body.data[0].summary.requests;
    };
    expect(await requests({ zones: ids.zone })).toBe(10);
    expect(await requests({ vastZones: ids.vastZone })).toBe(2);
    expect(await requests({ zones: ids.zone, vastZones: ids.vastZone })).toBe(12);
    // The VAST zone's id is not a standard zone's.
    expect(await requests({ zones: ids.vastZone })).toBe(0);
    expect(await requests({ endpoints: `${E1},${E2}` })).toBe(7);
    expect(await requests({ endpoints: E4, zones: ids.zone })).toBe(2);
    expect(await requests({ publishers: ids.publisher })).toBe(12);
    expect(await requests({ publishers: ids.publisher + 1_000_000 })).toBe(0);
    const none = await get({ type: 'endpoint', period: 'day', preset: 'today', endpoints: base + 9 });
    expect(none.body.data).toEqual([]);
  });

  test('events count once: a redelivered batch, or an auction sent again with other bids, adds nothing', async () => {
    expect(await recordEvents(events)).toEqual({ stored: 0 });
    const again = events.find((e) => e.id === `${run}-a:auction`)!;
    expect(await recordEvents([{ ...again, bids: [bid(E1, BidOutcome.BID, '99.00', true)] }])).toEqual({ stored: 0 });
    expect((await get({ type: 'overview', period: 'day', preset: 'today' })).body.data[0].summary).toEqual(OVERVIEW);
  });

  test('rebuilding the rollups from the raw events gives the same report', async () => {
    const params = { type: 'endpoint', period: 'day', preset: 'today', breakdown: true };
    const before = (await get(params)).body;
    const rebuilt = await reports.rebuildRollups({ from: new Date(now.getTime() - 3_600_000).toISOString(), to: new Date(now.getTime() + 3_600_000).toISOString() });
    expect(rebuilt.events).toBeGreaterThanOrEqual(events.length);
    expect((await get(params)).body).toEqual(before);
  });

  test('demand wins count in the display and VAST reports as any impression; auctions are not responses', async () => {
    const display = await api.get(`/v2/reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`);
    expect(display.body.data[0].summary).toMatchObject({ responses: 2, impressions: 2, clicks: 0, financials: { cost: usd(0.0052) } });
    const vast = await api.get(`/v2/vast-reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`);
    expect(vast.body.data[0].summary).toMatchObject({ requests: 1, impressions: 1, financials: { cost: usd(0.006) } });
    // Placement and ad item 0: no ad item row, no auction placement win.
    const items = await api.get(`/v2/reports?${q({ type: 'ad-item', period: 'day', preset: 'today' })}`);
    expect(items.body.data).toEqual([]);
    const zone = await api.get(`/v2/reports?${q({ type: 'zone', period: 'day', preset: 'today', breakdown: true })}`);
    expect(zone.body.data).toEqual([expect.objectContaining({ id: ids.zone, summary: expect.objectContaining({ responses: 2, impressions: 2 }) })]);
  });

  test('test mode records nothing; other accounts see nothing of it', async () => {
    const test = await get({ type: 'overview', period: 'day', preset: 'today' }, acct.test);
    expect(test.status).toBe(200);
    expect(test.body.data).toEqual([expect.objectContaining({ id: acct.id, summary: expect.objectContaining({ requests: 0, wins: 0, views: 0, revenue: 0, minCPM: 0, winRate: 0 }) })]);
    expect((await get({ type: 'endpoint', period: 'day', preset: 'today' }, acct.test)).body.data).toEqual([]);
    const other = await newAccount();
    const theirs = await get({ type: 'endpoint', period: 'day', preset: 'today', endpoints: E1 }, other.live);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    const overview = await get({ type: 'overview', period: 'day', preset: 'today' }, other.live);
    expect(overview.body.data).toEqual([expect.objectContaining({ id: other.id, summary: expect.objectContaining({ requests: 0 }) })]);
    // The reporting budget (60 a minute by default) applies.
    expect(theirs.headers['x-ratelimit-limit']).toBe('60');
  });

  test('documented errors name their parameter', async () => {
    for (const [params, field] of [
      [{ period: 'day', preset: 'today' }, 'type'],
      [{ type: 'placement', period: 'day', preset: 'today' }, 'type'],
      [{ type: 'overview', preset: 'today' }, 'period'],
      [{ type: 'overview', period: 'hour', preset: 'today' }, 'period'],
      [{ type: 'overview', period: 'day' }, 'preset'],
      [{ type: 'overview', period: 'day', preset: 'someday' }, 'preset'],
      [{ type: 'overview', period: 'day', from: '2026-01-01T00:00:00Z' }, 'to'],
      [{ type: 'overview', period: 'day', from: '2026-02-30T00:00:00Z', to: '2026-03-02T00:00:00Z' }, 'from'],
      [{ type: 'overview', period: 'day', preset: 'today', timezone: 'Mars/Base' }, 'timezone'],
      [{ type: 'overview', period: 'day', preset: 'today', endpoints: 'x' }, 'endpoints'],
      [{ type: 'overview', period: 'day', preset: 'today', vastZones: '0' }, 'vastZones'],
      [{ type: 'overview', period: 'day', preset: 'today', zones: '1,a' }, 'zones'],
      [{ type: 'overview', period: 'day', preset: 'today', publishers: '-1' }, 'publishers'],
      [{ type: 'overview', period: 'day', preset: 'today', details: 'maybe' }, 'details'],
      [{ type: 'overview', period: 'day', preset: 'today', placements: 1 }, 'placements'],
    ] as const) {
      paramFor(expectError(await get(params), 400, 'v2'), field);
    }
    expect((await api.post(PATH, {})).status).toBe(501);
  });

  test('the OpenAPI document describes the route, its parameters and its answer', async () => {
    const doc = (await api.get('/v2/openapi.json')).body;
    const op = doc.paths['/v2/reports/demand-source'].get;
    expect(op.parameters.map((p: any) => p.name)).toEqual(['type', 'period', 'preset', 'from', 'to', 'timezone', 'summary', 'details', 'breakdown', 'publishers', 'zones', 'vastZones', 'endpoints']);
    const body = op.responses['200'].content['application/json'].schema;
    expect(body.properties.object).toEqual({ const: 'demand_source_report' });
    expect(Object.keys(body.properties.data.items.properties.summary.properties)).toEqual(expect.arrayContaining(['requests', 'wins', 'views', 'winRate', 'averageBid', 'averageClearingPrice', 'breakdown']));
    expect(op.responses['400']).toBeDefined();
  });
});

describe('EventIngest.RecordEvents with AUCTION events', () => {
  const account = 900_000_000 + Math.floor(Math.random() * 1_000_000);
  const auction = (over: Partial<ServingEvent>) => servingEvent({ account, id: `${crypto.randomUUID()}:auction`, kind: EventKind.AUCTION, placement: 0, adItem: 0, bids: [bid(E1, BidOutcome.BID, '1.00', true)], ...over });

  test.each([
    ['a bid without its CPM', { bids: [bid(E1, BidOutcome.BID)] }, /events\[0\]: bids\[0\]\.cpm is required with outcome BID/],
    ['a CPM that is not a decimal', { bids: [bid(E1, BidOutcome.BELOW_FLOOR, '1,00')] }, /events\[0\]: bids\[0\]\.cpm must be a decimal string/],
    ['a win without a valid bid', { bids: [bid(E1, BidOutcome.BELOW_FLOOR, '0.10', true)] }, /events\[0\]: bids\[0\] won without a valid bid/],
    ['two winners', { bids: [bid(E1, BidOutcome.BID, '1.00', true), bid(E2, BidOutcome.BID, '1.00', true)] }, /at most one winning bid/],
    ['an unknown outcome', { bids: [bid(E1, BidOutcome.BID_OUTCOME_UNSPECIFIED)] }, /bids\[0\]\.outcome must be/],
    ['no endpoint', { bids: [{ ...bid(E1, BidOutcome.NO_BID), demandEndpoint: 0 }] }, /bids\[0\]\.demand_endpoint must be a positive id/],
  ])('an AUCTION event with %s is refused, naming the event', async (_what, over, message) => {
    const err = await recordEvents([auction(over)]).catch((e) => e);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(message);
  });

  test('bids on another kind, or a revenue share beyond 100 %, are refused', async () => {
    const onImpression = await recordEvents([servingEvent({ account, kind: EventKind.IMPRESSION, bids: [bid(E1, BidOutcome.NO_BID)] })]).catch((e) => e);
    expect(onImpression.details).toMatch(/bids are only for AUCTION events/);
    const share = await recordEvents([servingEvent({ account, kind: EventKind.IMPRESSION, demandEndpoint: E1, revenueShare: '101' })]).catch((e) => e);
    expect(share.details).toMatch(/revenue_share must be a decimal percent from 0 to 100/);
    expect(await recordEvents([auction({})])).toEqual({ stored: 1 });
  });
});

(process.env.REDIS_URL ? describe : describe.skip)('AUCTION events on the serving-event stream', () => {
  test('a batch entry (field b, as serving writes) holding auctions and a demand win is counted once, redelivered or not', async () => {
    const mine = await newAccount();
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      const d = `${run}-stream`;
      const at = { account: mine.id, publisher: 1, zone: 1, advertiser: 0, campaign: 0, adItem: 0, placement: 0, decision: d };
      const batch = RecordEventsRequest.encode({
        events: [
          servingEvent({ ...at, id: `${d}:auction`, kind: EventKind.AUCTION, bids: [bid(E1, BidOutcome.BID, '1.20', true), bid(E3, BidOutcome.NO_BID)] }),
          servingEvent({ ...at, id: `${d}:impression`, kind: EventKind.IMPRESSION, demandEndpoint: E1, demandSource: S1, revenueShare: '80', pricingModel: 'cpm', price: '1.00', currency: 'USD' }),
        ],
      }).finish();
      const key = `${process.env.REDIS_KEY_PREFIX}serving-events`;
      const entries = [String(await redis.xadd(key, '*', 'b', Buffer.from(batch))), String(await redis.xadd(key, '*', 'b', Buffer.from(batch)))];
      const report = () => get({ type: 'endpoint', period: 'day', preset: 'today' }, mine.live);
      const res = await waitFor('the stream entry stored', async () => {
        const r = await report();
        return r.body.data?.length === 2 && r.body.data[0].summary.views === 1 ? r : undefined;
      });
      expect(res.body.data.map((e: any) => [e.id, e.summary.requests, e.summary.bids, e.summary.emptyResponses, e.summary.wins, e.summary.views])).toEqual([[E1, 1, 1, 0, 1, 1], [E3, 1, 0, 1, 0, 0]]);
      expect(res.body.data[0].summary).toMatchObject({ revenue: 0.001, publisherRevenue: 0.0008, totalCPM: 1.2, winRate: 1 });
      // Once both copies are read and acknowledged, still once.
      const streamId = (id: string) => id.split('-').map(BigInt) as [bigint, bigint];
      const after = (a: string, b: string) => { const [x, y] = [streamId(a), streamId(b)]; return x[0] > y[0] || (x[0] === y[0] && x[1] >= y[1]); };
      await waitFor('both entries acknowledged', async () => {
        const groups = (await redis.xinfo('GROUPS', key)) as unknown[][];
        const group = groups.map((g) => Object.fromEntries(Array.from({ length: g.length / 2 }, (_, i) => [String(g[2 * i]), g[2 * i + 1]]))).find((g) => g.name === 'reporting');
        if (!group || !after(String(group['last-delivered-id']), entries[1])) return false;
        const pending = (await redis.xpending(key, 'reporting', entries[0], entries[1], 100)) as [string, ...unknown[]][];
        return !pending.some(([id]) => entries.includes(id));
      });
      expect((await report()).body).toEqual(res.body);
    } finally {
      redis.disconnect();
    }
  });
});
