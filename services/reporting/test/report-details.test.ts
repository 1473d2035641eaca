import { expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { expectReferenceShape } from '../../../gateway/test/support/openapi';
import { admin } from '../../../gateway/test/support/platform';
import { EventKind, recordEvents, servingEvent } from './events-fixtures';

const q = (params: Record<string, string | number | boolean>) => new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

describe('click and conversion details, geo summary, event logs', () => {
  let acct: TestAccount;
  const now = Date.now();
  const today = new Date(now).toISOString().slice(0, 10);
  beforeAll(async () => {
    acct = await newAccount();
    await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
    const a = acct.id;
    const clicks = Array.from({ length: 12 }, (_, i) =>
      servingEvent({
        account: a, id: `clk${i}:click`, kind: EventKind.CLICK, occurredAt: new Date(now - (i + 1) * 60_000).toISOString(),
        zone: i % 2 ? 11 : 12, campaign: i % 3 ? 41 : 0, adItem: 21, placement: 31, ip: `203.0.113.${i + 1}`, country: i < 8 ? 'CA' : 'US', region: 'ON', city: 'Toronto',
        referrer: 'https://news.example/story', userAgent: '=cmd|Mozilla', pricingModel: 'cpc', price: '0.50', currency: 'USD',
      }),
    );
    const conversions = [
      servingEvent({ account: a, id: 'conv1', kind: EventKind.CONVERSION, occurredAt: new Date(now - 30_000).toISOString(), zone: 11, campaign: 41, adItem: 21, placement: 31, ip: '2001:db8:1:2:3:4:5:6', country: 'US', conversionValue: '35.75', conversionReference: 'order-77' }),
      servingEvent({ account: a, id: 'conv2', kind: EventKind.CONVERSION, occurredAt: new Date(now - 40_000).toISOString(), zone: 12, campaign: 0, adItem: 22, placement: 32 }),
    ];
    const impressions = Array.from({ length: 5 }, (_, i) => servingEvent({ account: a, id: `imp${i}:impression`, kind: EventKind.IMPRESSION, zone: 11, country: i < 3 ? 'BR' : '' }));
    await recordEvents([...clicks, ...conversions, ...impressions]);
  });

  test('click details: newest first, paged with has_more, masked addresses, filtered by zone or campaign', async () => {
    const first = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 5 })}`);
    expect(first.status).toBe(200);
    expectReferenceShape('/v2/reports/click-details', 'get', first.body);
    expect(first.body).toMatchObject({ object: 'click_detail_report', url: '/v2/reports/click-details', meta: { limit: 5, offset: 0, has_more: true, timezone: 'UTC' } });
    expect(first.body.data).toHaveLength(5);
    expect(first.body.data[0]).toMatchObject({
      zone: 12, campaign: null, advertisement: { type: 'ad_item', id: 21 }, ip: '203.0.113.xxx', country_code: 'CA', country: 'Canada', region: 'ON', city: 'Toronto',
    });
    expect(first.body.data[0].click_date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(first.body.data[0].clicked_at).toMatch(/\+00:00$/);
    const times = first.body.data.map((d: any) => d.clicked_at);
    expect([...times].sort().reverse()).toEqual(times);
    const last = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 5, offset: 10 })}`);
    expect(last.body.data).toHaveLength(2);
    expect(last.body.meta.has_more).toBe(false);
    const zone11 = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 100, filter_type: 'zone', filter_ids: '11' })}`);
    expect(zone11.body.data).toHaveLength(6);
    expect(zone11.body.data.every((d: any) => d.zone === 11)).toBe(true);
    const camp = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'today', limit: 100, filter_type: 'campaign', filter_ids: '41' })}`);
    expect(camp.body.data).toHaveLength(8);
    const ny = await acct.live.get(`/v2/reports/click-details?${q({ preset: 'last-24-hours', timezone: 'America/New_York', limit: 1 })}`);
    expect(ny.body.data[0].clicked_at).toMatch(/-0[45]:00$/);
    // A test key sees no clicks.
    expect((await acct.test.get(`/v2/reports/click-details?${q({ preset: 'today' })}`)).body.data).toEqual([]);
  });

  test('conversion details: value and reference, IPv6 masked, filtered by ad item or placement', async () => {
    const res = await acct.live.get(`/v2/reports/conversion-details?${q({ preset: 'today' })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/conversion-details', 'get', res.body);
    expect(res.body.object).toBe('conversion_detail_report');
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data[0]).toMatchObject({ zone: 11, campaign: 41, advertisement: { type: 'ad_item', id: 21 }, ip: '2001:db8:1:2:xxxx', country: 'United States', value: 35.75, transaction_id: 'order-77' });
    expect(res.body.data[1]).toMatchObject({ zone: 12, campaign: null, value: null, transaction_id: null });
    for (const [type, id] of [['ad-item', 22], ['placement', 32], ['zone', 12]] as const) {
      const f = await acct.live.get(`/v2/reports/conversion-details?${q({ preset: 'today', filter_type: type, filter_ids: id })}`);
      expect({ type, n: f.body.data.length }).toEqual({ type, n: 1 });
    }
  });

  test('detail reports refuse bad input naming the parameter', async () => {
    const cases: [string, Record<string, string | number>, string][] = [
      ['click-details', { preset: 'today', filter_type: 'ad-item', filter_ids: '1' }, 'filter_type'],
      ['click-details', { preset: 'today', filter_ids: '1' }, 'filter_type'],
      ['click-details', { preset: 'today', filter_type: 'zone' }, 'filter_ids'],
      ['click-details', { preset: 'today', filter_type: 'zone', filter_ids: 'a,b' }, 'filter_ids'],
      ['click-details', { preset: 'today', limit: 101 }, 'limit'],
      ['click-details', { preset: 'today', offset: -1 }, 'offset'],
      ['click-details', {}, 'preset'],
      ['click-details', { preset: 'today', vast: 'maybe' }, 'vast'],
      ['conversion-details', { preset: 'today', timezone: 'Nowhere/City' }, 'timezone'],
      ['conversion-details', { preset: 'today', filter_type: 'advertiser', filter_ids: '1' }, 'filter_type'],
      ['conversion-details', { from: '2026-01-01T00:00:00+00:00', to: '2026-01-02T00:00:00+01:00' }, 'to'],
    ];
    for (const [path, params, field] of cases) {
      const body = expectError(await acct.live.get(`/v2/reports/${path}?${q(params)}`), 400, 'v2');
      expect({ path, params, field: paramFor(body, field).field }).toEqual({ path, params, field });
    }
  });

  test('geo summary: details keyed by country code, only events whose country is known', async () => {
    const res = await acct.live.get(`/v2/reports/geo-summary-report?${q({ type: 'zone', preset: 'today' })}`);
    expect(res.status).toBe(200);
    expectReferenceShape('/v2/reports/geo-summary-report', 'get', res.body);
    expect(res.body).toMatchObject({ object: 'geo_summary_report', url: '/v2/reports/geo-summary-report', meta: { type: 'zone', timezone: 'UTC' } });
    const byZone = Object.fromEntries(res.body.data.map((d: any) => [d.id, d.details]));
    expect(byZone).toEqual({
      11: { BR: { impressions: 3, clicks: 0, conversions: 0 }, CA: { impressions: 0, clicks: 4, conversions: 0 }, US: { impressions: 0, clicks: 2, conversions: 1 } },
      12: { CA: { impressions: 0, clicks: 4, conversions: 0 }, US: { impressions: 0, clicks: 2, conversions: 0 } },
    });
    const overview = await acct.test.get(`/v2/reports/geo-summary-report?${q({ type: 'overview', preset: 'today' })}`);
    expect(overview.body.data).toEqual([{ type: 'overview', id: acct.id, details: {} }]);
    paramFor(expectError(await acct.live.get(`/v2/reports/geo-summary-report?${q({ preset: 'today' })}`), 400, 'v2'), 'type');
    paramFor(expectError(await acct.live.get(`/v2/reports/geo-summary-report?${q({ type: 'zone', preset: 'today', period: 'day' })}`), 400, 'v2'), 'period');
  });

  test('event logs: one link per day, each a CSV of that day\'s raw events with their hour', async () => {
    const list = await acct.live.get(`/v2/event-logs?${q({ log_type: 'display_clicks', from: today, to: today })}`);
    expect(list.status).toBe(200);
    expectReferenceShape('/v2/event-logs', 'get', list.body);
    expect(list.body).toEqual({ object: 'event_logs', url: '/v2/event-logs', data: { [today]: `/v2/event-logs/display_clicks/${today}.csv` }, meta: { total: 1 } });
    const csv = await acct.live.get(list.body.data[today]);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('event_id,hour,occurred_at,publisher,zone,advertiser,campaign,ad_item,placement,ip,country,referrer,user_agent,pricing_model,price,currency,cost,conversion_value,conversion_reference');
    // Clicks of the last minutes; some may have fallen on yesterday (UTC) right after midnight.
    expect(lines.length - 1).toBe(12 - (await acct.live.get(`/v2/reports/click-details?${q({ preset: 'yesterday', limit: 100 })}`)).body.data.length);
    expect(lines[1]).toMatch(/^clk\d+:click,\d{4}-\d{2}-\d{2} \d{2}:00,/);
    expect(lines[1]).toContain(",203.0.113.xxx,");
    // A user agent starting with '=' cannot become a spreadsheet formula.
    expect(lines[1]).toContain(',"\'=cmd|Mozilla",');
    expect(lines[1]).toContain(',cpc,0.500000,USD,0.500000000,,');
    const week = await acct.live.get(`/v2/event-logs?${q({ log_type: 'display_impressions', from: '2026-01-01', to: '2026-01-07' })}`);
    expect(week.body.meta.total).toBe(7);
    expect((await acct.test.get(`/v2/event-logs/display_clicks/${today}.csv`)).text.trim().split('\r\n')).toHaveLength(1);
    for (const [params, field] of [
      [{}, 'log_type'], [{ log_type: 'display_views' }, 'log_type'], [{ log_type: 'display_clicks', from: '2026-02-30' }, 'from'],
      [{ log_type: 'display_clicks', from: '2026-01-01', to: '2026-03-01' }, 'to'], [{ log_type: 'display_clicks', to: '2026-01-01' }, 'from'],
    ] as [Record<string, string>, string][]) {
      expect(paramFor(expectError(await acct.live.get(`/v2/event-logs?${q(params)}`), 400, 'v2'), field).field).toBe(field);
    }
    expectError(await acct.live.get('/v2/event-logs/display_clicks/latest.csv'), 404, 'v2');
  });
});
