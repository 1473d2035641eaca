import { expectError, newAccount, paramFor, type TestAccount } from '../../../gateway/test/support/api';
import { admin } from '../../../gateway/test/support/platform';
import { EventKind, recordEvents, reportingDb, servingEvent, waitFor } from './events-fixtures';

const today = () => new Date().toISOString().slice(0, 10);

describe('custom reports: report configurations, generated results, schedules', () => {
  let acct: TestAccount;
  const config = { name: 'Zone 11 items', type: 'ad-item', period: 'day', date: { preset: 'today', timezone: 'UTC' }, filters: { zones: [11] }, columns: ['impressions', 'clicks'] };
  beforeAll(async () => {
    acct = await newAccount();
    await admin('set-limits', '--account', String(acct.id), '--reporting', '100000');
    const events = [];
    for (let i = 0; i < 4; i++) {
      events.push(servingEvent({ account: acct.id, id: `cr${i}:impression`, kind: EventKind.IMPRESSION, zone: 11, adItem: 21 + (i % 2), pricingModel: 'cpm', price: '4', currency: 'USD' }));
      events.push(servingEvent({ account: acct.id, id: `cr${i}:click`, kind: EventKind.CLICK, zone: i < 2 ? 11 : 12, adItem: 21 }));
    }
    await recordEvents(events);
  });

  const waitDone = (path: string) =>
    waitFor(`${path} to finish`, async () => {
      const res = await acct.live.get(path);
      return ['success', 'error'].includes(res.body.status) ? res.body : undefined;
    }, 20_000);

  test('CRUD under both names: /v2/custom-reports and /v2/reports/report-configurations are the same resources', async () => {
    const created = await acct.live.post('/v2/custom-reports', config);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'report_configuration', self: `/v2/reports/report-configurations/${created.body.id}`, ...config,
      filters: { zones: [11] }, exclude_publisher_ad_items: false, exclude_campaign_ad_items: false, exclude_channel_stats: false, require_channel_stats: false,
    });
    const id = created.body.id;
    expect((await acct.live.get(`/v2/reports/report-configurations/${id}`)).body).toEqual(created.body);
    const renamed = await acct.live.put(`/v2/custom-reports/${id}`, { name: 'Renamed', date: { preset: 'last-7-days', timezone: 'America/New_York' } });
    expect(renamed.body).toMatchObject({ id, name: 'Renamed', type: 'ad-item', date: { preset: 'last-7-days', timezone: 'America/New_York' } });
    const list = await acct.live.get('/v2/reports/report-configurations?limit=100');
    expect(list.body).toMatchObject({ object: 'list', has_more: false });
    expect(list.body.data.map((c: any) => c.id)).toContain(id);
    // The other mode does not see it.
    expectError(await acct.test.get(`/v2/custom-reports/${id}`), 404, 'v2');
    expect((await acct.live.del(`/v2/custom-reports/${id}`)).body).toEqual({ id, deleted: true });
    expectError(await acct.live.get(`/v2/reports/report-configurations/${id}`), 404, 'v2');
  });

  test('configurations are checked: every refusal names the field and stores nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...config, name: undefined }, 'name'],
      [{ ...config, type: 'banner' }, 'type'],
      [{ ...config, type: 'textad' }, 'type'],
      [{ ...config, period: 'hour' }, 'period'],
      [{ ...config, date: { preset: 'someday' } }, 'date.preset'],
      [{ ...config, date: { start: '2026-01-01T00:00:00+00:00' } }, 'date.end'],
      [{ ...config, date: { start: '2026-01-01T00:00:00+00:00', end: '2026-02-01T00:00:00+01:00' } }, 'date.end'],
      [{ ...config, date: { start: '2025-01-01T00:00:00+00:00', end: '2026-02-01T00:00:00+00:00' } }, 'date.end'],
      [{ ...config, date: { preset: 'today', timezone: 'Atlantis/Capital' } }, 'date.timezone'],
      [{ ...config, date: {} }, 'date.preset'],
      [{ ...config, columns: ['impressions', 'likes'] }, 'columns'],
      [{ ...config, filters: { zones: ['x'] } }, 'filters'],
      [{ ...config, color: 'blue' }, 'color'],
      [{ ...config, exclude_channel_stats: true, require_channel_stats: true }, 'require_channel_stats'],
    ];
    const before = (await acct.live.get('/v2/custom-reports?limit=100')).body.data.length;
    for (const [body, field] of cases) {
      const res = await acct.live.post('/v2/custom-reports', body);
      const err = expectError(res, 400, 'v2');
      const p = (err.parameters ?? []).find((x: { field: string }) => x.field === field || x.field.startsWith(`${field}.`) || x.field.startsWith(`${field}[`));
      expect({ field, found: !!p, message: err.message }).toMatchObject({ field, found: true });
    }
    expect((await acct.live.get('/v2/custom-reports?limit=100')).body.data.length).toBe(before);
    expectError(await acct.live.put('/v2/custom-reports/999999999', { name: 'x' }), 404, 'v2');
  });

  test('generating a configuration queues a result that a worker fills with the report', async () => {
    const { body: c } = await acct.live.post('/v2/custom-reports', config);
    const queued = await acct.live.post(`/v2/custom-reports/${c.id}/generate`);
    expect(queued.status).toBe(200);
    expect(queued.body).toMatchObject({ object: 'generated_report_configuration', report_configuration: c.id, report_configuration_schedule: null, status: 'queued', name: config.name });
    const done = await waitDone(queued.body.self);
    expect(done.status).toBe('success');
    // The same numbers /v2/reports gives for the configuration's query.
    const direct = await acct.live.get('/v2/reports?type=ad-item&period=day&preset=today&zones=11&details=true');
    expect(done.report.data).toEqual(direct.body.data);
    expect(done.report.data.map((d: any) => [d.id, d.summary.impressions, d.summary.clicks])).toEqual([[21, 2, 2], [22, 2, 0]]);
    expect(done.report.meta).toMatchObject({ type: 'ad-item', period: 'day', timezone: 'UTC' });
    const all = await acct.live.get('/v2/reports/report-configurations/generated');
    expect(all.body.data.map((g: any) => g.id)).toContain(queued.body.id);
    const mine = await acct.live.get(`/v2/custom-reports/${c.id}/generated?limit=5`);
    expect(mine.body).toMatchObject({ object: 'list', has_more: false, data: [expect.objectContaining({ id: queued.body.id, status: 'success' })] });
    expect(mine.body.data[0].report).toBeUndefined();
    expectError(await acct.live.post('/v2/custom-reports/999999999/generate'), 404, 'v2');
    expectError(await acct.live.get(`/v2/custom-reports/${c.id}/generated/999999999`), 404, 'v2');
    expectError(await acct.test.get(queued.body.self), 404, 'v2');
    expectError(await acct.live.get(`/v2/custom-reports/${c.id}/generated?limit=101`), 400, 'v2');
  });

  test('a daily schedule starting today produces its result once, listed under the schedule', async () => {
    const { body: c } = await acct.live.post('/v2/custom-reports', config);
    const s = await acct.live.post(`/v2/custom-reports/${c.id}/schedules`, { name: 'Daily', frequency: 'DAILY', recipients: [5], start_at: today(), name_suffix: 'REPORT_NUMBER' });
    expect(s.status).toBe(200);
    const tomorrow = new Date(Date.parse(`${today()}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect(s.body).toMatchObject({
      object: 'report_configuration_schedule', report_configuration: c.id, name: 'Daily', frequency: 'DAILY', active: true, send_as: 'LINK',
      display_as: { details: true, summary: false }, next_report_at: `${tomorrow}T00:00:00+00:00`,
    });
    const listPath = `/v2/reports/report-configurations/${c.id}/schedules/${s.body.id}/generated`;
    const first = await waitFor('the scheduled result', async () => {
      const res = await acct.live.get(listPath);
      return res.body.data.length ? res.body.data[0] : undefined;
    });
    expect(first).toMatchObject({ report_configuration: c.id, report_configuration_schedule: s.body.id, name: 'Daily #1' });
    const done = await waitDone(first.self);
    expect(done).toMatchObject({ status: 'success', display_as: { details: true, summary: false } });
    // Later scheduler passes find today's occurrence already queued.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await acct.live.get(listPath)).body.data).toHaveLength(1);
    expect((await acct.live.get(`/v2/custom-reports/${c.id}/schedules/${s.body.id}`)).body.send_count).toBe(1);
    const paused = await acct.live.put(`/v2/custom-reports/${c.id}/schedules/${s.body.id}`, { active: false });
    expect(paused.body).toMatchObject({ active: false, next_report_at: null });

    paramFor(expectError(await acct.live.post(`/v2/custom-reports/${c.id}/schedules`, { name: 'Old', frequency: 'DAILY', recipients: [5], start_at: '2020-01-01' }), 400, 'v2'), 'start_at');
    paramFor(expectError(await acct.live.post(`/v2/custom-reports/${c.id}/schedules`, { name: 'Hourly', frequency: 'HOURLY', recipients: [5] }), 400, 'v2'), 'frequency');
    paramFor(expectError(await acct.live.post(`/v2/custom-reports/${c.id}/schedules`, { name: 'Nobody', frequency: 'WEEKLY' }), 400, 'v2'), 'recipients');
    expectError(await acct.live.post('/v2/custom-reports/999999999/schedules', { name: 'x', frequency: 'DAILY', recipients: [5] }), 404, 'v2');
    // Deleting the configuration takes its schedules and results along.
    await acct.live.del(`/v2/custom-reports/${c.id}`);
    expectError(await acct.live.get(`/v2/custom-reports/${c.id}/schedules/${s.body.id}`), 404, 'v2');
    expectError(await acct.live.get(first.self), 404, 'v2');
  });

  test('VAST configurations live under /v2/vast-custom-reports with the VAST report types', async () => {
    paramFor(expectError(await acct.live.post('/v2/vast-custom-reports', { ...config, type: 'geo-target' }), 400, 'v2'), 'type');
    const { body: c } = await acct.live.post('/v2/vast-custom-reports', { ...config, type: 'overview' });
    expect(c).toMatchObject({ object: 'report_configuration', self: `/v2/vast-custom-reports/${c.id}` });
    // Display and VAST configurations are separate collections.
    expectError(await acct.live.get(`/v2/custom-reports/${c.id}`), 404, 'v2');
    const queued = await acct.live.post(`/v2/vast-custom-reports/${c.id}/generate`);
    const done = await waitDone(queued.body.self);
    expect(done.report.data).toEqual([expect.objectContaining({ type: 'overview', id: acct.id, summary: expect.objectContaining({ impressions: 0 }) })]);
  });

  test('a result whose worker died mid-way (lease expired) is taken over and finished', async () => {
    const { body: c } = await acct.live.post('/v2/custom-reports', config);
    const db = reportingDb();
    try {
      const [row] = await db('generated_reports')
        .insert({ account_id: acct.id, mode: 'live', configuration_id: c.id, name: 'orphan', status: 'running', attempts: 1, lease_owner: 'dead-replica', lease_expires_at: new Date(Date.now() - 1000) })
        .returning('id');
      const done = await waitDone(`/v2/custom-reports/${c.id}/generated/${row.id}`);
      expect(done.status).toBe('success');
    } finally {
      await db.destroy();
    }
  });
});
