/**
 * Paths the published AdButler clients call: a literal path segment always wins over `{id}` (walked
 * over every such pair of the reference OpenAPI), the list of every report schedule, and report dates
 * that are bounded, real and never answered with a 500 or SQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { newAccount, type TestAccount } from './support/api';
import { ROOT } from './support/platform';

const REFERENCE = path.resolve(ROOT, '../shared/reference/adbutler-v2-openapi.json');
let acct: TestAccount;
beforeAll(async () => {
  acct = await newAccount();
});

/** Every GET path of the reference with a literal segment where a sibling path of the same length has `{param}`. */
function literalSiblings(): { path: string; literal: string }[] {
  const paths = Object.keys(JSON.parse(fs.readFileSync(REFERENCE, 'utf8')).paths as Record<string, unknown>);
  const out: { path: string; literal: string }[] = [];
  const spec = JSON.parse(fs.readFileSync(REFERENCE, 'utf8')).paths as Record<string, Record<string, unknown>>;
  for (const p of paths) {
    if (!spec[p].get || p.includes('{')) continue;
    const segs = p.split('/');
    for (const q of paths) {
      const other = q.split('/');
      if (q === p || other.length !== segs.length) continue;
      const differ = segs.map((s, i) => (s === other[i] ? -1 : i)).filter((i) => i >= 0);
      if (differ.length === 1 && /^\{.+\}$/.test(other[differ[0]])) out.push({ path: p, literal: segs[differ[0]] });
    }
  }
  return out;
}

const maybe = fs.existsSync(REFERENCE) ? test : test.skip;

maybe('a literal path segment of the reference is never taken for an {id}', async () => {
  const pairs = literalSiblings();
  expect(pairs.length).toBeGreaterThan(5);
  const taken: string[] = [];
  for (const { path: p, literal } of pairs) {
    const res = await acct.live.get(`/v2${p}`);
    if (res.status === 404 && new RegExp(`with id '?${literal}'?`).test(String(res.body?.message))) taken.push(`${p}: ${res.body.message}`);
    expect(res.status).not.toBe(500);
  }
  expect(taken).toEqual([]);
}, 60_000);

test('GET /v2/reports/report-configurations/schedules lists every schedule, filtered by report_config', async () => {
  const config = (name: string) => acct.live.post('/v2/reports/report-configurations', { name, type: 'overview', period: 'day', date: { preset: 'last-7-days' } });
  const [a, b] = [await config('Weekly A'), await config('Weekly B')];
  expect(a.status).toBe(200);
  const schedule = (c: number, name: string) => acct.live.post(`/v2/reports/report-configurations/${c}/schedules`, { name, frequency: 'WEEKLY', recipients: [1] });
  const sa = await schedule(a.body.id, 'to ops');
  const sb = await schedule(b.body.id, 'to sales');
  expect(sa.status).toBe(200);
  expect(sb.status).toBe(200);
  const all = await acct.live.get('/v2/reports/report-configurations/schedules?limit=100');
  expect(all.status).toBe(200);
  expect(all.body).toMatchObject({ object: 'list', url: '/v2/reports/report-configurations/schedules' });
  expect(all.body.data.map((s: any) => s.id).sort()).toEqual([sa.body.id, sb.body.id].sort());
  const one = await acct.live.get(`/v2/reports/report-configurations/schedules?report_config=${b.body.id}`);
  expect(one.body.data.map((s: any) => s.id)).toEqual([sb.body.id]);
  const both = await acct.live.get(`/v2/reports/report-configurations/schedules?report_config=${a.body.id},${b.body.id}`);
  expect(both.body.data).toHaveLength(2);
  const bad = await acct.live.get('/v2/reports/report-configurations/schedules?report_config=x');
  expect(bad.status).toBe(400);
  expect(bad.body.parameters[0]).toMatchObject({ field: 'report_config', type: 'invalid_value' });
  // Another account sees none of them.
  const other = await newAccount();
  expect((await other.live.get('/v2/reports/report-configurations/schedules')).body.data).toEqual([]);
});

test.each([
  ['from=0000-06-01T00:00:00Z&to=0000-06-02T00:00:00Z', 'from', /from 2000 to 2100/],
  ['from=0001-06-01T00:00:00Z&to=0001-06-02T00:00:00Z', 'from', /from 2000 to 2100/],
  ['from=2026-02-30T00:00:00Z&to=2026-03-02T00:00:00Z', 'from', /does not exist/],
  ['from=2026-01-01T24:00:00Z&to=2026-03-02T00:00:00Z', 'from', /does not exist/],
  ['from=2026-01-01T00:00:00%2B15:00&to=2026-01-02T00:00:00%2B15:00', 'from', /offset/],
])('report dates %s are refused with 400 naming %s', async (q, field, message) => {
  const res = await acct.live.get(`/v2/reports?type=overview&period=day&${q}`);
  expect(res.status).toBe(400);
  expect(res.body.parameters[0]).toMatchObject({ field });
  expect(res.body.parameters[0].message).toMatch(message);
  if (res.body.parameters.length === 1) expect(res.body.message).toMatch(message);
});

