/**
 * VAST forecasts and the VAST platform estimate through the gateway: four weeks of VAST responses of a
 * VAST zone recorded through reporting's real ingest (display decisions alongside, which must not
 * count), a capped sponsorship VAST placement made through the API, and the forecast of a proposed
 * placement for next week, by zone and by VAST channel, in the reference's shapes.
 */
import crypto from 'node:crypto';
import { newAccount, expectError, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { EventKind, recordEvents, servingEvent } from '../../reporting/test/events-fixtures';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const weekend = (t: number) => [0, 6].includes(new Date(t).getUTCDay());
const DESKTOP = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describe('VAST forecast endpoints', () => {
  let acct: TestAccount;
  let zone: number;
  let channel: number;
  let displayZone: number;
  let displayChannel: number;
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  const monday = today + (((8 - new Date(today).getUTCDay()) % 7) || 7) * DAY;
  const date = (t: number) => new Date(t).toISOString().slice(0, 10);
  const params = (over: Record<string, string | number> = {}) =>
    Object.entries({ priority: 'standard', delivery_pacing: 'default', start_date: date(monday), end_date: date(monday + 6 * DAY), ...over }).map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join('&');

  beforeAll(async () => {
    acct = await newAccount();
    const publisher = (await acct.live.post('/v2/publishers', { name: 'Video publisher' })).body.id;
    zone = (await acct.live.post('/v2/vast-zones', { name: 'Pre-roll', publisher })).body.id;
    channel = (await acct.live.post('/v2/vast-channels', { name: 'Sports' })).body.id;
    expect((await acct.live.post('/v2/vast-channel-zone-assignments', { vast_channel: channel, vast_zone: { id: zone } })).status).toBe(200);
    displayZone = (await acct.live.post('/v2/zones/standard', { name: 'Display', width: 300, height: 250 })).body.id;
    displayChannel = (await acct.live.post('/v2/channels', { name: 'Display channel' })).body.id;
  });

  it('says when a VAST zone has no history, rather than projecting zeros', async () => {
    const res = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params()}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/forecast/vast', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'vast_forecast', url: '/v2/reports/forecast/vast', data: { confidence: 'low', impressions_projected: { total: null, daily_breakdown: [] } } });
    expect(res.body.data.confidence_reasons[0].reason).toMatch(/no history/);
  });

  it('projects next week from four weeks of VAST history, less what a capped VAST sponsorship takes; display decisions do not count', async () => {
    const events = [];
    for (let t = today - 28 * DAY; t < Math.floor(now / HOUR) * HOUR; t += HOUR) {
      for (let i = 0; i < (weekend(t) ? 1 : 3); i++) {
        events.push(servingEvent({ id: `${crypto.randomUUID()}:response`, kind: EventKind.RESPONSE, account: acct.id, zone, vast: true, occurredAt: new Date(t + i * 60_000).toISOString(), userAgent: weekend(t) ? IPHONE : DESKTOP }));
      }
      // Display decisions recorded against the same zone id: a VAST forecast reads VAST traffic only.
      events.push(servingEvent({ id: `${crypto.randomUUID()}:response`, kind: EventKind.RESPONSE, account: acct.id, zone, vast: false, occurredAt: new Date(t + 30 * 60_000).toISOString(), userAgent: IPHONE }));
    }
    for (let i = 0; i < events.length; i += 1000) await recordEvents(events.slice(i, i + 1000));

    // A sponsorship VAST placement (its schedule caps it at 20 views a day, with the schedule's geo target).
    const geo = await acct.live.post('/v2/geo-targets', { name: 'Canada', areas: [{ country: 'CA' }] });
    expect(geo.status).toBe(200);
    const item = (await acct.live.post('/v2/vast-ad-items', { name: 'Sponsor spot', duration: '00:00:15' })).body.id;
    const schedule = await acct.live.post('/v2/vast-schedules', { start_date: '2026-01-01 00:00:00', day_cap_views_limit: 20, day_cap_type: 'views', geo_target: geo.body.id });
    expect(schedule.status).toBe(200);
    const placed = await acct.live.post('/v2/vast-placements', { zone, advertisement: { id: item, type: 'vast_ad_item' }, schedule: schedule.body.id, priority: 'sponsorship', cost: { cpm: 12 } });
    expect(placed.status).toBe(200);

    const res = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params()}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/forecast/vast', 'get', res.body);
    const data = res.body.data;
    const expected = (t: number) => (weekend(t) ? 24 : 72) - 20;
    expect(data.impressions_projected.daily_breakdown).toEqual([0, 1, 2, 3, 4, 5, 6].map((d) => ({ date: date(monday + d * DAY), impressions: expected(monday + d * DAY) })));
    expect(data.impressions_projected.total).toBe(5 * 52 + 2 * 4);
    expect(data.competing_ads).toEqual({
      campaigns: [],
      ad_items: [{
        id: item, placement_id: placed.body.id, name: 'Sponsor spot', type: 'ad_item', vast_zone_id: zone, vast_channel_id: null,
        start_at: expect.stringMatching(/^2026-01-01T00:00:00/), end_at: null, projected_impressions: 140, priority: 'sponsorship',
        delivery_pacing: 'default', serve_method: 'weight', weight: 1, cpm: 12, quota_lifetime: 0, quota_daily: 20,
        platform_target_id: null, geo_target_id: geo.body.id,
      }],
    });
    expect(data.backtest).toEqual({ mape: 0, days: 7 });
    expect(data.confidence).toBe('high');

    // The same zone through its VAST channel forecasts alike.
    const viaChannel = await acct.live.get(`/v2/reports/forecast/vast/channel?channel_id=${channel}&${params()}`);
    expect(viaChannel.status).toBe(200);
    expectReferenceShape('/v2/reports/forecast/vast/channel', 'get', viaChannel.body);
    expect(viaChannel.body).toMatchObject({ object: 'vast_channel_forecast', url: '/v2/reports/forecast/vast/channel', data: { impressions_projected: { total: 268 } } });
    // An auction bid at the bottom of the standard tier takes what is left; a daily quota caps it.
    const capped = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params({ serve_method: 'auction', cpm: 3, quota_daily: 30 })}`);
    expect(capped.body.data.impressions_projected.total).toBe(5 * 30 + 2 * 4);

    // Platforms of the VAST responses only: weekdays desktop Chrome, weekends iPhones (the display ones, all iPhones, left out).
    const est = await acct.live.get(`/v2/reports/vast-platform-estimate?zone_ids=${zone}`);
    expect(est.status).toBe(200);
    expectReferenceShape('/v2/reports/vast-platform-estimate', 'get', est.body);
    expect(est.body.object).toBe('vast_platform_estimator');
    const shares = est.body.data[0][String(zone)][0];
    const recent = events.filter((e) => e.vast && Date.parse(e.occurredAt) >= Date.now() - 28 * DAY);
    const weekdayShare = recent.filter((e) => e.userAgent === DESKTOP).length / recent.length;
    expect(shares.platform[0].desktop).toBeCloseTo(weekdayShare * 100, 0);
    expect(shares.browser[0].desktop[0].chrome).toBe(100);
    expect(shares.os[0].mobile[0].ios).toBe(100);
    expect(Math.abs(est.body.meta.responses_sampled[String(zone)] - recent.length)).toBeLessThanOrEqual(3);
  }, 90_000);

  it('refuses what it cannot forecast with the parameter named; zones and channels of the other medium or account are 404', async () => {
    const missing = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params({ priority: '' })}`);
    expect(expectError(missing, 400, 'v2').parameters).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'priority' })]));
    const backwards = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params({ end_date: date(monday - DAY) })}`);
    expect(expectError(backwards, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'end_date' })]);
    const noZone = await acct.live.get(`/v2/reports/forecast/vast?${params()}`);
    expect(expectError(noZone, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'zone_id' })]);
    const badCpm = await acct.live.get(`/v2/reports/forecast/vast/channel?channel_id=${channel}&${params({ cpm: 'lots' })}`);
    expect(expectError(badCpm, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'cpm' })]);
    const typo = await acct.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params()}&priorty=house`);
    expect(expectError(typo, 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'priorty', type: 'unknown_field' })]);

    expectError(await acct.live.get(`/v2/reports/forecast/vast?zone_id=999999999&${params()}`), 404, 'v2');
    expectError(await acct.live.get(`/v2/reports/forecast/vast?zone_id=${displayZone}&${params()}`), 404, 'v2');
    expectError(await acct.live.get(`/v2/reports/forecast/vast/channel?channel_id=${displayChannel}&${params()}`), 404, 'v2');
    expectError(await acct.live.get(`/v2/reports/forecast/display?zone_id=${zone}&${params()}`), 404, 'v2');
    expectError(await acct.live.get(`/v2/reports/vast-platform-estimate?zone_ids=${displayZone}`), 404, 'v2');
    expectError(await acct.live.get(`/v2/reports/display-platform-estimate?zone_ids=${zone}`), 404, 'v2');
    expect(expectError(await acct.live.get('/v2/reports/vast-platform-estimate'), 400, 'v2').parameters).toEqual([expect.objectContaining({ field: 'zone_ids' })]);
    expectError(await acct.live.post('/v2/reports/forecast/vast', {}), 501, 'v2');

    const other = await newAccount();
    expectError(await other.live.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params()}`), 404, 'v2');
    expectError(await other.live.get(`/v2/reports/forecast/vast/channel?channel_id=${channel}&${params()}`), 404, 'v2');
    expectError(await other.live.get(`/v2/reports/vast-platform-estimate?zone_ids=${zone}`), 404, 'v2');
    // The test key is the same account's other mode: it sees none of the live zones.
    expectError(await acct.test.get(`/v2/reports/forecast/vast?zone_id=${zone}&${params()}`), 404, 'v2');
  });
});
