import Redis from 'ioredis';
import { ServingEvent } from '../../../proto/gen/adserver/reporting/v1/events';
import { expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { admin } from '../../../gateway/test/support/platform';
import { reports } from '../../shared/grpc/clients';
import { EventKind, recordEvents, servingEvent, waitFor } from './events-fixtures';

/** An account whose reporting budget fits a whole test file's requests. */
async function reportingAccount(): Promise<TestAccount> {
  const acct = await newAccount();
  await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
  return acct;
}

const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** One decision's events: response, impression, click (and a conversion when asked). */
function decision(account: number, at: Date, over: Partial<ServingEvent> = {}, conversion = false): ServingEvent[] {
  const id = `${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  const base = { account, occurredAt: at.toISOString(), decision: id, ...over };
  const kinds: [EventKind, string][] = [[EventKind.RESPONSE, 'response'], [EventKind.IMPRESSION, 'impression'], [EventKind.CLICK, 'click']];
  if (conversion) kinds.push([EventKind.CONVERSION, 'conversion']);
  return kinds.map(([kind, name]) => servingEvent({ ...base, id: `${id}:${name}`, kind }));
}

describe('GET /v2/reports', () => {
  let acct: TestAccount;
  const now = new Date();
  beforeAll(async () => {
    acct = await reportingAccount();
    const a = acct.id;
    // Zone 11 / ad item 21 through placement 31 (campaign 41), priced CPM 2.50 USD: three decisions, one converting.
    const cpm = { publisher: 5, zone: 11, advertiser: 7, campaign: 41, adItem: 21, placement: 31, pricingModel: 'cpm', price: '2.50', currency: 'USD' };
    // Zone 12 / ad item 22 directly in the zone (no campaign), CPC 0.40 USD: two decisions.
    const cpc = { publisher: 5, zone: 12, advertiser: 8, campaign: 0, adItem: 22, placement: 32, pricingModel: 'cpc', price: '0.40', currency: 'USD', channel: 3 };
    await recordEvents([
      ...decision(a, now, cpm, true), ...decision(a, now, cpm), ...decision(a, now, cpm),
      ...decision(a, now, cpc), ...decision(a, now, cpc),
      // A flat-priced decision: counted, but flat pricing costs nothing per event.
      ...decision(a, now, { ...cpm, adItem: 23, placement: 33, pricingModel: 'flat', price: '100.00' }),
    ]);
  });

  test('an ad-item report for today counts each ad item exactly, with financials from the placement pricing', async () => {
    const res = await acct.live.get(`/v2/reports?${q({ type: 'ad-item', period: 'day', preset: 'today' })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'report', url: '/v2/reports', meta: { type: 'ad-item', period: 'day', timezone: 'UTC' } });
    expect(res.body.meta.from).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\+00:00$/);
    const byId = Object.fromEntries(res.body.data.map((d: any) => [d.id, d]));
    expect(Object.keys(byId).sort()).toEqual(['21', '22', '23']);
    // 3 impressions at 2.50 CPM: 0.0075; eCPM back to 2.5, eCPC 0.0075 / 3 clicks, eCPA 0.0075 / 1 conversion.
    expect(byId[21]).toEqual({
      type: 'ad-item', id: 21,
      summary: {
        responses: 3, impressions: 3, clicks: 3, conversions: 1,
        financials: { cost: [{ cur: 'USD', amount: 0.0075 }], payout: [{ cur: 'USD', amount: 0 }], revenue: [{ cur: 'USD', amount: 0.0075 }], e_cpm: [{ cur: 'USD', amount: 2.5 }], e_cpc: [{ cur: 'USD', amount: 0.0025 }], e_cpa: [{ cur: 'USD', amount: 0.0075 }] },
      },
    });
    expect(byId[22].summary).toMatchObject({ responses: 2, impressions: 2, clicks: 2, conversions: 0, financials: { cost: [{ cur: 'USD', amount: 0.8 }], e_cpa: [{ cur: 'USD', amount: 0 }] } });
    expect(byId[23].summary).toMatchObject({ responses: 1, impressions: 1, clicks: 1, financials: { cost: [{ cur: 'USD', amount: 0 }] } });
  });

  test('overview with details and breakdown: one row per day, placement and ad item pairs', async () => {
    const res = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'day', preset: 'last-7-days', details: true, breakdown: true, financials: false })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports', 'get', res.body);
    expect(res.body.data).toHaveLength(1);
    const overview = res.body.data[0];
    expect(overview).toMatchObject({ type: 'overview', id: acct.id, summary: { responses: 6, impressions: 6, clicks: 6, conversions: 1 } });
    expect(overview.summary.financials).toBeUndefined();
    expect(overview.details).toHaveLength(7);
    expect(overview.details.map((d: any) => d.responses)).toEqual([0, 0, 0, 0, 0, 0, 6]);
    expect(overview.details[6].start_date).toBe(`${now.toISOString().slice(0, 10)}T00:00:00+00:00`);
    const pairs = overview.summary.breakdown.map((b: any) => [b.placement, b.ad_item.id, b.campaign?.id ?? null, b.zone.id, b.responses]);
    expect(pairs).toEqual([[31, 21, 41, 11, 3], [32, 22, null, 12, 2], [33, 23, 41, 11, 1]]);
    expect(overview.details[6].breakdown).toHaveLength(3);
    expect(overview.details[0].breakdown).toEqual([]);
  });

  test('filters and the exclude/require flags narrow the rows', async () => {
    const get = async (params: Record<string, string | boolean>) => {
      const res = await acct.live.get(`/v2/reports?${q({ type: 'zone', period: 'day', preset: 'today', financials: false, ...params })}`);
      expect(res.status).toBe(200);
      return Object.fromEntries(res.body.data.map((d: any) => [d.id, d.summary?.responses]));
    };
    expect(await get({})).toEqual({ 11: 4, 12: 2 });
    expect(await get({ zones: '12' })).toEqual({ 12: 2 });
    expect(await get({ 'ad-items': '21,23' })).toEqual({ 11: 4 });
    expect(await get({ advertisers: '8', publishers: '5' })).toEqual({ 12: 2 });
    expect(await get({ campaigns: '41' })).toEqual({ 11: 4 });
    expect(await get({ exclude_publisher_ad_items: true })).toEqual({ 11: 4 });
    expect(await get({ exclude_campaign_ad_items: true })).toEqual({ 12: 2 });
    expect(await get({ exclude_channel_stats: true })).toEqual({ 11: 4 });
    expect(await get({ require_channel_stats: true })).toEqual({ 12: 2 });
    expect(await get({ summary: false })).toEqual({ 11: undefined, 12: undefined });
    // Text ads and popups are never recorded: filtering by them leaves nothing.
    expect(await get({ textads: '5' })).toEqual({});
    expect(await get({ popups: '5', zones: '11' })).toEqual({});
  });

  test('types this platform cannot produce yet answer an empty data list', async () => {
    // (type=channel is produced since placements serve on channels; see the serving targeting test.)
    for (const type of ['geo-target']) {
      const res = await acct.live.get(`/v2/reports?${q({ type, period: 'month', preset: 'this-month' })}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'report', data: [], meta: { type, period: 'month' } });
    }
  });

  test('a test key answers the report shape with zero counts (test mode records nothing)', async () => {
    const res = await acct.test.get(`/v2/reports?${q({ type: 'overview', period: 'day', preset: 'today', details: true })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports', 'get', res.body);
    expect(res.body.data).toEqual([
      {
        type: 'overview', id: acct.id,
        summary: { responses: 0, impressions: 0, clicks: 0, conversions: 0, financials: { cost: [], payout: [], revenue: [], e_cpm: [], e_cpc: [], e_cpa: [] } },
        details: [expect.objectContaining({ start_date: expect.stringMatching(/T00:00:00\+00:00$/), responses: 0, impressions: 0, clicks: 0, conversions: 0 })],
      },
    ]);
    const items = await acct.test.get(`/v2/reports?${q({ type: 'ad-item', period: 'day', preset: 'today' })}`);
    expect(items.body.data).toEqual([]);
  });

  test('bad input is a 400 naming the parameter, for every documented error', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ type: 'banner', period: 'day', preset: 'today' }, 'type'],
      [{ period: 'day', preset: 'today' }, 'type'],
      [{ type: 'zone', period: 'hour', preset: 'today' }, 'period'],
      [{ type: 'zone', preset: 'today' }, 'period'],
      [{ type: 'zone', period: 'day', preset: 'last-2-days' }, 'preset'],
      [{ type: 'zone', period: 'day', preset: 'today', timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      [{ type: 'zone', period: 'day', from: '2025-01-01T00:00:00+00:00', to: '2026-01-01T00:00:01+00:00' }, 'to'],
      [{ type: 'zone', period: 'day', from: '2026-01-01T00:00:00+00:00', to: '2026-02-01T00:00:00-05:00' }, 'to'],
      [{ type: 'zone', period: 'day' }, 'preset'],
      [{ type: 'zone', period: 'day', from: '2026-01-01T00:00:00+00:00' }, 'to'],
      [{ type: 'zone', period: 'day', from: 'yesterday', to: '2026-02-01T00:00:00+00:00' }, 'from'],
      [{ type: 'zone', period: 'day', from: '2026-02-01T00:00:00+00:00', to: '2026-01-01T00:00:00+00:00' }, 'to'],
      [{ type: 'zone', period: 'day', preset: 'today', from: '2026-01-01T00:00:00+00:00', to: '2026-02-01T00:00:00+00:00' }, 'preset'],
      [{ type: 'zone', period: 'day', preset: 'today', details: 'yes' }, 'details'],
      [{ type: 'zone', period: 'day', preset: 'today', zones: '1,x' }, 'zones'],
      [{ type: 'zone', period: 'day', preset: 'today', textads: 'one' }, 'textads'],
      [{ type: 'zone', period: 'day', preset: 'today', color: 'blue' }, 'color'],
    ];
    for (const [params, field] of cases) {
      const res = await acct.live.get(`/v2/reports?${q(params)}`);
      const body = expectError(res, 400, 'v2');
      expect({ params, field: paramFor(body, field).field }).toEqual({ params, field });
    }
    // A whole year is allowed; the same offsets but a second more is not (checked above).
    const year = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'year', from: '2025-03-01T00:00:00+00:00', to: '2026-03-01T00:00:00+00:00' })}`);
    expect(year.status).toBe(200);
    expect(year.body.data[0].summary.responses).toBe(0);
    expectError(await acct.live.post('/v2/reports', {}), 501, 'v2');
  });

  test('every report path spends the 60-per-minute reporting budget', async () => {
    const plain = await newAccount();
    for (const path of [
      `/v2/reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`,
      `/v2/vast-reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`,
      `/v2/vast/reports?${q({ type: 'overview', period: 'day', preset: 'today' })}`,
      `/v2/reports/click-details?${q({ preset: 'today' })}`,
      `/v2/reports/conversion-details?${q({ preset: 'today' })}`,
      `/v2/reports/geo-summary-report?${q({ type: 'overview', preset: 'today' })}`,
      `/v2/event-logs?${q({ log_type: 'display_clicks' })}`,
    ]) {
      const res = await plain.live.get(path);
      expect({ path, status: res.status, limit: res.headers['x-ratelimit-limit'] }).toEqual({ path, status: 200, limit: '60' });
    }
  });
});

describe('timezones and DST', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await reportingAccount();
    // One impression every 15 minutes over both 2026 DST changes of New York (and around them).
    const events: ServingEvent[] = [];
    for (const [start, end] of [['2026-03-07T05:00:00Z', '2026-03-10T05:00:00Z'], ['2026-10-31T04:00:00Z', '2026-11-03T05:00:00Z']]) {
      for (let t = Date.parse(start); t < Date.parse(end); t += 15 * 60_000) {
        events.push(servingEvent({ account: acct.id, id: `dst-${t}:impression`, kind: EventKind.IMPRESSION, occurredAt: new Date(t).toISOString(), zone: 1 }));
      }
    }
    await recordEvents(events);
  });

  test('a New York day spanning spring forward has 23 hours of data, one spanning fall back 25', async () => {
    const spring = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'day', timezone: 'America/New_York', details: true, financials: false, from: '2026-03-07T00:00:00-05:00', to: '2026-03-10T00:00:00-05:00' })}`);
    expect(spring.status).toBe(200);
    expect(spring.body.data[0].details.map((d: any) => [d.start_date, d.impressions])).toEqual([
      ['2026-03-07T00:00:00-05:00', 96],
      ['2026-03-08T00:00:00-05:00', 92],
      ['2026-03-09T00:00:00-04:00', 96],
      // 'to' is 01:00 local time on the 10th: the last row holds one hour.
      ['2026-03-10T00:00:00-04:00', 4],
    ]);
    expect(spring.body.meta).toMatchObject({ from: '2026-03-07T00:00:00-05:00', to: '2026-03-10T01:00:00-04:00', timezone: 'America/New_York' });

    const fall = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'day', timezone: 'America/New_York', details: true, financials: false, from: '2026-10-31T00:00:00-04:00', to: '2026-11-03T00:00:00-04:00' })}`);
    expect(fall.body.data[0].details.map((d: any) => [d.start_date, d.impressions])).toEqual([
      ['2026-10-31T00:00:00-04:00', 96],
      ['2026-11-01T00:00:00-04:00', 100],
      ['2026-11-02T00:00:00-05:00', 92],
    ]);
  });

  test('weeks start on Monday and months on the 1st in the requested zone; quarter-hour offsets split days where they fall', async () => {
    const week = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'week', timezone: 'America/New_York', details: true, financials: false, from: '2026-03-01T00:00:00-05:00', to: '2026-03-15T00:00:00-05:00' })}`);
    expect(week.body.data[0].details.map((d: any) => d.start_date)).toEqual(['2026-03-01T00:00:00-05:00', '2026-03-02T00:00:00-05:00', '2026-03-09T00:00:00-04:00']);
    expect(week.body.data[0].details.map((d: any) => d.impressions)).toEqual([0, 188, 100]);
    // Kathmandu is UTC+05:45: its 8 March starts at 18:15 UTC on the 7th.
    const ktm = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'day', timezone: 'Asia/Kathmandu', details: true, financials: false, from: '2026-03-08T00:00:00+05:45', to: '2026-03-09T00:00:00+05:45' })}`);
    expect(ktm.body.data[0].details).toEqual([expect.objectContaining({ start_date: '2026-03-08T00:00:00+05:45', impressions: 96 })]);
    const month = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'month', timezone: 'America/New_York', details: true, financials: false, from: '2026-10-15T00:00:00-04:00', to: '2026-11-15T00:00:00-04:00' })}`);
    expect(month.body.data[0].details.map((d: any) => [d.start_date, d.impressions])).toEqual([['2026-10-15T00:00:00-04:00', 96], ['2026-11-01T00:00:00-04:00', 196]]);
  });
});