test("an offset mismatch is reported as 'from' and 'to', naming 'to'", async () => {
  const res = await acct.live.get('/v2/reports?type=overview&period=day&from=2026-02-01T00:00:00Z&to=2026-03-01T00:00:00%2B02:00');
  expect(res.status).toBe(400);
  expect(res.body.message).toBe("'from' and 'to' must carry the same offset.");
  expect(res.body.parameters[0]).toMatchObject({ field: 'to' });
});

test('a report configuration with an out-of-range year is refused at save, naming date.start', async () => {
  const res = await acct.live.post('/v2/reports/report-configurations', { name: 'Year zero', type: 'overview', period: 'day', date: { start: '0000-01-01T00:00:00Z', end: '0000-01-02T00:00:00Z' } });
  expect(res.status).toBe(400);
  expect(JSON.stringify(res.body)).not.toMatch(/select|insert|where|\$\d/i);
  expect(res.body.parameters.map((p: any) => p.field)).toContain('date.start');
});

test('type=geo-target reports count the events of placements with a geo target, by target, with each event carrying its country', async () => {
  const api = acct.live;
  const ok = async (res: Promise<{ status: number; body: any }>) => {
    const r = await res;
    if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
  const schedule = await ok(api.post('/v2/schedules', { start_date: yesterday }));
  const zone = await ok(api.post('/v2/zones/standard', { name: 'Geo zone', width: 300, height: 250 }));
  const geo = await ok(api.post('/v2/geo-targets', { name: 'UK only', areas: [{ country: 'GB' }] }));
  const item = await ok(api.post('/v2/ad-items/image', { name: 'UK ad', width: 300, height: 250, creative_url: 'https://cdn.example/uk.png', location: 'https://shop.example/' }));
  await ok(api.post('/v2/placements', { advertisement: { id: item.id, type: 'image_ad_item' }, zone: { id: zone.id, type: 'standard_zone' }, schedule: schedule.id, geo_target: geo.id }));
  const serving = `http://127.0.0.1:${process.env.SERVING_PORT}`;
  const http = await import('node:http');
  const get = (p: string, headers: Record<string, string> = {}) =>
    new Promise<any>((resolve, reject) =>
      http.get(`${serving}${p}`, { headers }, (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve(res.statusCode === 200 && t.startsWith('{') ? JSON.parse(t) : { status: res.statusCode }));
      }).on('error', reject),
    );
  const path = `/adserve/;ID=${acct.id};setID=${zone.id};type=json;ip=81.2.69.142`;
  for (let i = 0; i < 100 && (await get(path)).status !== 'SUCCESS'; i++) await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 3; i++) {
    const d = await get(path);
    expect(d.status).toBe('SUCCESS');
    // The viewer's device fires the impression from its own address (the one ip= named).
    const pixel = new URL(d.placements.placement_1.accupixel_url);
    expect((await get(`${pixel.pathname}${pixel.search}`, { 'X-Forwarded-For': '81.2.69.142' })).status).toBe(200);
  }
  const report = async () => (await acct.live.get('/v2/reports?type=geo-target&period=day&preset=today')).body;
  let body: any;
  for (let i = 0; i < 100; i++) {
    body = await report();
    if (body.data?.[0]?.summary?.responses >= 4 && body.data[0].summary.impressions >= 3) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(body.data).toHaveLength(1);
  expect(body.data[0]).toMatchObject({ type: 'geo-target', id: geo.id });
  expect(body.data[0].summary).toMatchObject({ responses: 4, impressions: 3 });
  // The same events carry their country: the geo summary of the zone finds them in GB.
  const summary = (await acct.live.get(`/v2/reports/geo-summary-report?type=zone&preset=today&zones=${zone.id}`)).body;
  expect(summary.data[0].details.GB).toMatchObject({ impressions: 3 });
}, 60_000);

test('GET /v2/data-targets lists the data lists, as the reference names them', async () => {
  const own = await newAccount();
  const made = await own.live.post('/v2/data-lists', { label: 'Loyal customers' });
  expect(made.status).toBe(200);
  const res = await own.live.get('/v2/data-targets');
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ object: 'list', url: '/v2/data-targets', has_more: false });
  expect(res.body.data).toEqual([expect.objectContaining({ object: 'data_list', id: made.body.id, self: `/v2/data-lists/${made.body.id}`, label: 'Loyal customers' })]);
  expect((await own.live.post('/v2/data-targets', { label: 'x' })).status).toBe(501);
  expect((await (await newAccount()).live.get('/v2/data-targets')).body.data).toEqual([]);
});
