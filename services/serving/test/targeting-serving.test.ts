/**
 * Serving honours every targeting rule: for each, an ad serves where the rule allows it and not where
 * it forbids it, on the real serving process fed by inventory's stream. The decision-debug answer names
 * the rule that excluded an ad.
 */
import { newAccount, type Client, type TestAccount } from '../../../gateway/test/support/api';
import { closeServeAgent, serveGet, within } from './serving-fixtures';

const serving = () => `http://127.0.0.1:${process.env.SERVING_PORT}`;
let acct: TestAccount;
let api: Client;
let schedule: number;

const UA = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  desktop: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
};

beforeAll(async () => {
  acct = await newAccount();
  api = acct.live;
  const s = await api.post('/v2/schedules', { start_date: new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ') });
  schedule = s.body.id;
});
afterAll(() => closeServeAgent());

async function ok(res: Promise<{ status: number; body: any }>) {
  const r = await res;
  if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

async function zone(extra: Record<string, unknown> = {}) {
  return (await ok(api.post('/v2/zones/standard', { name: 'Zone', width: 300, height: 250, ...extra }))).id as number;
}

/** An image ad placed in a zone (or on a channel) with the given placement fields. */
async function placed(where: { zone?: number; channel?: number }, fields: Record<string, unknown> = {}, sched = schedule) {
  const item = await ok(api.post('/v2/ad-items/image', { name: 'Ad', width: 300, height: 250, creative_url: 'https://cdn.example/a.png', location: 'https://shop.example/' }));
  const placement = await ok(
    api.post('/v2/placements', {
      advertisement: { id: item.id, type: 'image_ad_item' },
      ...(where.zone ? { zone: { id: where.zone, type: 'standard_zone' } } : { channel: where.channel }),
      schedule: sched,
      ...fields,
    }),
  );
  return { item: item.id as number, placement: placement.id as number };
}

const adserve = (z: number, q = '', headers: Record<string, string> = {}) => serveGet(serving(), `/adserve/;ID=${acct.id};setID=${z};type=json${q}`, headers);
const served = async (z: number, q = '', headers: Record<string, string> = {}) => (await adserve(z, q, headers)).body?.placements?.placement_1?.banner_id as string | undefined;

/** Waits until the zone serves the item for the allowed request (the target reached serving), then checks the forbidden one. */
async function allowsAndForbids(z: number, item: number, allowed: string, forbidden: string, headers: { allowed?: Record<string, string>; forbidden?: Record<string, string> } = {}) {
  await within(5000, async () => (await served(z, allowed, headers.allowed)) === String(item));
  for (let i = 0; i < 5; i++) {
    expect(await served(z, allowed, headers.allowed)).toBe(String(item));
    expect((await adserve(z, forbidden, headers.forbidden)).body).toEqual({ status: 'NO_ADS' });
  }
}

test('geo: by ip= from two countries', async () => {
  const z = await zone();
  const geo = await ok(api.post('/v2/geo-targets', { name: 'UK only', areas: [{ country: 'GB' }] }));
  const { item } = await placed({ zone: z }, { geo_target: geo.id });
  await allowsAndForbids(z, item, ';ip=81.2.69.142', ';ip=8.8.8.8');
});

test('day-parting: the hours of the target zone (DST included) decide', async () => {
  // The current hour in New York, as its own range, and a range that excludes it.
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', weekday: 'long', hour: '2-digit', hourCycle: 'h23' }).formatToParts(new Date());
  const day = parts.find((p) => p.type === 'weekday')!.value.toLowerCase();
  const hour = Number(parts.find((p) => p.type === 'hour')!.value);
  const pad = (h: number) => String(h).padStart(2, '0');
  const now = `${pad(hour)}:00:00-${hour === 23 ? '24' : pad(hour + 1)}:00:00`;
  const notNow = hour >= 12 ? '00:00:00-01:00:00' : '22:00:00-23:00:00';
  const mk = async (range: string) => {
    const dp = await ok(api.post('/v2/day-parting', { name: 'Hours', use_member_timezone: true, timezone: 'America/New_York', ranges: { [day]: [range] } }));
    const sched = await ok(api.post('/v2/schedules', { start_date: '2020-01-01 00:00:00', day_parting_id: dp.id }));
    const z = await zone();
    return { z, ...(await placed({ zone: z }, {}, sched.id)) };
  };
  const open = await mk(now);
  const closed = await mk(notNow);
  await within(5000, async () => (await served(open.z)) === String(open.item));
  // The closed zone's ad exists and is excluded by day-parting, which the debug answer says once its
  // placement has reached serving (it was made after the open one's, and may arrive a poll later).
  const debug = () => acct.live.get(`/v2/adserve?ID=${acct.id}&setID=${closed.z}&type=json&debug=1`);
  await within(5000, async () => (await debug()).body?.excluded?.length > 0);
  const answer = await debug();
  expect(answer.status).toBe(200);
  expect(answer.body.excluded).toEqual([expect.objectContaining({ placement: closed.placement, rule: 'day_parting' })]);
  expect((await adserve(closed.z)).body).toEqual({ status: 'NO_ADS' });
});

test('platform: mobile and desktop user agents', async () => {
  const z = await zone();
  const pt = await ok(api.post('/v2/platform-targets', { name: 'Phones', platform: 'mobile' }));
  const { item } = await placed({ zone: z }, { platform_target: pt.id });
  await allowsAndForbids(z, item, `;ua=${encodeURIComponent(UA.iphone)}`, `;ua=${encodeURIComponent(UA.desktop)}`);
  // Without ua= the request's own User-Agent counts.
  expect(await served(z, '', { 'User-Agent': UA.iphone })).toBe(String(item));
  expect((await adserve(z, '', { 'User-Agent': UA.desktop })).body.status).toBe('NO_ADS');
});

test('keywords: required keywords with a wildcard, and an exclusion', async () => {
  const z = await zone();
  const { item } = await placed({ zone: z }, { keywords: 'paint*, -cheap', keywords_match_method: 'required' });
  await allowsAndForbids(z, item, ';kw=painting,walls', ';kw=garden');
  expect((await adserve(z, ';kw=paint,cheap')).body.status).toBe('NO_ADS');
});

test('postal code: from the request data', async () => {
  const z = await zone();
  const pc = await ok(api.post('/v2/postal-code-targets', { label: 'Tokushima', locations: [{ country: 'JP', postal_codes: ['770-0806'] }] }));
  const { item } = await placed({ zone: z }, { postal_code_target: pc.id });
  await allowsAndForbids(z, item, `;_abdk=${encodeURIComponent('postal_code:770-0806,country:JP')}`, `;_abdk=${encodeURIComponent('postal_code:100-0001,country:JP')}`);
});

test('data keys: target logic over _abdk_json', async () => {
  const z = await zone();
  await ok(api.post('/v2/data-keys', { name: 'plan', type: 'STRING' }));
  const dkt = await ok(api.post('/v2/data-key-targets', { name: 'Gold', target: '["OR", {"plan": {"=": "gold"}}]' }));
  const { item } = await placed({ zone: z }, { data_key_target_id: dkt.id });
  await allowsAndForbids(z, item, `;_abdk_json=${encodeURIComponent('{"plan":"gold"}')}`, `;_abdk_json=${encodeURIComponent('{"plan":"free"}')}`);
});

test('list target: the data key value on the list', async () => {
  const z = await zone();
  const list = await ok(api.post('/v2/data-lists', { label: 'VIPs', key: 'user', values: ['u1', 'u2'] }));
  const lt = await ok(api.post('/v2/list-targets', { label: 'VIPs only', data_list: list.id }));
  const { item } = await placed({ zone: z }, { list_target: lt.id });
  await allowsAndForbids(z, item, ';_abdk=user:u2', ';_abdk=user:u9');
});

test('frequency cap: 2 views an hour per visitor (first-party cookie), and user_freq for server-side callers', async () => {
  const z = await zone();
  const { item, placement } = await placed({ zone: z }, { per_user_view_limit: 2, per_user_view_period: 1, per_user_view_period_unit: 'hours' });
  await within(5000, async () => (await served(z)) === String(item));
  // The iframe form is the impression: each shown ad counts in the visitor's cookie.
  let cookie = '';
  const iframe = async () => {
    const res = await serveGet(serving(), `/serve/iframe?account=${acct.id}&zone=${z}`, cookie ? { Cookie: cookie } : {});
    const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]);
    const jar = new Map(cookie ? cookie.split('; ').map((c) => [c.split('=')[0], c] as const) : []);
    for (const c of set) jar.set(c.split('=')[0], c);
    cookie = [...jar.values()].join('; ');
    return res.text.includes('cdn.example/a.png');
  };
  expect(await iframe()).toBe(true);
  expect(await iframe()).toBe(true);
  expect(await iframe()).toBe(false);
  // Another visitor (no cookie) still sees it.
  expect(await served(z)).toBe(String(item));
  // A server-side caller passes user_freq: two views in a running window cap it, an expired window does not.
  const now = Math.floor(Date.now() / 1000);
  const freq = (views: number, expiry: number) => encodeURIComponent(JSON.stringify([{ placement_id: placement, start: now - 60, expiry, views }]));
  expect((await adserve(z, `;user_freq=${freq(2, now + 3000)}`)).body.status).toBe('NO_ADS');
  expect(await served(z, `;user_freq=${freq(2, now - 1)}`)).toBe(String(item));
  expect(await served(z, `;user_freq=${freq(1, now + 3000)}`)).toBe(String(item));
});

test('unique delivery: one page never shows the same ad in two zones', async () => {
  const top = await zone({ unique_delivery: true });
  const side = await zone({ unique_delivery: true });
  const a = await placed({ zone: top });
  const b = await placed({ zone: top });
  await ok(api.post('/v2/placements', { advertisement: { id: a.item, type: 'image_ad_item' }, zone: { id: side, type: 'standard_zone' }, schedule }));
  await ok(api.post('/v2/placements', { advertisement: { id: b.item, type: 'image_ad_item' }, zone: { id: side, type: 'standard_zone' }, schedule }));
  // Both ads eligible in both zones (serving holds all four placements), not merely one of them.
  const eligible = async (z: number) => (await api.get(`/v2/adserve?ID=${acct.id}&setID=${z}&type=json&debug=1`)).body.eligible?.length ?? 0;
  await within(5000, async () => (await eligible(side)) === 2 && (await eligible(top)) === 2);
  for (let i = 0; i < 10; i++) {
    const pid = `page-${Date.now()}-${i}`;
    const first = await served(top, `;pid=${pid}`);
    const second = await served(side, `;pid=${pid}`);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
  }
});

test('channels: a placement on a channel serves in every zone assigned to it, and nowhere else', async () => {
  const assigned = await zone();
  const other = await zone();
  const channel = await ok(api.post('/v2/channels', { name: 'Sports' }));
  await ok(api.post('/v2/channel-zone-assignments', { channel: channel.id, zone: { id: assigned, type: 'standard_zone' } }));
  const { item } = await placed({ channel: channel.id });
  await within(5000, async () => (await served(assigned)) === String(item));
  expect((await adserve(other)).body.status).toBe('NO_ADS');
  // The channel report counts its responses (and require/exclude_channel_stats select them).
  for (let i = 0; i < 3; i++) expect(await served(assigned)).toBe(String(item));
  await within(10_000, async () => {
    const report = await api.get('/v2/reports?type=channel&period=day&preset=today&summary=true');
    const row = report.body.data?.find((d: any) => d.id === channel.id);
    return report.status === 200 && row?.summary?.responses >= 4;
  }, 500);
  const excluded = await api.get('/v2/reports?type=overview&period=day&preset=today&exclude_channel_stats=true');
  const required = await api.get('/v2/reports?type=overview&period=day&preset=today&require_channel_stats=true');
  expect(required.body.data[0].summary.responses).toBeGreaterThanOrEqual(4);
  expect(excluded.status).toBe(200);
  // Archiving the channel stops it.
  expect((await api.get(`/v2/channels/${channel.id}/archive`)).status).toBe(200);
  await within(5000, async () => (await adserve(assigned)).body.status === 'NO_ADS');
});
