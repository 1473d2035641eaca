/**
 * Forecasts and platform estimates through the gateway: a zone's history recorded through reporting's
 * real ingest (four weeks with a weekday/weekend pattern), a competing sponsorship placement with a
 * day cap made through the API, and the forecast of a proposed standard placement for next week. The
 * model's pieces are checked on their own first, with the backtest's error printed.
 */
import crypto from 'node:crypto';
import { newAccount, expectError, type TestAccount } from '../../../gateway/test/support/api';
import { EventKind, recordEvents, servingEvent } from '../../reporting/test/events-fixtures';
import { backtest, projectDay, weeklyProfile } from '../forecasts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const weekend = (t: number) => [0, 6].includes(new Date(t).getUTCDay());
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describe('the forecast model', () => {
  const today = Date.parse('2026-11-23T00:00:00Z'); // a Monday
  const hours: { at: number; n: number }[] = [];
  for (let t = today - 28 * DAY; t < today; t += HOUR) hours.push({ at: t, n: weekend(t) ? 1 : 3 });

  it('profiles each hour of the week and projects a day from it', () => {
    const profile = weeklyProfile(hours, today - 28 * DAY, today);
    expect(projectDay(profile, today)).toBe(72);
    expect(projectDay(profile, today + 5 * DAY)).toBe(24); // Saturday
  });

  it('backtests last week from the three before: a steady pattern forecasts with no error, a shifted one with its error', () => {
    expect(backtest(hours, today)).toEqual({ mape: 0, days: 7 });
    // Last week's traffic doubled: every day's forecast is half of what came.
    const doubled = hours.map((h) => (h.at >= today - 7 * DAY ? { ...h, n: h.n * 2 } : h));
    const test = backtest(doubled, today);
    process.stdout.write(`forecast backtest on a doubled week: MAPE ${(test.mape * 100).toFixed(1)} % over ${test.days} days\n`);
    expect(test.mape).toBeCloseTo(0.5);
    expect(backtest(hours.filter((h) => h.at >= today - 3 * DAY), today)).toEqual({ mape: -1, days: 0 });
  });
});