describe('GET /v2/vast-reports and /v2/vast/reports', () => {
  test('answer the reference shapes with nothing recorded (vast-reports.test.ts counts events) and refuse bad input naming the parameter', async () => {
    const acct = await reportingAccount();
    for (const path of ['/v2/vast-reports', '/v2/vast/reports']) {
      const res = await acct.live.get(`${path}?${q({ type: 'overview', period: 'day', preset: 'yesterday', details: true })}`);
      expect(res.status).toBe(200);
      if (path === '/v2/vast-reports') {
        expect(res.body).toMatchObject({ object: 'vast-report', url: path, data: [{ type: 'overview', id: acct.id, summary: { requests: 0, impressions: 0, complete: 0, completion_rate: 0 } }] });
        expect(res.body.data[0].details).toHaveLength(1);
      } else {
        // The VAST 4 report lists only periods and placements with events.
        expect(res.body).toMatchObject({ object: 'vast-report', url: path, data: [], meta: { type: 'overview', period: 'day' } });
      }
      expectReferenceShape(path === '/v2/vast-reports' ? '/v2/vast-reports' : '/v2/vast/reports', 'get', res.body);
      // VAST reports know no channel or geo-target type.
      expect(paramFor(expectError(await acct.live.get(`${path}?${q({ type: 'channel', period: 'day', preset: 'today' })}`), 400, 'v2'), 'type').type).toBe('invalid_value');
      paramFor(expectError(await acct.live.get(`${path}?${q({ type: 'zone', period: 'day', preset: 'today', exclude_channel_stats: true })}`), 400, 'v2'), 'exclude_channel_stats');
    }
  });
});

