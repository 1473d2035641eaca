/**
 * VAST reports over real video events (issue 23): events go in through EventIngest.RecordEvents like
 * serving's, VAST and display decisions side by side, and come out of the gateway's /v2/vast-reports,
 * /v2/vast/reports, the VAST geo summary and VAST custom reports, never in the display ones.
 */
import crypto from 'node:crypto';
import { status } from '@grpc/grpc-js';
import type { ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { admin } from '../../../gateway/test/support/platform';
import { reports } from '../../shared/grpc/clients';
import { VIDEO_EVENTS } from '../../shared/video-events';
import { EventKind, recordEvents, servingEvent, waitFor } from './events-fixtures';

const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

const VAST_DECISIONS = 40;
const VAST_CLICKS = 7;
/** Video event i (in VIDEO_EVENTS order) fires in the first i + 1 decisions: every count differs, so a swapped column shows. */
const expectedCount = (event: string) => VIDEO_EVENTS.indexOf(event as (typeof VIDEO_EVENTS)[number]) + 1;

const run = crypto.randomUUID().slice(0, 8);
const now = new Date();
const today = `${now.toISOString().slice(0, 10)}T00:00:00+00:00`;

// Placement 51 (zone 15, ad item 25) answers VAST at CPM 10 USD; placement 52 (zone 16, ad item 26) VAST
// at CPM 2 EUR; placement 31 shares zone 15 but serves display ads.
const vastA = { publisher: 6, zone: 15, advertiser: 9, campaign: 45, adItem: 25, placement: 51, pricingModel: 'cpm', price: '10.00', currency: 'USD', country: 'CA', vast: true };
const vastB = { publisher: 6, zone: 16, advertiser: 9, campaign: 46, adItem: 26, placement: 52, pricingModel: 'cpm', price: '2.00', currency: 'EUR', country: 'SG', vast: true };
const display = { publisher: 6, zone: 15, advertiser: 9, campaign: 45, adItem: 27, placement: 31, pricingModel: 'cpm', price: '1.00', currency: 'USD', country: 'CA' };

function vastEvents(account: number): ServingEvent[] {
  const out: ServingEvent[] = [];
  const base = { account, occurredAt: now.toISOString() };
  for (let i = 0; i < VAST_DECISIONS; i++) {
    const d = `${run}-v${i}`;
    const ev = (kind: EventKind, name: string, over: Partial<ServingEvent> = {}) => servingEvent({ ...base, ...vastA, decision: d, id: `${d}:${name}`, kind, ...over });
    out.push(ev(EventKind.RESPONSE, 'response'), ev(EventKind.IMPRESSION, 'impression'));
    if (i < VAST_CLICKS) out.push(ev(EventKind.CLICK, 'click'));
    if (i === 0) out.push(ev(EventKind.CONVERSION, 'conversion'));
    VIDEO_EVENTS.forEach((name, k) => {
      if (i <= k) out.push(ev(EventKind.VIDEO, `video:${name}`, { videoEvent: name }));
    });
  }
  for (let i = 0; i < 3; i++) {
    const d = `${run}-w${i}`;
    const ev = (kind: EventKind, name: string, over: Partial<ServingEvent> = {}) => servingEvent({ ...base, ...vastB, decision: d, id: `${d}:${name}`, kind, ...over });
    out.push(ev(EventKind.RESPONSE, 'response'), ev(EventKind.IMPRESSION, 'impression'), ev(EventKind.VIDEO, 'video:complete', { videoEvent: 'complete' }));
  }
  return out;
}

function displayEvents(account: number): ServingEvent[] {
  const out: ServingEvent[] = [];
  for (let i = 0; i < 5; i++) {
    const d = `${run}-d${i}`;
    for (const [kind, name] of [[EventKind.RESPONSE, 'response'], [EventKind.IMPRESSION, 'impression'], [EventKind.CLICK, 'click']] as const) {
      out.push(servingEvent({ account, occurredAt: now.toISOString(), ...display, decision: d, id: `${d}:${name}`, kind }));
    }
  }
  return out;
}

/** The VAST dataset columns and the video event each one counts. */
const DATASET_EVENTS: Record<string, string> = {
  start: 'start', first_quartile: 'firstQuartile', midpoint: 'midpoint', third_quartile: 'thirdQuartile', complete: 'complete',
  mute: 'mute', unmute: 'unmute', pause: 'pause', rewind: 'rewind', resume: 'resume', fullscreen: 'fullscreen', exit_fullscreen: 'exitFullscreen',
  expand: 'expand', collapse: 'collapse', accept_invitation_linear: 'acceptInvitationLinear', close_linear: 'closeLinear', skip: 'skip',
  linear_creative_view: 'creativeView',
  ...Object.fromEntries([1, 2, 3, 4, 5].flatMap((n) => [[`companion_views_${n}`, `companionView${n}`], [`companion_clicks_${n}`, `companionClick${n}`]])),
};

describe('VAST reports count the VAST events, exactly once', () => {
  let acct: TestAccount;
  let vast: ServingEvent[];
  beforeAll(async () => {
    acct = await newAccount();
    await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
    vast = vastEvents(acct.id);
    const shown = displayEvents(acct.id);
    expect(await recordEvents([...vast, ...shown])).toEqual({ stored: vast.length + shown.length });
    // Redelivered, whole or in part, in another order: nothing more is stored or counted.
    expect(await recordEvents([...vast].reverse())).toEqual({ stored: 0 });
    expect(await recordEvents([vast[5], vast[5], shown[0]])).toEqual({ stored: 0 });
  });

  test('/v2/vast-reports: every column of the reference dataset, per zone, from the VAST events only', async () => {
    const res = await acct.live.get(`/v2/vast-reports?${q({ type: 'zone', period: 'day', preset: 'today', details: true })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/vast-reports', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'vast-report', url: '/v2/vast-reports', meta: { type: 'zone', period: 'day', timezone: 'UTC', from: today } });
    expect(res.body.data.map((d: any) => d.id)).toEqual([15, 16]);
    const [z15, z16] = res.body.data;
    const video = Object.fromEntries(Object.entries(DATASET_EVENTS).map(([col, event]) => [col, expectedCount(event)]));
    // 40 impressions at CPM 10: 0.40 USD.
    const usd = (amount: number) => [{ cur: 'USD', amount }];
    expect(z15.summary).toEqual({
      requests: VAST_DECISIONS, impressions: VAST_DECISIONS, clicks: VAST_CLICKS, conversions: 1, ...video, non_linear_creative_view: expectedCount('nonLinearCreativeView'),
      completion_rate: Math.round((expectedCount('complete') / VAST_DECISIONS) * 10_000) / 10_000,
      financials: { cost: usd(0.4), payout: usd(0), revenue: usd(0.4), e_cpm: usd(10), e_cpc: usd(0.057143), e_cpa: usd(0.4) },
    });
    expect(z15.details).toEqual([{ start_date: today, ...z15.summary }]);
    expect(z16.summary).toMatchObject({ requests: 3, impressions: 3, clicks: 0, complete: 3, start: 0, completion_rate: 1, financials: { cost: [{ cur: 'EUR', amount: 0.006 }] } });
    // The overview adds both zones up; without financials none are shown.
    const overview = await acct.live.get(`/v2/vast-reports?${q({ type: 'overview', period: 'day', preset: 'today', financials: false })}`);
    expectReferenceShape('/v2/vast-reports', 'get', overview.body);
    expect(overview.body.data).toEqual([{ type: 'overview', id: acct.id, summary: expect.objectContaining({ requests: 43, impressions: 43, complete: expectedCount('complete') + 3, completion_rate: 0.2093 }) }]);
    expect(overview.body.data[0].summary.financials).toBeUndefined();
  });

  test('details and breakdown, on the quarter-hour rollups too (a +05:30 zone)', async () => {
    const res = await acct.live.get(`/v2/vast-reports?${q({ type: 'ad-item', period: 'day', preset: 'today', timezone: 'Asia/Kolkata', details: true, breakdown: true, 'ad-items': 25 })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/vast-reports', 'get', res.body);
    const [item] = res.body.data;
    expect(res.body.data).toHaveLength(1);
    expect(item.summary).toMatchObject({ requests: 40, start: expectedCount('start'), companion_clicks_5: expectedCount('companionClick5') });
    expect(item.summary.breakdown).toEqual([expect.objectContaining({ placement: 51, ad_item: { type: 'ad_item', id: 25 }, requests: 40, midpoint: expectedCount('midpoint') })]);
    expect(item.details.reduce((s: number, d: any) => s + d.skip, 0)).toBe(expectedCount('skip'));
  });

  test('display reports leave the VAST events out', async () => {
    const res = await acct.live.get(`/v2/reports?${q({ type: 'zone', period: 'day', preset: 'today' })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports', 'get', res.body);
    expect(res.body.data).toEqual([expect.objectContaining({ id: 15, summary: expect.objectContaining({ responses: 5, impressions: 5, clicks: 5, conversions: 0, financials: expect.objectContaining({ cost: [{ cur: 'USD', amount: 0.005 }] }) }) })]);
    expect(res.body.data[0].summary.start).toBeUndefined();
    const clicks = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 100 })}`);
    expect(clicks.body.data).toHaveLength(5);
    const vastClicks = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 100, vast: true })}`);
    expect(vastClicks.body.data).toHaveLength(VAST_CLICKS);
  });

  test('/v2/vast/reports: the VAST 4 datasets, per day and placement', async () => {
    const res = await acct.live.get(`/v2/vast/reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/vast/reports', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'vast-report', url: '/v2/vast/reports', meta: { type: 'overview', period: 'day', from: today } });
    expect(res.body.data.map((d: any) => [d.date, d.placement_id])).toEqual([[today, 51], [today, 52]]);
    const [a, b] = res.body.data;
    const n = expectedCount;
    const companionViews = [1, 2, 3, 4, 5].reduce((s, i) => s + n(`companionView${i}`), 0);
    const companionClicks = [1, 2, 3, 4, 5].reduce((s, i) => s + n(`companionClick${i}`), 0);
    expect(a).toMatchObject({
      requests: 40, impressions: 40, conversions: 1, clicks: VAST_CLICKS + companionClicks,
      ctr: Math.round((10_000 * (VAST_CLICKS + companionClicks)) / 40) / 100,
      linear: {
        loaded: 0, start: n('start'), first_quartile: n('firstQuartile'), midpoint: n('midpoint'), third_quartile: n('thirdQuartile'), complete: n('complete'),
        // Non-linear clicks are among the clicks; these synthetic counts have more of them than clicks.
        progress: n('progress'), clicks: Math.max(0, VAST_CLICKS - n('nonLinearClick')), conversions: 1, mute: n('mute'), unmute: n('unmute'), pause: n('pause'), resume: n('resume'), skip: n('skip'),
        player_expand: n('expand') + n('fullscreen'), player_collapse: n('collapse') + n('exitFullscreen'), close_linear: n('closeLinear'),
      },
      non_linear: { close: n('close'), creative_view: n('nonLinearCreativeView'), clicks: n('nonLinearClick') },
      companion: { creative_view: companionViews, clicks: companionClicks, conversions: 0 },
      cost: 0.4, revenue: 0.4, payout: 0, e_cpm: 10, cpm: 10, e_cpa: 0.4, currency: 'USD', completion_rate: 0.15,
    });
    expect(b).toMatchObject({ requests: 3, impressions: 3, clicks: 0, ctr: 0, linear: { complete: 3 }, cost: 0.006, currency: 'EUR', completion_rate: 1 });
    // Filtered to one zone, only its placement is left.
    const one = await acct.live.get(`/v2/vast/reports?${q({ type: 'zone', period: 'day', preset: 'today', zones: 16 })}`);
    expect(one.body.data.map((d: any) => d.placement_id)).toEqual([52]);
  });

  test('the VAST geo summary counts VAST events by country; the display one the rest', async () => {
    const vastGeo = await acct.live.get(`/v2/vast-reports/geo-summary-report?${q({ type: 'zone', preset: 'today' })}`);
    expect(vastGeo.status).toBe(200);
    expectReferenceShape('/v2/vast-reports/geo-summary-report', 'get', vastGeo.body);
    expect(vastGeo.body.data).toEqual([
      { type: 'zone', id: 15, details: { CA: { impressions: 40, clicks: VAST_CLICKS, conversions: 1 } } },
      { type: 'zone', id: 16, details: { SG: { impressions: 3, clicks: 0, conversions: 0 } } },
    ]);
    const displayGeo = await acct.live.get(`/v2/reports/geo-summary-report?${q({ type: 'zone', preset: 'today' })}`);
    expect(displayGeo.body.data).toEqual([{ type: 'zone', id: 15, details: { CA: { impressions: 5, clicks: 5, conversions: 0 } } }]);
  });

  test('a VAST custom report runs over the VAST events and answers the VAST dataset', async () => {
    const { body: c } = await acct.live.post('/v2/vast-custom-reports', { name: 'VAST zones', type: 'zone', period: 'day', date: { preset: 'today', timezone: 'UTC' } });
    expect(c.id).toBeGreaterThan(0);
    const queued = await acct.live.post(`/v2/vast-custom-reports/${c.id}/generate`);
    expect(queued.status).toBe(200);
    const done = await waitFor('the VAST report to finish', async () => {
      const res = await acct.live.get(queued.body.self);
      return ['success', 'error'].includes(res.body.status) ? res.body : undefined;
    });
    expect(done.status).toBe('success');
    expect(done.report.object).toBe('vast-report');
    expectReferenceShape('/v2/vast-reports', 'get', done.report);
    expect(done.report.data.map((d: any) => [d.id, d.summary.requests, d.summary.complete])).toEqual([[15, 40, expectedCount('complete')], [16, 3, 3]]);
  });

  test('delivery totals count VAST and display impressions alike', async () => {
    const totals = await reports.getDelivery({ account: acct.id, scopes: [{ key: 'vast', placements: [51, 52], since: '' }, { key: 'display', placements: [31], since: '' }] });
    expect(totals.counts).toEqual([{ key: 'vast', impressions: 43, clicks: VAST_CLICKS }, { key: 'display', impressions: 5, clicks: 5 }]);
  });

  test('rebuilding the rollups from the raw events gives the same VAST report', async () => {
    const path = `/v2/vast-reports?${q({ type: 'zone', period: 'day', preset: 'today', details: true })}`;
    const before = await acct.live.get(path);
    const rebuilt = await reports.rebuildRollups({ from: new Date(now.getTime() - 3_600_000).toISOString(), to: new Date(now.getTime() + 3_600_000).toISOString() });
    expect(rebuilt.events).toBeGreaterThanOrEqual(vast.length);
    expect((await acct.live.get(path)).body).toEqual(before.body);
  });

  test('documented errors: a type VAST reports do not know is a 400 naming type', async () => {
    for (const path of ['/v2/vast-reports', '/v2/vast/reports', '/v2/vast-reports/geo-summary-report']) {
      const period: Record<string, string> = path.endsWith('geo-summary-report') ? {} : { period: 'day' };
      const body = expectError(await acct.live.get(`${path}?${q({ type: 'geo-target', ...period, preset: 'today' })}`), 400, 'v2');
      expect(paramFor(body, 'type').type).toBe('invalid_value');
    }
    paramFor(expectError(await acct.live.get(`/v2/vast-reports?${q({ type: 'zone', preset: 'today' })}`), 400, 'v2'), 'period');
  });
});