describe('forecast endpoints', () => {
  let acct: TestAccount;
  let zone: number;
  let channel: number;
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  // Next Monday to Sunday (UTC).
  const monday = today + (((8 - new Date(today).getUTCDay()) % 7) || 7) * DAY;
  const date = (t: number) => new Date(t).toISOString().slice(0, 10);
  const query = (over: Record<string, string | number> = {}) =>
    new URLSearchParams(Object.entries({ zone_id: zone, priority: 'standard', delivery_pacing: 'default', start_date: date(monday), end_date: date(monday + 6 * DAY), ...over }).map(([k, v]): [string, string] => [k, String(v)])).toString();

  beforeAll(async () => {
    acct = await newAccount();
    zone = (await acct.live.post('/v2/zones/standard', { name: 'Forecast zone', width: 300, height: 250 })).body.id;
    channel = (await acct.live.post('/v2/channels', { name: 'Forecast channel' })).body.id;
    expect((await acct.live.post('/v2/channel-zone-assignments', { channel, zone: { id: zone, type: 'standard_zone' } })).status).toBe(200);
  });

  it('says when a zone has no history, rather than projecting zeros', async () => {
    const res = await acct.live.get(`/v2/reports/forecast/display?${query()}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'display_forecast', url: '/v2/reports/forecast/display', data: { confidence: 'low', impressions_projected: { total: null, daily_breakdown: [] } } });
    expect(res.body.data.confidence_reasons[0].reason).toMatch(/no history/);
  });

  it('projects next week from four weeks of history, less what a capped sponsorship placement takes, and states its basis', async () => {
    // Four weeks of responses up to this hour: 3 an hour on weekdays, 1 at weekends (UTC).
    const events = [];
    for (let t = today - 28 * DAY; t < Math.floor(now / HOUR) * HOUR; t += HOUR) {
      for (let i = 0; i < (weekend(t) ? 1 : 3); i++) {
        events.push(servingEvent({ id: `${crypto.randomUUID()}:response`, kind: EventKind.RESPONSE, account: acct.id, zone, occurredAt: new Date(t + i * 60_000).toISOString(), userAgent: weekend(t) ? IPHONE : DESKTOP }));
      }
    }
    for (let i = 0; i < events.length; i += 1000) await recordEvents(events.slice(i, i + 1000));

    // A sponsorship placement that takes at most 20 views a day from the zone.
    const item = await acct.live.post('/v2/ad-items/image', { name: 'Sponsor', width: 300, height: 250, creative_url: 'https://cdn.example/s.png' });
    const schedule = await acct.live.post('/v2/schedules', { start_date: '2026-01-01 00:00:00', day_cap_limit: 20, day_cap_type: 'views' });
    const placed = await acct.live.post('/v2/placements', { zone: { id: zone, type: 'standard_zone' }, advertisement: { id: item.body.id, type: 'image_ad_item' }, schedule: schedule.body.id, priority: 'sponsorship' });
    expect(placed.status).toBe(200);

    const res = await acct.live.get(`/v2/reports/forecast/display?${query()}`);
    expect(res.status).toBe(200);
    const data = res.body.data;
    const expected = (t: number) => (weekend(t) ? 24 : 72) - 20;
    expect(data.impressions_projected.daily_breakdown).toEqual([0, 1, 2, 3, 4, 5, 6].map((d) => ({ date: date(monday + d * DAY), impressions: expected(monday + d * DAY) })));
    expect(data.impressions_projected.total).toBe(5 * 52 + 2 * 4);
    expect(data.competing_ads.ad_items).toEqual([expect.objectContaining({ id: item.body.id, placement_id: placed.body.id, name: 'Sponsor', priority: 'sponsorship', quota_daily: 20, projected_impressions: 140, zone_id: zone })]);
    expect(data.history_days).toBeGreaterThanOrEqual(28);
    expect(data.backtest).toEqual({ mape: 0, days: 7 });
    expect(data.confidence).toBe('high');

    // A daily quota of its own caps the proposed placement; the same zone through its channel forecasts alike.
    const capped = await acct.live.get(`/v2/reports/forecast/display?${query({ quota_daily: 30 })}`);
    expect(capped.body.data.impressions_projected.total).toBe(5 * 30 + 2 * 4);
    const viaChannel = await acct.live.get(`/v2/reports/forecast/display/channel?${query({ zone_id: '', channel_id: channel }).replace('zone_id=&', '')}`);
    expect(viaChannel.status).toBe(200);
    expect(viaChannel.body).toMatchObject({ object: 'display_channel_forecast', data: { impressions_projected: { total: 268 } } });

    // The older form.
    const older = await acct.live.get(`/v2/reports/placement-forecast?${query()}`);
    expect(older.status).toBe(200);
    expect(older.body.data[0]).toMatchObject({ confidence: 'high', impressions_projected: 268, competing_placements: [{ campaigns: [], banners: [expect.objectContaining({ id: item.body.id, name: 'Sponsor' })] }] });
    expect(older.body.data[0].details).toHaveLength(7);

    // Platforms of the zone's responses: weekdays came from desktop Chrome, weekends from iPhones.
    const est = await acct.live.get(`/v2/reports/display-platform-estimate?zone_ids=${zone}`);
    expect(est.status).toBe(200);
    const shares = est.body.data[0][String(zone)][0];
    // The estimate reads the last 28 days to the minute: the oldest hours of the history fall outside.
    const recent = events.filter((e) => Date.parse(e.occurredAt) >= Date.now() - 28 * DAY);
    const weekdayShare = recent.filter((e) => e.userAgent === DESKTOP).length / recent.length;
    expect(shares.platform[0].desktop).toBeCloseTo(weekdayShare * 100, 0);
    expect(shares.platform[0].mobile).toBeCloseTo((1 - weekdayShare) * 100, 0);
    expect(shares.browser[0].desktop[0].chrome).toBe(100);
    expect(shares.os[0].mobile[0].ios).toBe(100);
    expect(Math.abs(est.body.meta.responses_sampled[String(zone)] - recent.length)).toBeLessThanOrEqual(3);
  }, 60_000);

  it('refuses a query it cannot forecast with the parameter named, and an unknown zone with 404', async () => {
    const missing = await acct.live.get(`/v2/reports/forecast/display?${query({ priority: '' })}`);
    expect(expectError(missing, 400, 'v2').parameters).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'priority' })]));
    const backwards = await acct.live.get(`/v2/reports/forecast/display?${query({ end_date: date(monday - DAY) })}`);
    expect(expectError(backwards, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'end_date' })]);
    const typo = await acct.live.get(`/v2/reports/forecast/display?${query()}&priorty=house`);
    expect(expectError(typo, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'priorty', type: 'unknown_field' })]);
    expectError(await acct.live.get(`/v2/reports/forecast/display?${query({ zone_id: 999_999_999 })}`), 404, 'v2');
    expectError(await acct.live.get('/v2/reports/display-platform-estimate'), 400, 'v2');
    expectError(await acct.live.post('/v2/reports/forecast/display', {}), 501, 'v2');
  });
});