describe('freshness', () => {
  test('an event appears in /v2/reports within 5 s of being recorded (through the stream when Redis is there)', async () => {
    const acct = await reportingAccount();
    const started = Date.now();
    const events = decision(acct.id, new Date(), { zone: 3, adItem: 4 });
    if (process.env.REDIS_URL) {
      const redis = new Redis(process.env.REDIS_URL);
      for (const e of events) await redis.xadd(`${process.env.REDIS_KEY_PREFIX}serving-events`, '*', 'e', Buffer.from(ServingEvent.encode(e).finish()));
      redis.disconnect();
    } else {
      await recordEvents(events);
    }
    await waitFor('the report to count the decision', async () => {
      const res = await acct.live.get(`/v2/reports?${q({ type: 'overview', period: 'day', preset: 'last-24-hours', financials: false })}`);
      return res.body.data[0].summary.clicks === 1;
    }, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('rebuild', () => {
  test('rebuilding the rollups of a range from the raw events gives exactly the incremental result', async () => {
    const acct = await reportingAccount();
    const base = Date.now() - 3 * 3600_000;
    const events: ServingEvent[] = [];
    for (let i = 0; i < 60; i++) {
      events.push(...decision(acct.id, new Date(base + i * 97_000), { zone: 1 + (i % 3), adItem: 10 + (i % 4), placement: 20 + (i % 4), pricingModel: i % 2 ? 'cpm' : 'cpc', price: '1.25', currency: i % 5 ? 'USD' : 'EUR' }, i % 7 === 0));
    }
    // Incrementally, in overlapping batches (duplicates must not count).
    for (let i = 0; i < events.length; i += 40) await recordEvents(events.slice(Math.max(0, i - 10), i + 40));
    // A fixed range (not a preset that moves with the clock), so both reads ask the same question.
    const iso = (t: number) => new Date(t).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    const from = Math.floor((base - 3600_000) / 3600_000) * 3600_000;
    const path = `/v2/reports?${q({ type: 'ad-item', period: 'day', from: iso(from), to: iso(from + 86_400_000), details: true, breakdown: true })}`;
    // India's +05:30 days read the quarter-hour rollups; UTC days the hourly ones: both are rebuilt.
    const kolkata = `/v2/reports?${q({ type: 'zone', period: 'day', timezone: 'Asia/Kolkata', from: iso(from), to: iso(from + 86_400_000), details: true })}`;
    const before = await acct.live.get(path);
    const beforeKolkata = await acct.live.get(kolkata);
    expect(beforeKolkata.body.data.reduce((s: number, d: any) => s + d.summary.responses, 0)).toBe(60);
    expect(before.body.data.reduce((s: number, d: any) => s + d.summary.responses, 0)).toBe(60);
    // The operator command, through reporting's typed RebuildRollups call.
    const { stdout } = await admin('rebuild-rollups', '--from', new Date(base - 3600_000).toISOString(), '--to', new Date(Date.now() + 60_000).toISOString());
    const out = JSON.parse(stdout).rebuilt;
    expect(out.events).toBeGreaterThanOrEqual(events.length);
    expect(out.rollup_rows).toBeGreaterThan(0);
    const after = await acct.live.get(path);
    expect(after.body).toEqual(before.body);
    expect((await acct.live.get(kolkata)).body).toEqual(beforeKolkata.body);
    // A range older than the raw-event retention is refused: its raw events are gone.
    const old = (await reports.rebuildRollups({ from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' }).catch((e: { details?: string }) => e)) as { details?: string };
    expect(String(old.details)).toMatch(/retention/);
  });

  test('load-events loads synthetic events that the reports count', async () => {
    const acct = await reportingAccount();
    const { stdout } = await admin('load-events', '--account', String(acct.id), '--events', '2000', '--days', '1', '--zones', '4', '--ad-items', '2');
    expect(JSON.parse(stdout).loaded).toMatchObject({ account: acct.id, events: 2000, stored: 2000 });
    const res = await acct.live.get(`/v2/reports?${q({ type: 'zone', period: 'day', preset: 'last-7-days', financials: false })}`);
    const total = res.body.data.reduce((s: number, d: any) => s + d.summary.responses + d.summary.impressions + d.summary.clicks + d.summary.conversions, 0);
    expect(total).toBe(2000);
    expect(res.body.data.map((d: any) => d.id)).toEqual([1, 2, 3, 4]);
  });
});