describe('EventIngest.RecordEvents with VIDEO events', () => {
  const account = 900_000_000 + Math.floor(Math.random() * 1_000_000);
  const video = (over: Partial<ServingEvent>) => servingEvent({ account, id: `${crypto.randomUUID()}:video:start`, kind: EventKind.VIDEO, vast: true, videoEvent: 'start', ...over });

  test.each([
    ['without video_event', { videoEvent: '' }, /events\[0\]: video_event is required for a VIDEO event/],
    ['with an unknown video_event', { videoEvent: 'halfway' }, /events\[0\]: video_event 'halfway' is not a VAST tracking event/],
    ['of a display decision', { vast: false }, /events\[0\]: a VIDEO event belongs to a VAST decision/],
  ])('a VIDEO event %s is refused, naming the event', async (_what, over, message) => {
    const err = await recordEvents([video(over)]).catch((e) => e);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(message);
  });

  test('video_event on another kind is refused; every named event is accepted once', async () => {
    const err = await recordEvents([servingEvent({ account, kind: EventKind.IMPRESSION, videoEvent: 'start' })]).catch((e) => e);
    expect(err.code).toBe(status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/video_event is only for VIDEO events/);
    const all = VIDEO_EVENTS.map((name) => video({ id: `${run}-all:video:${name}`, videoEvent: name }));
    expect(await recordEvents(all)).toEqual({ stored: VIDEO_EVENTS.length });
    expect(await recordEvents(all)).toEqual({ stored: 0 });
  });
});
